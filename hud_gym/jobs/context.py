"""The current job (set by ``@register_job`` and ``with job:``); :mod:`hud_gym.jobs.linking` links
envs to it.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hud_gym.jobs.job import Job

__all__ = ["current_job"]

_current: ContextVar[Job | None] = ContextVar("hud_gym_current_job", default=None)


def current_job() -> Job | None:
    """The job that envs made here are linked to, if any (set by ``@register_job`` or ``with job:``)."""
    return _current.get()
