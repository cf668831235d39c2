"""HUD's jobs, awaited: ``await create_job(name)``, ``await load_job(id)``, ``@job(name)`` /
``@register_job(name)``, ``await run_job(agent, taskset, name)``, and a :class:`Job` whose
``load_trajectories`` and ``get_analytics`` are coroutines and whose :attr:`Job.runs` are HUD 0.6
:class:`~hud_gym.hud.run.Run` s. The job and its runs live in hud-gym's SQLite store: the same
job as :func:`hud_gym.jobs.load_job` gives, shown by ``hud-gym jobs show``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Any, TypeVar

from hud_gym.hud.run import Run
from hud_gym.jobs import Job as StoredJob
from hud_gym.jobs import JobAnalytics, acreate_job, aload_job, arun_job
from hud_gym.jobs import register_job as _register_job
from hud_gym.trajectory import Trajectory

__all__ = ["Job", "create_job", "job", "load_job", "register_job", "run_job"]

F = TypeVar("F", bound=Callable[..., Any])


class Job:
    """A stored job, HUD style: ``id``, ``name``, ``metadata``, ``created_at``, ``status``;
    :attr:`stored` is the :class:`hud_gym.jobs.Job` (``gym.make(task, job=...)`` takes either)."""

    def __init__(self, stored: StoredJob) -> None:
        self.stored = stored

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stored, name)

    def __repr__(self) -> str:
        return f"hud.Job(id={self.stored.id!r}, name={self.stored.name!r})"

    async def load_trajectories(self) -> list[Trajectory]:
        """The job's trajectories (``traj.id``, ``traj.reward``, ...), oldest first."""
        return await asyncio.to_thread(self.stored.load_trajectories)

    async def get_analytics(self, **kwargs: Any) -> JobAnalytics:
        """The job's analytics (failed and ungraded runs are errors, never 0 rewards)."""
        return await asyncio.to_thread(self.stored.get_analytics, **kwargs)

    @property
    def runs(self) -> list[Run]:
        """The job's runs (HUD 0.6), read from the store."""
        return [Run.from_trajectory(t) for t in self.stored.load_trajectories()]


def unwrap(job: Any) -> Any:
    """The :class:`hud_gym.jobs.Job` of a HUD-style job (anything else as is)."""
    return job.stored if isinstance(job, Job) else job


async def create_job(
    name: str, metadata: dict[str, Any] | None = None, *, home: str | os.PathLike[str] | None = None
) -> Job:
    """A new running job (``await create_job(name="...")``)."""
    return Job(await acreate_job(name, metadata, home=home))


async def load_job(job_id: str, *, home: str | os.PathLike[str] | None = None) -> Job:
    """A stored job by id.

    Raises:
        KeyError: no job with that id (:class:`hud_gym.jobs.JobNotFoundError`).
    """
    return Job(await aload_job(job_id, home=home))


def register_job(name: str, metadata: dict[str, Any] | None = None, **kwargs: Any) -> Callable[[F], F]:
    """Each call of the decorated (async) function runs in a new job; envs made inside are linked to it."""
    return _register_job(name, metadata, **kwargs)


job = register_job
"""HUD's ``@job("name")``: :func:`register_job`."""


async def run_job(agent: Any, taskset: Any, name: str | None = None, **kwargs: Any) -> Job:
    """Run every task of ``taskset`` with ``agent`` (an agent, an agent class, a policy) as one
    job; see :func:`hud_gym.jobs.arun_job` for the options (``group_size``, ``max_concurrent``...)."""
    return Job(await arun_job(agent, taskset, name, **kwargs))
