"""Moved to :mod:`hud_gym.wrappers.rollout.placement`; this old path keeps working."""

from hud_gym.wrappers.rollout.placement import controller_kwargs, spreads_controllers

__all__ = ["controller_kwargs", "spreads_controllers"]
