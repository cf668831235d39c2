"""The trajectory repository of the job store: a run's row, written as it happens (``running``,
then its steps, then its end) or whole (:meth:`TrajectoryRepository.save_trajectory`), and read
back as :class:`~hud_gym.trajectory.Trajectory` objects. A part of
:class:`~hud_gym.jobs.store.Store`, over its :class:`~hud_gym.jobs.database.Database` and its
:class:`~hud_gym.jobs.recording.Recording` (screenshots, failed recordings)."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Sequence
from typing import Any

from hud_gym.jobs.database import Database
from hud_gym.jobs.errors import TrajectoryNotFoundError
from hud_gym.jobs.liveness import ProcessIdentity, current_process
from hud_gym.jobs.recording import Recording
from hud_gym.jobs.rows import load_json, step_from_row, to_json, trajectory_from_row
from hud_gym.jobs.trajectory_rows import INSERT_STEP, end_row, insert_row, insert_step, step_values
from hud_gym.trajectory import Trajectory, TrajectoryStep

__all__ = ["RUNNING", "TrajectoryRepository"]

RUNNING = "running"


class TrajectoryRepository:
    """The trajectory writes and reads of the job store (see the module docstring).

    Args:
        db: the store's database.
        recording: the store's screenshots and failed recordings.
    """

    def __init__(self, db: Database, recording: Recording) -> None:
        self.db = db
        self.recording = recording

    # ------------------------------------------------------------------ trajectories: writes

    def start_trajectory(
        self,
        trajectory: Trajectory,
        job_id: str,
        *,
        initial_observation: Any = None,
        writer: ProcessIdentity | None = None,
    ) -> str | None:
        """Add a ``running`` row for ``trajectory`` (steps are added by :meth:`add_step`) and write
        its reset screenshot; returns the screenshot's reference. When the screenshot cannot be
        written the row is still added (and ends ``record_error``) and the error raised."""
        writer = writer or current_process()
        with self.recording.guard(job_id, trajectory.trajectory_id):
            image_error: OSError | None = None
            try:
                ref = self.recording.save_image(job_id, trajectory.trajectory_id, "initial", initial_observation)
            except OSError as exc:
                ref, image_error = None, exc
            with self.db.write() as conn:
                insert_row(conn, trajectory, job_id, writer, status=RUNNING, initial_ref=ref)
            if image_error is not None:
                raise image_error
        return ref

    def add_step(
        self,
        job_id: str,
        trajectory_id: str,
        step: TrajectoryStep,
        observation: Any = None,
        end: Trajectory | None = None,
    ) -> str | None:
        """Write the step's screenshot and row (and, with ``end``, the trajectory's final fields, in
        the same transaction); returns the screenshot's reference."""
        with self.recording.guard(job_id, trajectory_id):
            ref = self.recording.save_image(job_id, trajectory_id, f"step-{step.index:04d}", observation)
            with self.db.write() as conn:
                insert_step(conn, trajectory_id, step, ref)
                if end is not None:
                    end_row(conn, end, only_if_running=True)
        return ref

    def end_trajectory(self, trajectory: Trajectory, *, only_if_running: bool = True) -> bool:
        """Store the trajectory's final fields (status, reward, error, grade, final response, end
        time, metadata); True if the row changed. ``only_if_running`` leaves an already ended row
        alone; a ``record_error`` row keeps that status."""
        with self.recording.guard(trajectory.job_id, trajectory.trajectory_id):
            return self.db.status_write(lambda conn: end_row(conn, trajectory, only_if_running=only_if_running))

    def delete_trajectory(self, job_id: str, trajectory_id: str) -> None:
        """Remove a trajectory, its steps and screenshots."""
        self.db.status_write(lambda conn: conn.execute("DELETE FROM trajectories WHERE id = ?", (trajectory_id,)))
        shutil.rmtree(self.db.images_dir / job_id / trajectory_id, ignore_errors=True)

    def save_trajectory(self, trajectory: Trajectory, job_id: str) -> None:
        """Store a whole :class:`Trajectory` in ``job_id``: its final fields win over what is stored
        (the row is created if missing; its metadata is merged into the stored one), missing steps
        are added (with their in-memory screenshots, if any), and each step's ``policy_trace`` is
        stored (as JSON) when set."""
        with self.recording.guard(job_id, trajectory.trajectory_id):
            ref = None
            if trajectory.initial_observation is not None:
                ref = self.recording.save_image(
                    job_id, trajectory.trajectory_id, "initial", trajectory.initial_observation
                )
            step_refs = [
                self.recording.save_image(job_id, trajectory.trajectory_id, f"step-{s.index:04d}", s.observation)
                if s.observation is not None and s.observation_ref is None
                else None
                for s in trajectory.steps
            ]
            writer = current_process()
            with self.db.write() as conn:
                insert_row(conn, trajectory, job_id, writer, status=trajectory.status, or_ignore=True)
                conn.execute(
                    "UPDATE trajectories SET group_id = ?, rollout_index = ?, seed = COALESCE(?, seed), "
                    "initial_observation_ref = COALESCE(initial_observation_ref, ?) WHERE id = ?",
                    (trajectory.group_id, trajectory.rollout_index, trajectory.seed, ref, trajectory.trajectory_id),
                )
                for step, step_ref in zip(trajectory.steps, step_refs, strict=True):
                    conn.execute(
                        INSERT_STEP.replace("INSERT", "INSERT OR IGNORE", 1),
                        step_values(
                            trajectory.trajectory_id,
                            step,
                            step_ref or self.recording.relative_ref(step.observation_ref),
                        ),
                    )
                    if step.policy_trace is not None:
                        conn.execute(
                            "UPDATE steps SET policy_trace = ? WHERE trajectory_id = ? AND idx = ?",
                            (to_json(step.policy_trace), trajectory.trajectory_id, step.index),
                        )
                stored = conn.execute(
                    "SELECT metadata FROM trajectories WHERE id = ?", (trajectory.trajectory_id,)
                ).fetchone()
                base = {k: v for k, v in load_json(stored["metadata"], {}).items() if k != "ended_by"}
                end_row(conn, trajectory, only_if_running=False, base_metadata=base)

    # ------------------------------------------------------------------ trajectories: reads

    def load_trajectories(
        self,
        job_id: str,
        *,
        status: str | Sequence[str] | None = None,
        include_running: bool = False,
        steps: bool = True,
    ) -> list[Trajectory]:
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
        with self.db.read() as conn:
            rows = conn.execute(query, params).fetchall()
            step_rows: dict[str, list[sqlite3.Row]] = {}
            if steps and rows:
                for step_row in conn.execute(
                    "SELECT s.* FROM steps s JOIN trajectories t ON t.id = s.trajectory_id WHERE t.job_id = ? "
                    "ORDER BY s.trajectory_id, s.idx",
                    (job_id,),
                ):
                    step_rows.setdefault(step_row["trajectory_id"], []).append(step_row)
        return [self._trajectory(row, step_rows.get(row["id"], [])) for row in rows]

    def load_trajectory(self, trajectory_id: str) -> Trajectory:
        """One trajectory by id, steps included.

        Raises:
            TrajectoryNotFoundError: no such trajectory.
        """
        with self.db.read() as conn:
            row = conn.execute("SELECT * FROM trajectories WHERE id = ?", (trajectory_id,)).fetchone()
            if row is None:
                raise TrajectoryNotFoundError(f"no trajectory with id {trajectory_id!r} in {self.db.db_path}")
            step_rows = conn.execute(
                "SELECT * FROM steps WHERE trajectory_id = ? ORDER BY idx", (trajectory_id,)
            ).fetchall()
        return self._trajectory(row, step_rows)

    def _trajectory(self, row: sqlite3.Row, step_rows: list[sqlite3.Row]) -> Trajectory:
        steps = [step_from_row(s, self.recording.image_path) for s in step_rows]
        if row["status"] == RUNNING:
            patched = dict(row)
            patched["status"] = "ok"
            patched["metadata"] = to_json({**load_json(row["metadata"], {}), "running": True})
            return trajectory_from_row(patched, steps, self.recording.image_path)
        return trajectory_from_row(row, steps, self.recording.image_path)

    def trajectory_summaries(self, job_id: str) -> list[dict[str, Any]]:
        """Every trajectory row of the job without its steps (for analytics and listings): the
        row's columns plus ``steps`` (the number of steps)."""
        rows = (
            self.db.conn()
            .execute(
                "SELECT t.id, t.group_id, t.rollout_index, t.task_id, t.seed, t.status, t.reward, t.error, t.grade, "
                "t.started_at, t.ended_at, (SELECT COUNT(*) FROM steps s WHERE s.trajectory_id = t.id) AS steps "
                "FROM trajectories t WHERE t.job_id = ? ORDER BY t.started_at, t.rowid",
                (job_id,),
            )
            .fetchall()
        )
        return [{**dict(r), "grade": load_json(r["grade"])} for r in rows]

    def status_counts(self, job_id: str) -> dict[str, int]:
        """How many of the job's trajectories have each status (``running`` included)."""
        rows = (
            self.db.conn()
            .execute("SELECT status, COUNT(*) AS n FROM trajectories WHERE job_id = ? GROUP BY status", (job_id,))
            .fetchall()
        )
        return {r["status"]: r["n"] for r in rows}
