"""GRPO advantages of a group of runs of one task: a pure function of their rewards.

It sits at the bottom of the layers (next to :mod:`hud_gym.trajectory`, whose
:meth:`~hud_gym.trajectory.TrajectoryGroup.advantages` uses it), so that trainers and the rollout
wrappers (:mod:`hud_gym.wrappers.rollout.grpo` re-exports it) share one definition.

Example:
    >>> group_advantages([1.0, 0.0, None]).round(3).tolist()
    [1.0, -1.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

__all__ = ["group_advantages"]


def group_advantages(
    rewards: Sequence[float | None], *, scale: Literal["group", "none"] = "group", eps: float = 1e-6, ddof: int = 0
) -> np.ndarray:
    """GRPO advantages of one group: ``(r - mean) / (std + eps)`` over the scorable runs.

    - Failed runs (``None`` or NaN reward) get advantage 0 and are left out of mean and std.
    - A group whose scorable rewards are all equal (including a single run) gets zeros.
    - ``scale="none"`` gives ``r - mean`` (verifiers' rule).
    - ``ddof`` is the std's delta degrees of freedom: TRL's ``GRPOTrainer`` uses the sample std
      (``ddof=1``, ``eps=1e-4``); ART, TRL's async trainer and our default use the population std
      (``ddof=0``, ``eps=1e-6`` for ART).

    Raises:
        ValueError: ``scale`` is neither ``"group"`` nor ``"none"``.
    """
    values = np.array([np.nan if r is None else float(r) for r in rewards], dtype=np.float64)
    scored = ~np.isnan(values)
    advantages = np.zeros(len(values), dtype=np.float64)
    if scored.sum() == 0:
        return advantages
    kept = values[scored]
    centered = kept - kept.mean()
    if np.allclose(kept, kept[0]):
        return advantages
    if scale == "none":
        advantages[scored] = centered
    elif scale == "group":
        if len(kept) - ddof <= 0:
            return advantages
        advantages[scored] = centered / (kept.std(ddof=ddof) + eps)
    else:
        raise ValueError(f"scale must be 'group' or 'none', got {scale!r}")
    return advantages
