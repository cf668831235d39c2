"""Absent rewards: a step that failed has no reward, never a 0.

``env.step`` returns the float ``NaN`` for a failed step (Gymnasium's wrappers, such as
``RecordEpisodeStatistics``, add rewards up, so the reward is a float), with ``info["status"]``
naming the failure; a vector env's reward array holds ``NaN`` too. Stored trajectories, exports,
analytics and GRPO advantages hold ``None``. :func:`graded_reward` reads either as ``None``.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["graded_reward"]


def graded_reward(reward: Any) -> float | None:
    """A step's reward as a float, or ``None`` when it is absent (``None`` or ``NaN``).

    >>> graded_reward(float("nan")) is None, graded_reward(None) is None, graded_reward(0)
    (True, True, 0.0)
    """
    if reward is None:
        return None
    value = float(reward)
    return None if math.isnan(value) else value
