"""Moved to :mod:`hud_gym.wrappers.integrations.sb3_actions`; this old path keeps working."""

# The ``X as X`` names were public in the old module without being in its ``__all__``.
from hud_gym.wrappers.integrations.sb3_actions import (
    DEFAULT_KEYS as DEFAULT_KEYS,
)
from hud_gym.wrappers.integrations.sb3_actions import (
    ActionMapper,
    SB3ActionWrapper,
)
from hud_gym.wrappers.integrations.sb3_actions import (
    Mode as Mode,
)

__all__ = ["ActionMapper", "SB3ActionWrapper"]
