"""Field checks shared by the provider adapters: coordinates, key chords, durations.

Each raises :class:`~hud_gym.actions.ActionError` with a message that names the action and the
field (``Invalid action: left_click 'coordinate' must be ...``).
"""

from __future__ import annotations

import math
from typing import Any

from hud_gym.actions import ActionError, Point
from hud_gym.keys import UnknownKeyError, normalize_key

__all__ = ["WHEEL_CLICK_PX", "chord", "coordinate", "field", "integer", "seconds_to_ms"]

WHEEL_CLICK_PX = 100
"""Scroll pixels per mouse-wheel click, in the frame the model sees (as the desktop gym's wheel)."""

MAX_WAIT_S = 300.0
"""The longest wait or key hold an adapter accepts, in seconds."""


def field(data: dict[str, Any], name: str, action: str, *, required: bool = True) -> Any:
    """``data[name]``; a missing required field raises."""
    if name not in data or data[name] is None:
        if required:
            raise ActionError(f"Invalid action: {action} needs {name!r}")
        return None
    return data[name]


def integer(value: Any, name: str, action: str, *, minimum: int | None = 0) -> int:
    """An integer (an int-valued float is accepted); bools and non-numbers raise."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value != int(value)
    ):
        raise ActionError(f"Invalid action: {action} {name!r} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ActionError(f"Invalid action: {action} {name!r} must be at least {minimum}, got {value!r}")
    return int(value)


def coordinate(value: Any, action: str, name: str = "coordinate") -> Point:
    """``[x, y]`` (or ``{"x", "y"}``) of non-negative integers as a :class:`Point`."""
    if isinstance(value, dict) and set(value) >= {"x", "y"}:
        value = [value["x"], value["y"]]
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise ActionError(f"Invalid action: {action} {name!r} must be [x, y], got {value!r}")
    return Point(x=integer(value[0], name, action), y=integer(value[1], name, action))


def seconds_to_ms(value: Any, name: str, action: str) -> int:
    """A duration in seconds (a number from 0 to :data:`MAX_WAIT_S`) in milliseconds."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ActionError(f"Invalid action: {action} {name!r} must be a number of seconds, got {value!r}")
    if not 0 <= value <= MAX_WAIT_S:
        raise ActionError(f"Invalid action: {action} {name!r} must be between 0 and {MAX_WAIT_S:g} s, got {value!r}")
    return round(value * 1000)


def chord(text: Any, action: str, key_map: dict[str, str] | None = None) -> list[str]:
    """A key chord such as ``"ctrl+shift+t"``, ``"Page_Down"`` or ``"ctrl++"`` as canonical key names.

    ``key_map`` (lower-case provider names to canonical names) is tried before
    :func:`hud_gym.keys.normalize_key`.
    """
    if not isinstance(text, str) or not text.strip():
        raise ActionError(f"Invalid action: {action} needs a key name, got {text!r}")
    text = text.strip()
    if text == "+":
        parts = ["+"]
    elif text.endswith("++"):
        parts = [p for p in text[:-2].split("+") if p] + ["+"]
    else:
        parts = text.split("+")
    if any(not p.strip() for p in parts):
        raise ActionError(f"Invalid action: {action} key chord {text!r} has an empty key")
    return [key(p.strip(), action, key_map) for p in parts]


def key(name: str, action: str, key_map: dict[str, str] | None = None) -> str:
    """One key name as its canonical name (``key_map`` first)."""
    mapped = (key_map or {}).get(name.lower(), name)
    try:
        return normalize_key(mapped)
    except UnknownKeyError as exc:
        raise ActionError(f"Invalid action: {action}: {exc}") from None
