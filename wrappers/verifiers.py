"""Moved to :mod:`hud_gym.wrappers.integrations.verifiers`; this old path keeps working."""

from hud_gym.wrappers.integrations.verifiers import to_rollout_output, verifiers_group_rollout

__all__ = ["to_rollout_output", "verifiers_group_rollout"]
