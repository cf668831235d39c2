"""The current job (set by ``@register_job`` and ``with job:``) and linking envs to jobs.

An env is linked when it is made: :class:`~hud_gym.core.env.HudEnv` calls :func:`link_env` from
its constructor with its ``job=`` argument, falling back to the current job of the constructing
thread or task. Work an env does later on its loop thread needs no context.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hud_gym.jobs.job import Job

__all__ = ["EnvListener", "current_job", "link_env"]


class EnvListener(Protocol):
    """What ``HudEnv.listeners`` hold: coroutines awaited on the env's loop thread after every
    successful ``reset`` and ``step`` (with exactly what the caller gets back; ``reward`` is
    ``None`` for a failed step) and before ``close``. They must not raise (a listener's failure is
    its own to report).

    A listener may also define ``async on_end_episode(env, status, error)``: called by
    :meth:`~hud_gym.core.env.HudEnv.end_episode` when the episode ends with a failure from outside
    the env (``policy_error``, ``timeout``)."""

    async def on_reset(self, env: Any, observation: dict[str, Any], info: dict[str, Any],
                       options: dict[str, Any]) -> None: ...

    async def on_step(self, env: Any, action: Any, observation: dict[str, Any], reward: float | None,
                      terminated: bool, truncated: bool, info: dict[str, Any]) -> None: ...

    async def on_close(self, env: Any) -> None: ...

_current: ContextVar[Job | None] = ContextVar("hud_gym_current_job", default=None)


def current_job() -> Job | None:
    """The job that envs made here are linked to, if any (set by ``@register_job`` or ``with job:``)."""
    return _current.get()


def link_env(env: Any, job: Any = None) -> None:
    """Link ``env`` (a :class:`~hud_gym.core.env.HudEnv`) to ``job`` (a :class:`Job` or a job id),
    else to the current job; no-op when there is neither. Every later episode of the env is
    recorded as a trajectory of that job.

    Raises:
        TypeError: ``job`` is neither a Job nor a job id.
        hud_gym.jobs.JobNotFoundError: no job has that id.
    """
    if job is None:
        job = _current.get()
        if job is None:
            return
    from hud_gym.jobs.job import Job, load_job
    from hud_gym.jobs.recorder import TrajectoryRecorder

    if isinstance(job, str):
        job = load_job(job)
    if not isinstance(job, Job):
        raise TypeError(f"job must be a hud_gym Job or a job id, got {type(job).__name__}")
    env.listeners[:] = [listener for listener in env.listeners if not isinstance(listener, TrajectoryRecorder)]
    env.listeners.append(TrajectoryRecorder(job))
