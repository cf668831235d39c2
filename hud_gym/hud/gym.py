"""HUD's ``hud.gym``: ``await gym.make(task | "hud-browser" | "qa" | "hud-ubuntu", job=...)``."""

from __future__ import annotations

from typing import Any

from hud_gym.hud.environment import Environment
from hud_gym.hud.jobs import Job, unwrap
from hud_gym.make import make as _make
from hud_gym.task import Task

__all__ = ["make"]


async def make(
    env_src: Task | dict[str, Any] | str, *, job: Job | Any = None, job_id: str | None = None, **kwargs: Any
) -> Environment:
    """An :class:`Environment` for a task (its setup already run, as HUD's) or a gym name (no
    task until ``reset(task)``), linked to ``job`` (or ``job_id``, or the current ``@job``).
    ``kwargs`` go to :func:`hud_gym.make` (``controller=``, ``screen_size=``...)."""
    env = _make(env_src, job=unwrap(job) if job is not None else job_id, **kwargs)
    environment = Environment(env.unwrapped)  # type: ignore[arg-type]
    if not isinstance(env_src, str) or "/" in env_src:
        await environment._start()
    return environment
