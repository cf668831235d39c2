"""The desktop's X connection: :class:`~hud_gym.controllers.x11.connection.XConnection` (moved to
:mod:`hud_gym.controllers.x11`, shared with the headed browser; importable from here as well)."""

from hud_gym.controllers.x11.connection import X_ERRORS, XConnection

__all__ = ["XConnection", "X_ERRORS"]
