"""Controllers: the code that drives a browser, a desktop or a QA session for an environment."""

from hud_gym.controllers.base import ActionOutcome, Controller, ControllerError, Frame

__all__ = ["ActionOutcome", "Controller", "ControllerError", "Frame"]
