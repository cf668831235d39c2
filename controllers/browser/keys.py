"""Canonical hud-gym key names (pyautogui's, :mod:`hud_gym.keys`) to Playwright key names.

Playwright's US layout knows the printable ASCII characters, the named keys of a PC keyboard
(``Enter``, ``ArrowLeft``, ``F1``-``F12``, ``Numpad*``, media and volume keys) and the modifiers.
Keys the browser cannot receive (``f13``-``f24``, ``fn``, the launch/browser keys, ...) raise
:class:`~hud_gym.actions.ActionError` naming the key.

Example:
    >>> playwright_key("ctrl"), playwright_key("pagedown"), playwright_key("a")
    ('Control', 'PageDown', 'a')
"""

from __future__ import annotations

import string

from hud_gym.actions import ActionError
from hud_gym.keys import normalize_key

__all__ = ["MODIFIERS", "PLAYWRIGHT_KEYS", "playwright_key", "playwright_keys"]

_NAMED: dict[str, str] = {
    "backspace": "Backspace",
    "tab": "Tab",
    "\t": "Tab",
    "enter": "Enter",
    "\n": "Enter",
    "\r": "Enter",
    "space": " ",
    " ": " ",
    "esc": "Escape",
    "escape": "Escape",
    "shift": "Shift",
    "shiftleft": "ShiftLeft",
    "shiftright": "ShiftRight",
    "ctrl": "Control",
    "ctrlleft": "ControlLeft",
    "ctrlright": "ControlRight",
    "alt": "Alt",
    "altleft": "AltLeft",
    "altright": "AltRight",
    "option": "Alt",
    "optionleft": "AltLeft",
    "optionright": "AltRight",
    "win": "Meta",
    "winleft": "MetaLeft",
    "winright": "MetaRight",
    "command": "Meta",
    "pause": "Pause",
    "capslock": "CapsLock",
    "numlock": "NumLock",
    "scrolllock": "ScrollLock",
    "pageup": "PageUp",
    "pagedown": "PageDown",
    "end": "End",
    "home": "Home",
    "left": "ArrowLeft",
    "up": "ArrowUp",
    "right": "ArrowRight",
    "down": "ArrowDown",
    "insert": "Insert",
    "delete": "Delete",
    "print": "PrintScreen",
    "printscreen": "PrintScreen",
    "prtsc": "PrintScreen",
    "apps": "ContextMenu",
    # The numpad digits type their digit (num lock on), as pyautogui's do.
    **{f"num{i}": str(i) for i in range(10)},
    "multiply": "NumpadMultiply",
    "add": "NumpadAdd",
    "subtract": "NumpadSubtract",
    "divide": "NumpadDivide",
    "decimal": ".",
    "volumemute": "AudioVolumeMute",
    "volumeup": "AudioVolumeUp",
    "volumedown": "AudioVolumeDown",
    "playpause": "MediaPlayPause",
    "nexttrack": "MediaTrackNext",
    "prevtrack": "MediaTrackPrevious",
    **{f"f{i}": f"F{i}" for i in range(1, 13)},
}

_PRINTABLE = {c: c for c in string.printable if c not in string.whitespace and c not in string.ascii_uppercase}

PLAYWRIGHT_KEYS: dict[str, str] = {**_PRINTABLE, **_NAMED}
"""Canonical key name to Playwright key name, for every key the browser gym supports."""

MODIFIERS: frozenset[str] = frozenset(
    {
        "Shift",
        "ShiftLeft",
        "ShiftRight",
        "Control",
        "ControlLeft",
        "ControlRight",
        "Alt",
        "AltLeft",
        "AltRight",
        "Meta",
        "MetaLeft",
        "MetaRight",
    }
)
"""Playwright names of the modifier keys."""


def playwright_key(key: str) -> str:
    """The Playwright name of ``key`` (a canonical name or an alias :func:`normalize_key` knows).

    Raises:
        ActionError: the key is unknown or cannot be sent to a browser page.
    """
    try:
        canonical = normalize_key(key)
    except ValueError as exc:
        raise ActionError(str(exc)) from None
    name = PLAYWRIGHT_KEYS.get(canonical)
    if name is None:
        raise ActionError(f"key {key!r} cannot be sent to a browser page (the browser gym has no {canonical!r} key)")
    return name


def playwright_keys(keys: list[str] | None) -> list[str]:
    """:func:`playwright_key` of each key, in order (empty for ``None``)."""
    return [playwright_key(k) for k in keys or []]
