"""The desktop's screenshots: :class:`~hud_gym.controllers.x11.capture.ScreenCapture` (moved to
:mod:`hud_gym.controllers.x11`, shared with the headed browser; importable from here as well)."""

from hud_gym.controllers.x11.capture import ScreenCapture

__all__ = ["ScreenCapture"]
