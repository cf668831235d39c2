"""Moved to :mod:`hud_gym.wrappers.rollout.pool`; this old path keeps working."""

from hud_gym.wrappers.rollout.pool import EnvPool

__all__ = ["EnvPool"]
