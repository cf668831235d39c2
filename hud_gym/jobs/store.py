"""The job store: one SQLite database (WAL) plus screenshot files, under ``HUD_GYM_HOME``.

Layout::

    $HUD_GYM_HOME/hud_gym.db                                    jobs, trajectories, steps
    $HUD_GYM_HOME/images/<job id>/<trajectory id>/initial.jpg     the reset screenshot
    $HUD_GYM_HOME/images/<job id>/<trajectory id>/step-0000.jpg   the screenshot after step 0
    $HUD_GYM_HOME/.space-reserve                                  1 MiB kept for status writes on a full disk

Durability, concurrency, read-only stores and full disks: see :mod:`hud_gym.jobs.database`.

- An image file is written (atomically) before the row that references it.
- A run whose write fails ends ``record_error`` (reward ``None``) at once, or, if even that cannot
  be written, when its env closes, its job finishes or the process exits
  (:mod:`hud_gym.jobs.failures`); the job's ``error`` counts the runs not recorded whole.
- A trajectory row is ``running`` until its episode ends. :meth:`Store.reconcile` (run by every
  load) marks the running rows of a writer process that no longer runs ``interrupted``, and so
  the running jobs of an owner process that no longer runs (see :mod:`hud_gym.jobs.liveness`).

Example:
    >>> store = Store()                                 # $HUD_GYM_HOME or the per-user data dir
    >>> store.db_path, store.images_dir                 # doctest: +SKIP
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

from hud_gym.jobs.database import DB_NAME
from hud_gym.jobs.errors import JobNotFoundError, StoreError, StoreReadOnlyError, TrajectoryNotFoundError
from hud_gym.jobs.liveness import ProcessIdentity, is_running
from hud_gym.jobs.paths import resolve_home
from hud_gym.jobs.rows import to_json, to_time
from hud_gym.jobs.trajectory_store import RUNNING, TrajectoryStore
from hud_gym.trajectory import utc_now

__all__ = [
    "DB_NAME",
    "JobNotFoundError",
    "Store",
    "StoreError",
    "StoreReadOnlyError",
    "TrajectoryNotFoundError",
    "get_store",
    "release_store",
]


class Store(TrajectoryStore):
    """The SQLite job store under ``home`` (default: :func:`~hud_gym.jobs.paths.resolve_home`).

    Args:
        home: the data directory (created if missing).
        image_format: how screenshots are written: ``"jpeg"`` (default, quality ``jpeg_quality``)
            or ``"png"`` (lossless, larger).
        jpeg_quality: JPEG quality, 1-100.
        read_only: ``None`` (default): read-write when this process can write the store, else
            read-only; ``True``: read-only; ``False``: read-write or :class:`StoreReadOnlyError`.

    Raises:
        StoreError: ``home`` is not a directory, the database is not a job store (or is damaged),
            or was written by a newer hud-gym (:class:`~hud_gym.jobs.schema.SchemaVersionError`).
    """

    def __repr__(self) -> str:
        return f"Store({str(self.home)!r}{', read_only=True' if self.read_only else ''})"

    # ------------------------------------------------------------------ jobs

    def insert_job(
        self, job_id: str, name: str, metadata: dict[str, Any], created_at: Any, owner: ProcessIdentity | None
    ) -> None:
        """Add a ``running`` job owned by ``owner`` (the process whose exit ends it)."""
        with self._write() as conn:
            conn.execute(
                "INSERT INTO jobs (id, name, metadata, created_at, status, owner_host, owner_pid, owner_started) "
                "VALUES (?, ?, ?, ?, 'running', ?, ?, ?)",
                (
                    job_id,
                    name,
                    to_json(metadata),
                    to_time(created_at),
                    owner and owner.host,
                    owner and owner.pid,
                    owner and owner.started,
                ),
            )

    def finish_job(self, job_id: str, status: str, error: str | None = None, *, only_if_running: bool = False) -> bool:
        """Set a job's final ``status`` (``completed``, ``failed``, ``interrupted``); True if changed.
        Its runs that could not be recorded are marked first, and counted in its ``error``."""
        if status not in ("completed", "failed", "interrupted", RUNNING):
            raise ValueError(f"job status must be completed, failed, interrupted or running, got {status!r}")
        if status != RUNNING:
            try:
                self.settle_unrecorded(job_id)
            except Exception:  # noqa: BLE001  (the job's own status comes first)
                pass
            note = self._failures.summary(job_id)
            error = f"{error}; {note}" if error and note else error or note
        condition = " AND status = 'running'" if only_if_running else ""
        return self._status_write(
            lambda conn: (
                conn.execute(
                    f"UPDATE jobs SET status = ?, error = ?, ended_at = ? WHERE id = ?{condition}",
                    (status, error, None if status == RUNNING else to_time(utc_now()), job_id),
                ).rowcount
                > 0
            )
        )

    def update_job_metadata(self, job_id: str, metadata: dict[str, Any]) -> None:
        """Replace a job's metadata."""
        with self._write() as conn:
            conn.execute("UPDATE jobs SET metadata = ? WHERE id = ?", (to_json(metadata), job_id))

    def rename_job(self, job_id: str, name: str) -> None:
        """Give a job a new name."""
        with self._write() as conn:
            conn.execute("UPDATE jobs SET name = ? WHERE id = ?", (name, job_id))

    def job_row(self, id_or_prefix: str) -> sqlite3.Row:
        """The job whose id is ``id_or_prefix`` or the only one that starts with it.

        Raises:
            JobNotFoundError: no such job, or the prefix is ambiguous (the message lists matches).
        """
        if not isinstance(id_or_prefix, str) or not id_or_prefix:
            raise JobNotFoundError(f"a job id must be a non-empty string, got {id_or_prefix!r}")
        conn = self._conn()
        row = conn.execute("SELECT * FROM jobs WHERE id = ?", (id_or_prefix,)).fetchone()
        if row is not None:
            return row
        escaped = id_or_prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = conn.execute("SELECT * FROM jobs WHERE id LIKE ? ESCAPE '\\' LIMIT 6", (escaped + "%",)).fetchall()
        if len(rows) == 1:
            return rows[0]
        if not rows:
            raise JobNotFoundError(f"no job with id {id_or_prefix!r} in {self.db_path}")
        shown = ", ".join(f"{r['id']} ({r['name']})" for r in rows[:5])
        raise JobNotFoundError(
            f"job id prefix {id_or_prefix!r} is ambiguous: it matches {shown}" + (", ..." if len(rows) > 5 else "")
        )

    def job_rows(self, limit: int | None = None) -> list[sqlite3.Row]:
        """Jobs, newest first."""
        query = "SELECT * FROM jobs ORDER BY created_at DESC, rowid DESC"
        if limit is not None:
            if limit < 0:
                raise ValueError(f"limit must be >= 0, got {limit}")
            query += f" LIMIT {int(limit)}"
        return self._conn().execute(query).fetchall()

    def delete_job(self, job_id: str) -> None:
        """Remove a job, its trajectories, steps and screenshots."""
        import shutil

        with self._write() as conn:
            conn.execute("DELETE FROM jobs WHERE id = ?", (job_id,))
        shutil.rmtree(self.images_dir / job_id, ignore_errors=True)

    # ------------------------------------------------------------------ interrupted runs

    def reconcile(self, job_id: str | None = None) -> int:
        """Mark ``interrupted`` the running trajectories whose writer process no longer runs (and the
        running jobs whose owner no longer runs); returns how many trajectories changed.

        An interrupted trajectory keeps its steps; its ``ended_at`` is its last step's end (or its
        start), its reward ``None``.
        """
        if self.read_only:
            return 0
        conn = self._conn()
        where = " AND job_id = ?" if job_id else ""
        params = (job_id,) if job_id else ()
        running = conn.execute(
            f"SELECT id, writer_host, writer_pid, writer_started FROM trajectories WHERE status = 'running'{where}",
            params,
        ).fetchall()
        dead = [r["id"] for r in running if not is_running(r["writer_host"], r["writer_pid"], r["writer_started"])]
        jobs = conn.execute(
            f"SELECT id, owner_host, owner_pid, owner_started FROM jobs WHERE status = 'running'"
            f"{' AND id = ?' if job_id else ''}",
            params,
        ).fetchall()
        dead_jobs = [r["id"] for r in jobs if not is_running(r["owner_host"], r["owner_pid"], r["owner_started"])]
        if not dead and not dead_jobs:
            return 0

        def mark(conn: sqlite3.Connection) -> None:
            for trajectory_id in dead:
                conn.execute(
                    "UPDATE trajectories SET status = 'interrupted', reward = NULL, "
                    "error = 'the process running this episode died before it ended', "
                    "ended_at = COALESCE((SELECT MAX(COALESCE(ended_at, started_at)) FROM steps WHERE trajectory_id = ?), "
                    "started_at) WHERE id = ? AND status = 'running'",
                    (trajectory_id, trajectory_id),
                )
            for dead_job in dead_jobs:
                conn.execute(
                    "UPDATE jobs SET status = 'interrupted', error = 'the process running this job died before it "
                    "finished', ended_at = COALESCE((SELECT MAX(COALESCE(ended_at, started_at)) FROM trajectories "
                    "WHERE job_id = ?), created_at) WHERE id = ? AND status = 'running'",
                    (dead_job, dead_job),
                )

        self._status_write(mark)
        return len(dead)


_stores: dict[Path, Store] = {}
_stores_lock = threading.Lock()


def get_store(home: str | os.PathLike[str] | None = None) -> Store:
    """The process's shared :class:`Store` for ``home`` (resolved now: ``$HUD_GYM_HOME`` or the
    per-user data dir), created on first use."""
    path = resolve_home(home)
    with _stores_lock:
        store = _stores.get(path)
        if store is None:
            store = _stores[path] = Store(path)
        return store


def release_store(home: str | os.PathLike[str] | None = None) -> None:
    """Close every connection of the process's store for ``home`` and forget it (its files stay):
    for a program (a test suite) that opens many stores and keeps threads that touched them."""
    path = resolve_home(home)
    with _stores_lock:
        store = _stores.pop(path, None)
    if store is not None:
        store.release()


def settle_all_stores() -> None:
    """:meth:`Store.settle_unrecorded` in every store of this process (best effort, at exit)."""
    with _stores_lock:
        stores = list(_stores.values())
    for store in stores:
        try:
            store.settle_unrecorded()
        except Exception:  # noqa: BLE001  (exit is best effort; dead writers' rows read back interrupted)
            pass
