"""HUD's ``hud.task`` and ``hud.taskset``: :class:`Task` and :class:`TaskSet` are hud-gym's, with
HUD 0.6's ``run``: ``await task.run(agent)`` and ``await taskset.run(agent, group_size=,
max_concurrent=)`` run them as one job and return it (its ``runs`` are
:class:`~hud_gym.hud.run.Run` s). :func:`load_taskset` works awaited or not.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

from hud_gym import task as core
from hud_gym.hud.jobs import Job, run_job
from hud_gym.tasksets import load_taskset as _load_taskset

__all__ = ["Task", "TaskSet", "load_taskset"]


class Task(core.Task):
    """A :class:`hud_gym.Task` (HUD's fields; ``gym`` may be a ``CustomGym``) with :meth:`run`."""

    async def run(self, agent: Any, *, name: str | None = None, **kwargs: Any) -> Job:
        """Run this task with ``agent`` as one job; options of :func:`hud_gym.jobs.arun_job`."""
        return await run_job(agent, [self], name or f"run {self.id or 'task'}", **kwargs)


class TaskSet(core.TaskSet):
    """A :class:`hud_gym.TaskSet` with :meth:`run`; also awaitable (to itself), so that HUD's
    ``await load_taskset(...)`` and plain ``load_taskset(...)`` both work."""

    async def run(
        self, agent: Any, *, group_size: int = 1, max_concurrent: int = 8, name: str | None = None, **kwargs: Any
    ) -> Job:
        """Run every task ``group_size`` times with ``agent`` as one job, ``max_concurrent`` at once."""
        return await run_job(agent, self, name, group_size=group_size, max_concurrent=max_concurrent, **kwargs)

    def __await__(self) -> Generator[Any, None, TaskSet]:
        return _itself(self).__await__()


async def _itself(taskset: TaskSet) -> TaskSet:
    return taskset


def as_taskset(taskset: core.TaskSet) -> TaskSet:
    """``taskset`` as a :class:`TaskSet` of :class:`Task` s."""
    tasks: list[core.Task] = [Task.model_validate(t.model_dump()) for t in taskset]
    return TaskSet(tasks=tasks, id=taskset.id, description=taskset.description)


def load_taskset(name_or_path: str | Path, format: str | None = None) -> TaskSet:
    """:func:`hud_gym.load_taskset` (a file, a bundled or registered name) as a :class:`TaskSet`;
    HUD's hub names (``"GAIA"``, ``"OSWorld-Ubuntu"``, ...) fail in one line naming the local loader."""
    return as_taskset(_load_taskset(name_or_path, format))
