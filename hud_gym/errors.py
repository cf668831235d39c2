"""The roots of hud-gym's errors and warnings.

Every exception hud-gym defines derives from :class:`HudGymError`, so one ``except`` catches
whatever hud-gym raised on purpose. Each class also keeps the built-in base users already catch
(``ValueError`` for bad input, ``KeyError`` for an unknown id, ``RuntimeError`` for a failed
resource, ``FileNotFoundError`` for a missing program), as Gymnasium's ``error.Error`` tree does.
Every warning class derives from :class:`HudGymWarning` (a ``UserWarning``), so
``warnings.filterwarnings("error", category=hud_gym.HudGymWarning)`` makes all of them fatal.

Example:
    >>> import hud_gym
    >>> try:
    ...     hud_gym.parse_action({"type": "teleport"})
    ... except hud_gym.HudGymError as exc:
    ...     print(type(exc).__name__)
    ActionError
"""

from __future__ import annotations

__all__ = ["HudGymError", "HudGymWarning"]


class HudGymError(Exception):
    """Base of every error hud-gym raises on purpose."""


class HudGymWarning(UserWarning):
    """Base of every warning hud-gym issues."""
