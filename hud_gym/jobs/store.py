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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from hud_gym.errors import HudGymError
from hud_gym.jobs.database import DB_NAME, Database
from hud_gym.jobs.errors import StoreError, StoreReadOnlyError
from hud_gym.jobs.failures import RecordFailures
from hud_gym.jobs.images import EXTENSIONS, ImageFormat, screenshot_of, write_image
from hud_gym.jobs.liveness import ProcessIdentity, current_process, is_running
from hud_gym.jobs.paths import resolve_home
from hud_gym.jobs.reserve import is_disk_full
from hud_gym.jobs.rows import (
    INITIAL_OBSERVATION_REF,
    load_json,
    step_from_row,
    to_json,
    to_time,
    trajectory_from_row,
)
from hud_gym.trajectory import Trajectory, TrajectoryStep, utc_now

__all__ = ["DB_NAME", "JobNotFoundError", "Store", "StoreError", "StoreReadOnlyError", "TrajectoryNotFoundError", "get_store"]

RUNNING = "running"
_MARK_RECORD_ERROR = (
    "UPDATE trajectories SET status = 'record_error', reward = NULL, error = ?, ended_at = COALESCE(ended_at, ?) "
    "WHERE id = ? AND status IN ('running', 'ok', 'truncated')"
)


class JobNotFoundError(HudGymError, KeyError):
    """No job has this id (or id prefix)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "job not found"


class TrajectoryNotFoundError(HudGymError, KeyError):
    """No trajectory has this id."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "trajectory not found"


