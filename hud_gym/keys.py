"""The one key-name table of hud-gym and its normaliser.

Key names are pyautogui's lower-case names (the set HUD's ``CLAKey`` literal allows). Controllers
map these names to their own vocabulary (Playwright key names, X keysyms); agents may use common
spellings ("Enter", "Return", "Control", "cmd", "PageDown", "ArrowLeft", "A"), which
:func:`normalize_key` turns into the canonical name or rejects with an error naming the key and
its closest matches.

Example:
    >>> normalize_key("ArrowLeft")
    'left'
    >>> normalize_keys(["Control", "Shift", "T"])
    ['ctrl', 'shift', 't']
"""

from __future__ import annotations

import difflib
import string
from collections.abc import Iterable

from hud_gym.errors import HudGymError

__all__ = ["KEYS", "KEY_INDEX", "KEY_ALIASES", "MODIFIER_KEYS", "UnknownKeyError", "normalize_key", "normalize_keys"]

_CONTROL = [
    "backspace",
    "tab",
    "enter",
    "shift",
    "shiftleft",
    "shiftright",
    "ctrl",
    "ctrlleft",
    "ctrlright",
    "alt",
    "altleft",
    "altright",
    "pause",
    "capslock",
    "esc",
    "escape",
    "space",
    "pageup",
    "pagedown",
    "end",
    "home",
    "left",
    "up",
    "right",
    "down",
    "select",
    "print",
    "execute",
    "printscreen",
    "prtsc",
    "insert",
    "delete",
    "help",
    "sleep",
]
_SPECIAL = [
    "numlock",
    "scrolllock",
    "clear",
    "separator",
    "modechange",
    "apps",
    "browserback",
    "browserfavorites",
    "browserforward",
    "browserhome",
    "browserrefresh",
    "browsersearch",
    "browserstop",
    "launchapp1",
    "launchapp2",
    "launchmail",
    "launchmediaselect",
    "playpause",
    "stop",
    "prevtrack",
    "nexttrack",
    "volumemute",
    "volumeup",
    "volumedown",
    "zoom",
    "start",
]
_MODIFIERS = ["win", "winleft", "winright", "command", "option", "optionleft", "optionright", "fn"]
_NUMPAD = [f"num{i}" for i in range(10)] + ["multiply", "add", "subtract", "decimal", "divide"]
_FUNCTION = [f"f{i}" for i in range(1, 25)]
_LANGUAGE = ["hanguel", "hangul", "hanja", "kana", "kanji", "junja", "convert", "nonconvert", "yen"]
# Printable ASCII characters except upper-case letters (pyautogui's table is lower-case only),
# plus the whitespace characters pyautogui accepts as keys.
_CHARACTERS = ["\t", "\n", "\r", " "] + [
    c for c in string.printable if c not in string.whitespace and c not in string.ascii_uppercase
]

KEYS: tuple[str, ...] = tuple(
    dict.fromkeys(_CONTROL + _SPECIAL + _MODIFIERS + _NUMPAD + _FUNCTION + _LANGUAGE + _CHARACTERS)
)
"""Every canonical key name, in a fixed order (the action space indexes keys by this order)."""

KEY_INDEX: dict[str, int] = {key: i for i, key in enumerate(KEYS)}
"""Position of each canonical key name in :data:`KEYS`."""

MODIFIER_KEYS: frozenset[str] = frozenset(
    [
        "shift",
        "shiftleft",
        "shiftright",
        "ctrl",
        "ctrlleft",
        "ctrlright",
        "alt",
        "altleft",
        "altright",
        "win",
        "winleft",
        "winright",
        "command",
        "option",
        "optionleft",
        "optionright",
        "fn",
    ]
)

