"""Gymnasium's ``max_episode_steps`` made a hud-gym env's own step limit, so the final step is graded.

Gymnasium's ``TimeLimit`` wrapper truncates an episode from outside the env: the env never learns
that the step was the last one, so a task graded on the final step would score a silent 0. So:

- The ids are registered without ``max_episode_steps`` (a registered limit makes
  ``gymnasium.make`` wrap every env in a ``TimeLimit``); the env itself truncates at its limit and
  grades that step, and ``env.spec.max_episode_steps`` states the limit (what
  ``TimeAwareObservation`` and other tooling read).
- ``gymnasium.make(id, max_episode_steps=N)`` still wraps the env in ``TimeLimit(N)``; the env
  reads ``N`` when ``make`` hands it its spec (:func:`make_time_limit`), and truncates *and grades*
  at step ``N`` itself, the step the ``TimeLimit`` ends. With ``max_steps`` given too, the lower
  limit applies (the ``TimeLimit`` would cut the episode there anyway).
- ``gymnasium.make_vec`` passes ``max_episode_steps`` to the vector entry point, which gives it to
  every sub-env the same way (:func:`effective_limit`).

Example:
    >>> env = gymnasium.make("hud/QA-v0", max_episode_steps=3)
    >>> env.unwrapped.max_episode_steps, env.spec.max_episode_steps
    (3, 3)
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["effective_limit", "make_human_rendering", "make_time_limit"]


def effective_limit(max_steps: int | None, time_limit: int | None) -> int | None:
    """The step limit of an env given ``max_steps`` and Gymnasium's ``max_episode_steps``
    (``time_limit``; ``None`` or ``-1``: no ``TimeLimit``): the lower of the two."""
    if time_limit is None or time_limit == -1:
        return max_steps
    return time_limit if max_steps is None else min(max_steps, time_limit)


def _make_frame(depth: int) -> Any:
    try:
        frame = sys._getframe(depth + 1)
    except ValueError:
        return None
    if frame.f_code.co_name != "make" or frame.f_globals.get("__name__") != "gymnasium.envs.registration":
        return None
    return frame


def make_human_rendering(depth: int = 2) -> bool:
    """Whether the ``gymnasium.make`` call setting an env's spec was given ``render_mode="human"``
    and is about to wrap the env (made with ``"rgb_array"``) in its pygame ``HumanRendering``
    window (``depth`` as for :func:`make_time_limit`)."""
    frame = _make_frame(depth)
    return frame is not None and frame.f_locals.get("apply_human_rendering") is True


def make_time_limit(depth: int = 2) -> int | None:
    """The ``max_episode_steps`` argument of the ``gymnasium.make`` call that is setting an env's
    spec, or ``None`` when the spec is not being set by ``gymnasium.make`` (``depth``: the frames
    between this function and the spec's setter's caller).

    ``gymnasium.make`` creates the env, then sets ``env.unwrapped.spec`` and only then applies
    its ``TimeLimit``: reading the argument from its frame is the one way the env can learn it.
    """
    frame = _make_frame(depth)
    if frame is None:
        return None
    value = frame.f_locals.get("max_episode_steps")
    return value if isinstance(value, int) and value > 0 else None