class Store(Database):
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

    def __init__(self, home: str | os.PathLike[str] | None = None, *, image_format: ImageFormat = "jpeg",
                 jpeg_quality: int = 85, read_only: bool | None = None) -> None:
        if image_format not in EXTENSIONS:
            raise ValueError(f"image_format must be one of {sorted(EXTENSIONS)}, got {image_format!r}")
        if not 1 <= jpeg_quality <= 100:
            raise ValueError(f"jpeg_quality must be in 1..100, got {jpeg_quality}")
        self.image_format: ImageFormat = image_format
        self.jpeg_quality = jpeg_quality
        self._failures = RecordFailures()
        super().__init__(resolve_home(home), read_only=read_only)

    def __repr__(self) -> str:
        return f"Store({str(self.home)!r}{', read_only=True' if self.read_only else ''})"

    # ------------------------------------------------------------------ runs that could not be recorded

    @contextmanager
    def _recording(self, job_id: str | None, trajectory_id: str) -> Iterator[None]:
        """The writes of one run: when one fails, the run ends ``record_error`` (now if possible)."""
        try:
            yield
        except (OSError, sqlite3.DatabaseError) as exc:
            if not self.read_only and not isinstance(exc, sqlite3.IntegrityError):
                self._failures.add(job_id or "", trajectory_id, exc)
                try:
                    self.settle_unrecorded(job_id)
                except Exception:  # noqa: BLE001  (tried again at close, at the job's end, at exit)
                    pass
            raise

    def settle_unrecorded(self, job_id: str | None = None) -> int:
        """Mark ``record_error`` (reward ``None``) the runs (of ``job_id``, or all) of this process
        whose recording failed and that are not marked yet; returns how many were marked."""
        pending = self._failures.unsettled(job_id)
        if not pending or self.read_only:
            return 0
        now = to_time(utc_now())

        def mark(conn: sqlite3.Connection) -> None:
            for trajectory_id, message in pending.items():
                conn.execute(_MARK_RECORD_ERROR, (message, now, trajectory_id))

        self._status_write(mark)
        self._failures.settled(list(pending))
        return len(pending)

    # ------------------------------------------------------------------ images

    def image_path(self, ref: str) -> Path:
        """The absolute path of a stored image reference."""
        return self.images_dir / ref

    def _image_ref(self, job_id: str, trajectory_id: str, name: str) -> str:
        return f"{job_id}/{trajectory_id}/{name}.{EXTENSIONS[self.image_format]}"

    def save_image(self, job_id: str, trajectory_id: str, name: str, observation: Any) -> str | None:
        """Write the observation's screenshot as ``<job>/<trajectory>/<name>.<ext>``; returns the
        reference (``None`` when the observation has no screenshot)."""
        screenshot = screenshot_of(observation)
        if screenshot is None:
            return None
        self.require_writable()
        self._reserve.check()
        ref = self._image_ref(job_id, trajectory_id, name)
        try:
            write_image(self.image_path(ref), screenshot, self.image_format, self.jpeg_quality)
        except OSError as exc:
            if is_disk_full(exc):
                self._reserve.note_full()
            raise
        return ref

    # ------------------------------------------------------------------ jobs

    def insert_job(self, job_id: str, name: str, metadata: dict[str, Any], created_at: Any,
                   owner: ProcessIdentity | None) -> None:
        """Add a ``running`` job owned by ``owner`` (the process whose exit ends it)."""
        with self._write() as conn:
            conn.execute(
                "INSERT INTO jobs (id, name, metadata, created_at, status, owner_host, owner_pid, owner_started) "
                "VALUES (?, ?, ?, ?, 'running', ?, ?, ?)",
                (job_id, name, to_json(metadata), to_time(created_at), owner and owner.host, owner and owner.pid,
                 owner and owner.started),
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
        return self._status_write(lambda conn: conn.execute(
            f"UPDATE jobs SET status = ?, error = ?, ended_at = ? WHERE id = ?{condition}",
            (status, error, None if status == RUNNING else to_time(utc_now()), job_id),
        ).rowcount > 0)

    def update_job_metadata(self, job_id: str, metadata: dict[str, Any]) -> None:
        """Replace a job's metadata."""
        with self._write() as conn:
            conn.execute("UPDATE jobs SET metadata = ? WHERE id = ?", (to_json(metadata), job_id))

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
        raise JobNotFoundError(f"job id prefix {id_or_prefix!r} is ambiguous: it matches {shown}"
                               + (", ..." if len(rows) > 5 else ""))

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

    # ------------------------------------------------------------------ trajectories: writes

    def start_trajectory(self, trajectory: Trajectory, job_id: str, *, initial_observation: Any = None,
                         writer: ProcessIdentity | None = None) -> str | None:
        """Add a ``running`` row for ``trajectory`` (steps are added by :meth:`add_step`) and write
        its reset screenshot; returns the screenshot's reference. When the screenshot cannot be
        written the row is still added (and ends ``record_error``) and the error raised."""
        writer = writer or current_process()
        with self._recording(job_id, trajectory.trajectory_id):
            image_error: OSError | None = None
            try:
                ref = self.save_image(job_id, trajectory.trajectory_id, "initial", initial_observation)
            except OSError as exc:
                ref, image_error = None, exc
            with self._write() as conn:
                conn.execute(
                    "INSERT INTO trajectories (id, job_id, group_id, rollout_index, task_id, task, seed, prompt, status, "
                    "started_at, metadata, initial_observation_ref, writer_host, writer_pid, writer_started) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?)",
                    (trajectory.trajectory_id, job_id, trajectory.group_id, trajectory.rollout_index, trajectory.task_id,
                     trajectory.task.model_dump_json() if trajectory.task else None, trajectory.seed, trajectory.prompt,
                     to_time(trajectory.started_at), to_json(trajectory.metadata), ref, writer.host, writer.pid,
                     writer.started),
                )
            if image_error is not None:
                raise image_error
        return ref

    def add_step(self, job_id: str, trajectory_id: str, step: TrajectoryStep, observation: Any = None,
                 end: Trajectory | None = None) -> str | None:
        """Write the step's screenshot and row (and, with ``end``, the trajectory's final fields, in
        the same transaction); returns the screenshot's reference."""
        with self._recording(job_id, trajectory_id):
            ref = self.save_image(job_id, trajectory_id, f"step-{step.index:04d}", observation)
            with self._write() as conn:
                _insert_step(conn, trajectory_id, step, ref)
                if end is not None:
                    _end(conn, end, only_if_running=True)
        return ref

    def end_trajectory(self, trajectory: Trajectory, *, only_if_running: bool = True) -> bool:
        """Store the trajectory's final fields (status, reward, error, grade, final response, end
        time, metadata); True if the row changed. ``only_if_running`` leaves an already ended row
        alone; a ``record_error`` row keeps that status."""
        with self._recording(trajectory.job_id, trajectory.trajectory_id):
            return self._status_write(lambda conn: _end(conn, trajectory, only_if_running=only_if_running))

    def delete_trajectory(self, job_id: str, trajectory_id: str) -> None:
        """Remove a trajectory, its steps and screenshots."""
        import shutil

        self._status_write(lambda conn: conn.execute("DELETE FROM trajectories WHERE id = ?", (trajectory_id,)))
        shutil.rmtree(self.images_dir / job_id / trajectory_id, ignore_errors=True)

    def save_trajectory(self, trajectory: Trajectory, job_id: str) -> None:
        """Store a whole :class:`Trajectory` in ``job_id``: its final fields win over what is stored
        (the row is created if missing; its metadata is merged into the stored one), missing steps
        are added (with their in-memory screenshots, if any), and each step's ``policy_trace`` is
        stored (as JSON) when set."""
        with self._recording(job_id, trajectory.trajectory_id):
            ref = None
            if trajectory.initial_observation is not None:
                ref = self.save_image(job_id, trajectory.trajectory_id, "initial", trajectory.initial_observation)
            step_refs = [
                self.save_image(job_id, trajectory.trajectory_id, f"step-{s.index:04d}", s.observation)
                if s.observation is not None and s.observation_ref is None else None
                for s in trajectory.steps
            ]
            writer = current_process()
            with self._write() as conn:
                conn.execute(
                    "INSERT OR IGNORE INTO trajectories (id, job_id, group_id, rollout_index, task_id, task, seed, prompt, "
                    "status, started_at, metadata, writer_host, writer_pid, writer_started) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (trajectory.trajectory_id, job_id, trajectory.group_id, trajectory.rollout_index, trajectory.task_id,
                     trajectory.task.model_dump_json() if trajectory.task else None, trajectory.seed, trajectory.prompt,
                     trajectory.status, to_time(trajectory.started_at), to_json(trajectory.metadata), writer.host,
                     writer.pid, writer.started),
                )
                conn.execute(
                    "UPDATE trajectories SET group_id = ?, rollout_index = ?, seed = COALESCE(?, seed), "
                    "initial_observation_ref = COALESCE(initial_observation_ref, ?) WHERE id = ?",
                    (trajectory.group_id, trajectory.rollout_index, trajectory.seed, ref, trajectory.trajectory_id),
                )
                for step, step_ref in zip(trajectory.steps, step_refs):
                    conn.execute(_INSERT_STEP.replace("INSERT", "INSERT OR IGNORE", 1),
                                 _step_values(trajectory.trajectory_id, step, step_ref or _relative(self, step.observation_ref)))
                    if step.policy_trace is not None:
                        conn.execute("UPDATE steps SET policy_trace = ? WHERE trajectory_id = ? AND idx = ?",
                                     (to_json(step.policy_trace), trajectory.trajectory_id, step.index))
                stored = conn.execute("SELECT metadata FROM trajectories WHERE id = ?", (trajectory.trajectory_id,)).fetchone()
                base = {k: v for k, v in load_json(stored["metadata"], {}).items() if k != "ended_by"}
                _end(conn, trajectory, only_if_running=False, base_metadata=base)

    # ------------------------------------------------------------------ trajectories: reads

    def load_trajectories(self, job_id: str, *, status: str | Sequence[str] | None = None,
                          include_running: bool = False, steps: bool = True) -> list[Trajectory]:
        """The job's trajectories, oldest first, steps included (``steps=False``: without steps).

        ``observation_ref`` of each step and ``metadata["initial_observation_ref"]`` are absolute
        paths. Running trajectories are left out unless ``include_running`` (they have no
        :data:`~hud_gym.trajectory.Status` yet: they come back with status ``ok`` and
        ``ended_at=None``, and ``metadata["running"] = True``).
        """
        statuses = [status] if isinstance(status, str) else list(status or [])
        query = "SELECT * FROM trajectories WHERE job_id = ?"
        params: list[Any] = [job_id]
        if statuses:
            query += f" AND status IN ({', '.join('?' * len(statuses))})"
            params += statuses
        elif not include_running:
            query += " AND status != 'running'"
        query += " ORDER BY started_at, rowid"
        with self._read() as conn:
            rows = conn.execute(query, params).fetchall()
            step_rows: dict[str, list[sqlite3.Row]] = {}
            if steps and rows:
                for step_row in conn.execute(
                    "SELECT s.* FROM steps s JOIN trajectories t ON t.id = s.trajectory_id WHERE t.job_id = ? "
                    "ORDER BY s.trajectory_id, s.idx", (job_id,)
                ):
                    step_rows.setdefault(step_row["trajectory_id"], []).append(step_row)
        return [self._trajectory(row, step_rows.get(row["id"], [])) for row in rows]

    def load_trajectory(self, trajectory_id: str) -> Trajectory:
        """One trajectory by id, steps included.

        Raises:
            TrajectoryNotFoundError: no such trajectory.
        """
        with self._read() as conn:
            row = conn.execute("SELECT * FROM trajectories WHERE id = ?", (trajectory_id,)).fetchone()
            if row is None:
                raise TrajectoryNotFoundError(f"no trajectory with id {trajectory_id!r} in {self.db_path}")
            step_rows = conn.execute("SELECT * FROM steps WHERE trajectory_id = ? ORDER BY idx",
                                     (trajectory_id,)).fetchall()
        return self._trajectory(row, step_rows)

    def _trajectory(self, row: sqlite3.Row, step_rows: list[sqlite3.Row]) -> Trajectory:
        steps = [step_from_row(s, self.image_path) for s in step_rows]
        if row["status"] == RUNNING:
            patched = dict(row)
            patched["status"] = "ok"
            patched["metadata"] = to_json({**load_json(row["metadata"], {}), "running": True})
            return trajectory_from_row(patched, steps, self.image_path)
        return trajectory_from_row(row, steps, self.image_path)

    def trajectory_summaries(self, job_id: str) -> list[dict[str, Any]]:
        """Every trajectory row of the job without its steps (for analytics and listings): the
        row's columns plus ``steps`` (the number of steps)."""
        rows = self._conn().execute(
            "SELECT t.id, t.group_id, t.rollout_index, t.task_id, t.seed, t.status, t.reward, t.error, t.grade, "
            "t.started_at, t.ended_at, (SELECT COUNT(*) FROM steps s WHERE s.trajectory_id = t.id) AS steps "
            "FROM trajectories t WHERE t.job_id = ? ORDER BY t.started_at, t.rowid", (job_id,)
        ).fetchall()
        return [{**dict(r), "grade": load_json(r["grade"])} for r in rows]

    def status_counts(self, job_id: str) -> dict[str, int]:
        """How many of the job's trajectories have each status (``running`` included)."""
        rows = self._conn().execute("SELECT status, COUNT(*) AS n FROM trajectories WHERE job_id = ? GROUP BY status",
                                    (job_id,)).fetchall()
        return {r["status"]: r["n"] for r in rows}

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
            f"SELECT id, writer_host, writer_pid, writer_started FROM trajectories WHERE status = 'running'{where}", params
        ).fetchall()
        dead = [r["id"] for r in running if not is_running(r["writer_host"], r["writer_pid"], r["writer_started"])]
        jobs = conn.execute(
            f"SELECT id, owner_host, owner_pid, owner_started FROM jobs WHERE status = 'running'"
            f"{' AND id = ?' if job_id else ''}", params
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


_INSERT_STEP = (
    "INSERT INTO steps (trajectory_id, idx, actions, reward, terminated, truncated, text, status, error, info, timings, "
    "started_at, ended_at, observation_ref, policy_trace) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _step_values(trajectory_id: str, step: TrajectoryStep, ref: str | None) -> tuple[Any, ...]:
    return (
        trajectory_id, step.index, to_json(step.actions), None if step.reward is None else _finite(step.reward),
        int(step.terminated),
        int(step.truncated), step.text, step.status, step.error, to_json(step.info), to_json(step.timings),
        to_time(step.started_at), to_time(step.ended_at), ref,
        to_json(step.policy_trace) if step.policy_trace is not None else None,
    )


def _insert_step(conn: sqlite3.Connection, trajectory_id: str, step: TrajectoryStep, ref: str | None) -> None:
    conn.execute(_INSERT_STEP, _step_values(trajectory_id, step, ref))


def _end(conn: sqlite3.Connection, trajectory: Trajectory, *, only_if_running: bool,
         base_metadata: dict[str, Any] | None = None) -> bool:
    metadata = {**(base_metadata or {}), **trajectory.metadata}
    metadata = {k: v for k, v in metadata.items() if k not in (INITIAL_OBSERVATION_REF, "running")}
    cursor = conn.execute(
        "UPDATE trajectories SET status = ?, reward = ?, error = ?, final_response = ?, grade = ?, ended_at = ?, "
        "metadata = ? WHERE id = ? AND status != 'record_error'" + (" AND status = 'running'" if only_if_running else ""),
        (trajectory.status, None if trajectory.reward is None else _finite(trajectory.reward), trajectory.error,
         trajectory.final_response, to_json(trajectory.grade) if trajectory.grade is not None else None,
         to_time(trajectory.ended_at or utc_now()), to_json(metadata), trajectory.trajectory_id),
    )
    return cursor.rowcount > 0


def _finite(value: float) -> float | None:
    value = float(value)
    return value if np.isfinite(value) else None


def _relative(store: Store, ref: str | None) -> str | None:
    if ref is None:
        return None
    path = Path(ref)
    try:
        return str(path.relative_to(store.images_dir)) if path.is_absolute() else ref
    except ValueError:
        return ref


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


def settle_all_stores() -> None:
    """:meth:`Store.settle_unrecorded` in every store of this process (best effort, at exit)."""
    with _stores_lock:
        stores = list(_stores.values())
    for store in stores:
        try:
            store.settle_unrecorded()
        except Exception:  # noqa: BLE001  (exit is best effort; dead writers' rows read back interrupted)
            pass