KEY_ALIASES: dict[str, str] = {
    # enter / escape / deletion
    "return": "enter",
    "ret": "enter",
    "kp_enter": "enter",
    "newline": "enter",
    "del": "delete",
    "back_space": "backspace",
    "bksp": "backspace",
    "ins": "insert",
    "spacebar": "space",
    "whitespace": "space",
    # modifiers
    "control": "ctrl",
    "ctl": "ctrl",
    "control_l": "ctrlleft",
    "control_r": "ctrlright",
    "controlleft": "ctrlleft",
    "controlright": "ctrlright",
    "ctrl_l": "ctrlleft",
    "ctrl_r": "ctrlright",
    "lctrl": "ctrlleft",
    "rctrl": "ctrlright",
    "shift_l": "shiftleft",
    "shift_r": "shiftright",
    "lshift": "shiftleft",
    "rshift": "shiftright",
    "left shift": "shiftleft",
    "right shift": "shiftright",
    "down shift": "shift",
    "alt_l": "altleft",
    "alt_r": "altright",
    "lalt": "altleft",
    "ralt": "altright",
    "altgr": "altright",
    "menu": "apps",
    "contextmenu": "apps",
    "cmd": "command",
    "meta": "win",
    "meta_l": "winleft",
    "meta_r": "winright",
    "metaleft": "winleft",
    "metaright": "winright",
    "super": "win",
    "super_l": "winleft",
    "super_r": "winright",
    "windows": "win",
    "os": "win",
    "opt": "option",
    # navigation
    "arrowleft": "left",
    "arrowright": "right",
    "arrowup": "up",
    "arrowdown": "down",
    "arrow_left": "left",
    "arrow_right": "right",
    "arrow_up": "up",
    "arrow_down": "down",
    "page_up": "pageup",
    "page_down": "pagedown",
    "prior": "pageup",
    "next": "pagedown",
    "pgup": "pageup",
    "pgdn": "pagedown",
    # locks and misc
    "caps_lock": "capslock",
    "num_lock": "numlock",
    "scroll_lock": "scrolllock",
    "print_screen": "printscreen",
    "prtscn": "printscreen",
    "sysrq": "printscreen",
    # named characters (xdotool / X keysym spellings)
    "minus": "-",
    "plus": "+",
    "equal": "=",
    "equals": "=",
    "comma": ",",
    "period": ".",
    "dot": ".",
    "slash": "/",
    "backslash": "\\",
    "semicolon": ";",
    "colon": ":",
    "apostrophe": "'",
    "quote": "'",
    "quotedbl": '"',
    "grave": "`",
    "backtick": "`",
    "asciitilde": "~",
    "tilde": "~",
    "exclam": "!",
    "at": "@",
    "numbersign": "#",
    "hash": "#",
    "dollar": "$",
    "percent": "%",
    "asciicircum": "^",
    "ampersand": "&",
    "asterisk": "*",
    "parenleft": "(",
    "parenright": ")",
    "underscore": "_",
    "bracketleft": "[",
    "bracketright": "]",
    "braceleft": "{",
    "braceright": "}",
    "bar": "|",
    "less": "<",
    "greater": ">",
    "question": "?",
    # numpad (Playwright / X spellings)
    "kp_0": "num0",
    "kp_1": "num1",
    "kp_2": "num2",
    "kp_3": "num3",
    "kp_4": "num4",
    "kp_5": "num5",
    "kp_6": "num6",
    "kp_7": "num7",
    "kp_8": "num8",
    "kp_9": "num9",
    "numpad0": "num0",
    "numpad1": "num1",
    "numpad2": "num2",
    "numpad3": "num3",
    "numpad4": "num4",
    "numpad5": "num5",
    "numpad6": "num6",
    "numpad7": "num7",
    "numpad8": "num8",
    "numpad9": "num9",
    "kp_add": "add",
    "kp_subtract": "subtract",
    "kp_multiply": "multiply",
    "kp_divide": "divide",
    "kp_decimal": "decimal",
    "numpadadd": "add",
    "numpadsubtract": "subtract",
    "numpadmultiply": "multiply",
    "numpaddivide": "divide",
    "numpaddecimal": "decimal",
    # media (browser KeyboardEvent.key spellings)
    "audiovolumemute": "volumemute",
    "audiovolumeup": "volumeup",
    "audiovolumedown": "volumedown",
    "mediaplaypause": "playpause",
    "mediatracknext": "nexttrack",
    "mediatrackprevious": "prevtrack",
    "mediastop": "stop",
}
"""Common alternative spellings, lower-cased, mapped to canonical names."""


class UnknownKeyError(HudGymError, ValueError):
    """A key name that is neither canonical nor a known alias."""

    def __init__(self, key: object, suggestions: list[str]) -> None:
        self.key = key
        self.suggestions = suggestions
        hint = f"; did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        super().__init__(
            f"unknown key {key!r}{hint} (key names follow pyautogui, e.g. 'enter', 'ctrl', 'pagedown', 'a')"
        )


def normalize_key(key: str) -> str:
    """Return the canonical name of ``key``.

    Accepts canonical names, single printable characters (upper-case letters map to their
    lower-case key), and the aliases in :data:`KEY_ALIASES`, case-insensitively.

    Raises:
        UnknownKeyError: the key is not known; the message names it and its closest matches.
    """
    if not isinstance(key, str) or key == "":
        raise UnknownKeyError(key, [])
    if key in KEY_INDEX:
        return key
    if len(key) == 1:
        lowered = key.lower()
        if lowered in KEY_INDEX and key in string.ascii_letters:
            return lowered
        raise UnknownKeyError(key, [])
    lowered = key.strip().lower()
    if lowered in KEY_INDEX:
        return lowered
    if lowered in KEY_ALIASES:
        return KEY_ALIASES[lowered]
    compact = lowered.replace(" ", "").replace("-", "")
    if compact in KEY_INDEX:
        return compact
    if compact in KEY_ALIASES:
        return KEY_ALIASES[compact]
    candidates = [k for k in KEYS if len(k) > 1] + list(KEY_ALIASES)
    close = difflib.get_close_matches(lowered, candidates, n=3, cutoff=0.6)
    suggestions = list(dict.fromkeys(KEY_ALIASES.get(c, c) for c in close))
    raise UnknownKeyError(key, suggestions)


def normalize_keys(keys: Iterable[str] | str) -> list[str]:
    """Normalise a list (or tuple) of key names; a single string such as ``"ctrl+c"`` is split on ``+``.

    Raises:
        UnknownKeyError: a key is not known.
        ValueError: ``keys`` is neither a string nor a list or tuple (a number, a bool, a dict...).
    """
    if isinstance(keys, str):
        keys = [keys] if keys == "+" or "+" not in keys else [k for k in keys.split("+") if k] or ["+"]
    elif not isinstance(keys, (list, tuple)):
        raise ValueError(f"keys must be a key name or a list of key names, got {type(keys).__name__} {keys!r}")
    return [normalize_key(k) for k in keys]
