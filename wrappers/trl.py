"""Moved to :mod:`hud_gym.wrappers.integrations.trl`; this old path keeps working."""

from hud_gym.wrappers.integrations.trl import trl_environment_factory

__all__ = ["trl_environment_factory"]
