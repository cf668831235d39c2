"""Linking envs to jobs.

An env is linked when it is made: :class:`~hud_gym.core.env.HudEnv` hands itself and its ``job=``
argument to the env linker of :mod:`hud_gym.core.listeners`, which importing this module sets to
:func:`link_env`; it falls back to the current job of the constructing thread or task
(:mod:`hud_gym.jobs.context`). Work an env does later on its loop thread needs no context.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hud_gym.core.listeners import set_env_linker
from hud_gym.jobs.context import current_job
from hud_gym.jobs.job import Job, create_job, load_job
from hud_gym.jobs.live_view import LiveView
from hud_gym.jobs.recorder import TrajectoryRecorder

if TYPE_CHECKING:
    from hud_gym.core.env import HudEnv

__all__ = ["link_env"]


def link_env(env: HudEnv, job: Any = None) -> None:
    """Link ``env`` (a :class:`~hud_gym.core.env.HudEnv`) to ``job`` (a :class:`Job` or a job id),
    else to the current job; no-op when there is neither, unless the env has a live view
    (``env.live_view``): it then gets a job of its own, named ``"live"``. Every later episode of
    the env is recorded as a trajectory of that job; with a live view, its resets also give the
    URL of its live page (:mod:`hud_gym.jobs.live_view`).

    Raises:
        TypeError: ``job`` is neither a Job nor a job id.
        hud_gym.jobs.JobNotFoundError: no job has that id.
    """
    live_view = bool(getattr(env, "live_view", False))
    if job is None:
        job = current_job()
        if job is None and not live_view:
            return
    owned = None
    if job is None:
        job = owned = create_job("live", {"live_view": True, "gym": env.gym})
    if isinstance(job, str):
        job = load_job(job)
    if not isinstance(job, Job):
        raise TypeError(f"job must be a hud_gym Job or a job id, got {type(job).__name__}")
    env.listeners[:] = [
        listener for listener in env.listeners if not isinstance(listener, (TrajectoryRecorder, LiveView))
    ]
    recorder = TrajectoryRecorder(job)
    env.listeners.append(recorder)
    if live_view:
        env.listeners.append(LiveView(recorder, owned))  # after the recorder: it reads the run's id


set_env_linker(link_env)
