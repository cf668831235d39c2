"""Moved to :mod:`hud_gym.wrappers.vector.batching`; this old path keeps working."""

from hud_gym.wrappers.vector.batching import (
    StepResult,
    batch_rows,
    reset_indices,
    reset_seeds,
    send_ids,
    unbatch_actions,
)

__all__ = ["StepResult", "batch_rows", "reset_indices", "reset_seeds", "send_ids", "unbatch_actions"]
