"""HUD's ``hud.agent``: hud-gym's agents (:mod:`hud_gym.agents`)."""

from hud_gym.agents import *  # noqa: F403
from hud_gym.agents import __all__ as __all__
