"""Moved to :mod:`hud_gym.wrappers.rollout.grpo`; this old path keeps working."""

from hud_gym.wrappers.rollout.grpo import (
    Policy,
    PolicyOutput,
    group_advantages,
    rollout,
    rollout_group,
    rollout_groups,
)

__all__ = ["Policy", "PolicyOutput", "group_advantages", "rollout", "rollout_group", "rollout_groups"]
