"""The job rows of the job store: a job added ``running``, finished, listed, deleted, and the
running rows of dead processes marked ``interrupted`` (:meth:`JobRepository.reconcile`). A part
of :class:`~hud_gym.jobs.store.Store`, over its :class:`~hud_gym.jobs.database.Database`."""

from __future__ import annotations

import shutil
import sqlite3
from typing import Any

from hud_gym.jobs.database import Database
from hud_gym.jobs.errors import JobNotFoundError
from hud_gym.jobs.liveness import ProcessIdentity, is_running
from hud_gym.jobs.recording import Recording
from hud_gym.jobs.rows import to_json, to_time
from hud_gym.jobs.trajectory_repository import RUNNING
from hud_gym.trajectory import utc_now

__all__ = ["JobRepository"]


class JobRepository:
    """The job writes and reads of the job store (see the module docstring).

    Args:
        db: the store's database.
        recording: the store's failed recordings (a job's end settles and counts them).
    """

    def __init__(self, db: Database, recording: Recording) -> None:
        self.db = db
        self.recording = recording

    # ------------------------------------------------------------------ jobs

    def insert_job(
        self, job_id: str, name: str, metadata: dict[str, Any], created_at: Any, owner: ProcessIdentity | None
    ) -> None:
        """Add a ``running`` job owned by ``owner`` (the process whose exit ends it)."""
        with self.db.write() as conn:
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
                self.recording.settle_unrecorded(job_id)
            except Exception:  # noqa: BLE001  (the job's own status comes first)
                pass
            note = self.recording.failures.summary(job_id)
            error = f"{error}; {note}" if error and note else error or note
        condition = " AND status = 'running'" if only_if_running else ""
        return self.db.status_write(
            lambda conn: (
                conn.execute(
                    f"UPDATE jobs SET status = ?, error = ?, ended_at = ? WHERE id = ?{condition}",
                    (status, error, None if status == RUNNING else to_time(utc_now()), job_id),
                ).rowcount
                > 0
            )
        )

    def rename_job(self, job_id: str, name: str) -> None:
        """Give a job a new name."""
        with self.db.write() as conn:
            conn.execute("UPDATE jobs SET name = ? WHERE id = ?", (name, job_id))

    def update_job_metadata(self, job_id: str, metadata: dict[str, Any]) -> None:
        """Replace a job's metadata."""
        with self.db.write() as conn:
            conn.execute("UPDATE jobs SET metadata = ? WHERE id = ?", (to_json(metadata), job_id))

    def job_row(self, id_or_prefix: str) -> sqlite3.Row:
        """The job whose id is ``id_or_prefix`` or the only one that starts with it.

        Raises:
            JobNotFoundError: no such job, or the prefix is ambiguous (the message lists matches).
        """
        if not isinstance(id_or_prefix, str) or not id_or_prefix:
            raise JobNotFoundError(f"a job id must be a non-empty string, got {id_or_prefix!r}")
        conn = self.db.conn()
        row = conn.execute("SELECT * FROM jobs WHERE id = ?", (id_or_prefix,)).fetchone()
        if row is not None:
            return row
        escaped = id_or_prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = conn.execute("SELECT * FROM jobs WHERE id LIKE ? ESCAPE '\\' LIMIT 6", (escaped + "%",)).fetchall()
        if len(rows) == 1:
            return rows[0]
        if not rows:
            raise JobNotFoundError(f"no job with id {id_or_prefix!r} in {self.db.db_path}")
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
        return self.db.conn().execute(query).fetchall()

    def delete_job(self, job_id: str) -> None:
        """Remove a job, its trajectories, steps and screenshots."""
        with self.db.write() as conn:
            conn.execute("DELETE FROM jobs WHERE id = ?", (job_id,))
        shutil.rmtree(self.db.images_dir / job_id, ignore_errors=True)

    # ------------------------------------------------------------------ interrupted runs

    def reconcile(self, job_id: str | None = None) -> int:
        """Mark ``interrupted`` the running trajectories whose writer process no longer runs (and the
        running jobs whose owner no longer runs); returns how many trajectories changed.

        An interrupted trajectory keeps its steps; its ``ended_at`` is its last step's end (or its
        start), its reward ``None``.
        """
        if self.db.read_only:
            return 0
        conn = self.db.conn()
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

        self.db.status_write(mark)
        return len(dead)
