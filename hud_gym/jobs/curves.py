"""Learning curves across jobs: success per task set (and per task) over a tag's values.

A training run evaluates checkpoint after checkpoint, each as a job tagged with its step
(``hud-gym run ... --tag ckpt=1200``). :func:`learning_curves` gathers the jobs that carry a tag
key and orders them by its value (numerically when the values are numbers), one
:class:`CurvePoint` per job: its task set, success rate, mean reward and success per task (the
figures of :func:`~hud_gym.jobs.analytics.compute_analytics`: failed runs are left out of
success, never counted 0). ``hud-gym ui`` plots them (``#/curves``), ``hud-gym jobs curves``
prints them and writes them to TensorBoard (:mod:`hud_gym.jobs.curve_hooks`).

Example:
    >>> points = learning_curves(get_store(), "ckpt")                    # doctest: +SKIP
    >>> [(p.value, p.taskset, p.success_rate) for p in points]           # doctest: +SKIP
    [('800', 'miniwob', 0.25), ('1200', 'miniwob', 0.5)]
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from hud_gym.jobs.analytics import compute_analytics
from hud_gym.jobs.rows import load_json
from hud_gym.jobs.tags import job_settings, job_tags, tag_order

__all__ = ["CurvePoint", "learning_curves", "tag_keys"]


class CurvePoint(BaseModel):
    """One tagged job on a learning curve."""

    job_id: str
    name: str
    created_at: str
    value: str
    taskset: str | None
    agent: str | None
    runs: int
    scored: int
    errors: int
    success_rate: float | None
    mean_reward: float | None
    per_task: dict[str, float | None]


def tag_keys(store: Any) -> list[str]:
    """Every tag key on a job of ``store``, sorted."""
    keys: set[str] = set()
    for row in store.job_rows():
        keys.update(job_tags(load_json(row["metadata"], {})))
    return sorted(keys)


def learning_curves(store: Any, key: str, *, agent: str | None = None, taskset: str | None = None) -> list[CurvePoint]:
    """The jobs of ``store`` tagged ``key`` (only those that ran ``agent`` / ``taskset`` when
    given), ordered by the tag's value, then by creation."""
    points = []
    for row in store.job_rows():
        metadata = load_json(row["metadata"], {})
        settings = job_settings(metadata)
        if key not in settings["tags"]:
            continue
        if (agent is not None and settings["agent"] != agent) or (
            taskset is not None and settings["taskset"] != taskset
        ):
            continue
        analytics = compute_analytics(row["id"], row["name"], row["status"], store.trajectory_summaries(row["id"]))
        points.append(
            CurvePoint(
                job_id=row["id"],
                name=row["name"],
                created_at=row["created_at"],
                value=settings["tags"][key],
                taskset=settings["taskset"],
                agent=settings["agent"],
                runs=analytics.trajectories,
                scored=analytics.scored,
                errors=analytics.errors,
                success_rate=analytics.success_rate,
                mean_reward=analytics.mean_reward,
                per_task={task.task_id or "(no id)": task.success_rate for task in analytics.per_task},
            )
        )
    return sorted(points, key=lambda p: (tag_order(p.value), p.created_at))
