"""Moved to :mod:`hud_gym.wrappers.integrations.sb3_observations`; this old path keeps working."""

# The ``X as X`` names were public in the old module without being in its ``__all__``.
from hud_gym.wrappers.integrations.sb3_observations import (
    ObservationMapper,
    SB3ObservationWrapper,
)
from hud_gym.wrappers.integrations.sb3_observations import (
    TextMode as TextMode,
)

__all__ = ["ObservationMapper", "SB3ObservationWrapper"]
