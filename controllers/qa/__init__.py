"""The QA controller and its setup functions."""

from hud_gym.controllers.qa import functions as _functions  # noqa: F401  (registers the setup functions)
from hud_gym.controllers.qa.controller import QAController

__all__ = ["QAController"]
