"""The root of hud-gym's errors.

Every exception hud-gym defines derives from :class:`HudGymError`, so one ``except`` catches
whatever hud-gym raised on purpose. Each class also keeps the built-in base users already catch
(``ValueError`` for bad input, ``KeyError`` for an unknown id, ``RuntimeError`` for a failed
resource, ``FileNotFoundError`` for a missing program), as Gymnasium's ``error.Error`` tree does.

Example:
    >>> import hud_gym
    >>> try:
    ...     hud_gym.parse_action({"type": "teleport"})
    ... except hud_gym.HudGymError as exc:
    ...     print(type(exc).__name__)
    ActionError
"""

from __future__ import annotations

__all__ = ["HudGymError"]


class HudGymError(Exception):
    """Base of every error hud-gym raises on purpose."""
