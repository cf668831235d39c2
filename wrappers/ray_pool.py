"""Moved to :mod:`hud_gym.wrappers.integrations.ray_pool`; this old path keeps working."""

from hud_gym.wrappers.integrations.ray_pool import RayEnvPool, RayEnvProxy

__all__ = ["RayEnvPool", "RayEnvProxy"]
