"""HUD's ``hud.adapters.common.types``: the CLA action classes (:mod:`hud_gym.actions`)."""

from hud_gym.actions import *  # noqa: F403
from hud_gym.actions import __all__ as __all__
