"""A job's figures: success rate, rewards, per task and per group, steps, durations, errors.

Definitions (all over finished trajectories; running ones are only counted in ``running``):

- **failed** runs are those without a reward (:data:`~hud_gym.trajectory.FAILED`: ``env_error``,
  ``timeout``, ``eval_error``, ``policy_error``, ``interrupted``): they are counted in ``errors``
  and ``error_counts``, and left out of every reward and success figure (a run whose evaluator
  failed is not a run scored 0).
- **scored** runs are the others (``ok``, ``truncated``).
- A scored run is a **success** when its reward is at least ``success_threshold`` (1.0 by
  default), or its grade says ``done`` (not a grading error) with a positive reward.
- ``success_rate`` = successes / scored runs; ``mean_reward`` = mean reward of scored runs
  (``None`` when there are none).
- Durations are each run's ``ended_at - started_at`` in seconds (p50/p95 interpolated).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from hud_gym.jobs.rows import from_time
from hud_gym.trajectory import FAILED

__all__ = ["DurationStats", "GroupAnalytics", "JobAnalytics", "TaskAnalytics", "compute_analytics", "is_success"]


class DurationStats(BaseModel):
    """Seconds per run (``None`` when no run finished)."""

    count: int = 0
    mean_s: float | None = None
    p50_s: float | None = None
    p95_s: float | None = None
    max_s: float | None = None


class TaskAnalytics(BaseModel):
    """The runs of one task."""

    task_id: str | None
    runs: int
    scored: int
    successes: int
    errors: int
    success_rate: float | None
    mean_reward: float | None
    mean_steps: float | None


class GroupAnalytics(BaseModel):
    """One GRPO group (runs sharing a ``group_id``): rewards in rollout order (``None`` = failed)."""

    group_id: str
    task_id: str | None
    seed: int | None
    rewards: list[float | None]
    mean: float | None
    std: float | None
    successes: int


class JobAnalytics(BaseModel):
    """A job's figures (see the module docstring for the definitions)."""

    job_id: str
    name: str
    status: str
    success_threshold: float
    trajectories: int = Field(description="every trajectory, running ones included")
    running: int
    finished: int
    scored: int
    successes: int
    success_rate: float | None
    mean_reward: float | None
    errors: int
    status_counts: dict[str, int]
    error_counts: dict[str, int]
    steps_total: int
    steps_mean: float | None
    duration: DurationStats
    per_task: list[TaskAnalytics]
    per_group: list[GroupAnalytics]


def is_success(row: dict[str, Any], success_threshold: float = 1.0) -> bool:
    """Whether a finished run (a summary row or ``Trajectory.model_dump()``) counts as a success."""
    reward = row.get("reward")
    if row.get("status") in FAILED or row.get("status") == "running" or reward is None:
        return False
    if reward >= success_threshold:
        return True
    grade = row.get("grade") or {}
    return bool(grade.get("done")) and not grade.get("is_error") and reward > 0


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if values else None


def _durations(rows: list[dict[str, Any]]) -> DurationStats:
    seconds = []
    for row in rows:
        started, ended = from_time(row["started_at"]), from_time(row["ended_at"])
        if started and ended:
            seconds.append(max(0.0, (ended - started).total_seconds()))
    if not seconds:
        return DurationStats()
    values = np.asarray(seconds)
    return DurationStats(
        count=len(seconds),
        mean_s=float(values.mean()),
        p50_s=float(np.percentile(values, 50)),
        p95_s=float(np.percentile(values, 95)),
        max_s=float(values.max()),
    )


def compute_analytics(
    job_id: str, name: str, status: str, rows: list[dict[str, Any]], *, success_threshold: float = 1.0
) -> JobAnalytics:
    """The analytics of a job from its trajectory summary rows
    (:meth:`~hud_gym.jobs.store.Store.trajectory_summaries`)."""
    finished = [r for r in rows if r["status"] != "running"]
    failed = [r for r in finished if r["status"] in FAILED]
    scored = [r for r in finished if r["status"] not in FAILED]
    rewards = [float(r["reward"]) for r in scored if r["reward"] is not None]
    successes = sum(is_success(r, success_threshold) for r in scored)
    status_counts: dict[str, int] = {}
    for row in rows:
        status_counts[row["status"]] = status_counts.get(row["status"], 0) + 1
    steps = [int(r["steps"]) for r in finished]

    per_task: dict[str | None, list[dict[str, Any]]] = {}
    for row in finished:
        per_task.setdefault(row["task_id"], []).append(row)
    tasks = []
    for task_id, task_rows in per_task.items():
        task_scored = [r for r in task_rows if r["status"] not in FAILED]
        task_rewards = [float(r["reward"]) for r in task_scored if r["reward"] is not None]
        task_successes = sum(is_success(r, success_threshold) for r in task_scored)
        tasks.append(
            TaskAnalytics(
                task_id=task_id,
                runs=len(task_rows),
                scored=len(task_scored),
                successes=task_successes,
                errors=len(task_rows) - len(task_scored),
                success_rate=task_successes / len(task_scored) if task_scored else None,
                mean_reward=_mean(task_rewards),
                mean_steps=_mean([int(r["steps"]) for r in task_rows]),
            )
        )

    per_group: dict[str, list[dict[str, Any]]] = {}
    for row in finished:
        if row["group_id"] is not None:
            per_group.setdefault(row["group_id"], []).append(row)
    groups = []
    for group_id, group_rows in per_group.items():
        group_rows.sort(key=lambda r: r["rollout_index"])
        group_rewards = [
            None if r["status"] in FAILED or r["reward"] is None else float(r["reward"]) for r in group_rows
        ]
        scored_rewards = [r for r in group_rewards if r is not None]
        groups.append(
            GroupAnalytics(
                group_id=group_id,
                task_id=group_rows[0]["task_id"],
                seed=group_rows[0]["seed"],
                rewards=group_rewards,
                mean=_mean(scored_rewards),
                std=float(np.std(scored_rewards)) if scored_rewards else None,
                successes=sum(is_success(r, success_threshold) for r in group_rows),
            )
        )

    return JobAnalytics(
        job_id=job_id,
        name=name,
        status=status,
        success_threshold=success_threshold,
        trajectories=len(rows),
        running=len(rows) - len(finished),
        finished=len(finished),
        scored=len(scored),
        successes=successes,
        success_rate=successes / len(scored) if scored else None,
        mean_reward=_mean(rewards),
        errors=len(failed),
        status_counts=status_counts,
        error_counts={s: n for s, n in status_counts.items() if s in FAILED},
        steps_total=sum(steps),
        steps_mean=_mean(steps),
        duration=_durations(finished),
        per_task=tasks,
        per_group=groups,
    )
