"""HUD's ``hud.adapters``: hud-gym's adapters (:mod:`hud_gym.adapters`)."""

from hud_gym.adapters import *  # noqa: F403
from hud_gym.adapters import __all__ as __all__
