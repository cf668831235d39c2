"""The SQL of a trajectory's rows, shared by the writes of
:class:`~hud_gym.jobs.trajectory_repository.TrajectoryRepository`: a run's row, a step's row, a run's end."""

from __future__ import annotations

import sqlite3
from typing import Any

import numpy as np

from hud_gym.bounds import PROMPT_CHARS, TASK_ID_CHARS
from hud_gym.jobs.liveness import ProcessIdentity
from hud_gym.jobs.rows import INITIAL_OBSERVATION_REF, store_text, to_json, to_time
from hud_gym.trajectory import Trajectory, TrajectoryStep, utc_now

__all__ = ["INSERT_STEP", "end_row", "insert_row", "insert_step", "step_values"]

INSERT_STEP = (
    "INSERT INTO steps (trajectory_id, idx, actions, reward, terminated, truncated, text, status, error, info, timings, "
    "started_at, ended_at, observation_ref, policy_trace) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def step_values(trajectory_id: str, step: TrajectoryStep, ref: str | None) -> tuple[Any, ...]:
    return (
        trajectory_id,
        step.index,
        to_json(step.actions),
        None if step.reward is None else _finite(step.reward),
        int(step.terminated),
        int(step.truncated),
        store_text(step.text),
        step.status,
        store_text(step.error),
        to_json(step.info),
        to_json(step.timings),
        to_time(step.started_at),
        to_time(step.ended_at),
        ref,
        to_json(step.policy_trace) if step.policy_trace is not None else None,
    )


def insert_step(conn: sqlite3.Connection, trajectory_id: str, step: TrajectoryStep, ref: str | None) -> None:
    conn.execute(INSERT_STEP, step_values(trajectory_id, step, ref))


def end_row(
    conn: sqlite3.Connection,
    trajectory: Trajectory,
    *,
    only_if_running: bool,
    base_metadata: dict[str, Any] | None = None,
) -> bool:
    metadata = {**(base_metadata or {}), **trajectory.metadata}
    metadata = {k: v for k, v in metadata.items() if k not in (INITIAL_OBSERVATION_REF, "running")}
    cursor = conn.execute(
        "UPDATE trajectories SET status = ?, reward = ?, error = ?, final_response = ?, grade = ?, ended_at = ?, "
        "metadata = ? WHERE id = ? AND status != 'record_error'"
        + (" AND status = 'running'" if only_if_running else ""),
        (
            trajectory.status,
            None if trajectory.reward is None else _finite(trajectory.reward),
            store_text(trajectory.error),
            store_text(trajectory.final_response),
            to_json(trajectory.grade) if trajectory.grade is not None else None,
            to_time(trajectory.ended_at or utc_now()),
            to_json(metadata),
            trajectory.trajectory_id,
        ),
    )
    return cursor.rowcount > 0


def _finite(value: float) -> float | None:
    value = float(value)
    return value if np.isfinite(value) else None


def insert_row(
    conn: sqlite3.Connection,
    trajectory: Trajectory,
    job_id: str,
    writer: ProcessIdentity,
    *,
    status: str,
    initial_ref: str | None = None,
    or_ignore: bool = False,
) -> None:
    """Add ``trajectory``'s row to ``job_id`` with ``status`` (``or_ignore``: unless it is there)."""
    conn.execute(
        f"INSERT {'OR IGNORE ' if or_ignore else ''}INTO trajectories (id, job_id, group_id, rollout_index, task_id, "
        "task, seed, prompt, status, started_at, metadata, initial_observation_ref, writer_host, writer_pid, "
        "writer_started) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            trajectory.trajectory_id,
            job_id,
            trajectory.group_id,
            trajectory.rollout_index,
            store_text(trajectory.task_id, TASK_ID_CHARS),
            to_json(trajectory.task.model_dump(), PROMPT_CHARS, flag=False) if trajectory.task else None,
            trajectory.seed,
            store_text(trajectory.prompt, PROMPT_CHARS),
            status,
            to_time(trajectory.started_at),
            to_json(trajectory.metadata),
            initial_ref,
            writer.host,
            writer.pid,
            writer.started,
        ),
    )
