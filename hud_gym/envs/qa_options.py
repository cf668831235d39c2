"""The options of ``hud/QA-v0`` (:class:`QAOptions`): none, declared as the other gyms' are
(:mod:`hud_gym.core.gym_options`), so that every gym's env, controller and controller server read
one options model."""

from __future__ import annotations

from hud_gym.core.gym_options import GymOptions

__all__ = ["QAOptions"]


class QAOptions(GymOptions):
    """The options of a QA env and its controller: none (the page is fixed)."""
