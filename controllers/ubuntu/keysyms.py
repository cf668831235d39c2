"""hud-gym key names (:data:`hud_gym.keys.KEYS`, pyautogui's names) and characters as X keysyms.

:data:`KEYSYM_NAMES` maps every canonical key name to an X keysym name (``enter`` -> ``Return``,
``ctrl`` -> ``Control_L``, ``win`` -> ``Super_L``, ``pageup`` -> ``Prior``, ``!`` -> ``exclam``);
:func:`key_keysym` gives the keysym value, :func:`char_keysym` the keysym of any character
(Latin-1 characters are their own keysym, every other character its Unicode keysym
``0x1000000 + codepoint``, as xdotool and Xlib do).

Example:
    >>> hex(key_keysym("enter")), hex(char_keysym("é")), hex(char_keysym("日"))
    ('0xff0d', '0xe9', '0x10065e5')
"""

from __future__ import annotations

from Xlib import XK

from hud_gym.keys import KEYS

__all__ = ["KEYSYM_NAMES", "MODIFIER_KEYSYMS", "char_keysym", "key_keysym"]

XK.load_keysym_group("xf86")
XK.load_keysym_group("latin2")
XK.load_keysym_group("katakana")
XK.load_keysym_group("korean")

_NAMED: dict[str, str] = {
    "backspace": "BackSpace",
    "tab": "Tab",
    "enter": "Return",
    "shift": "Shift_L",
    "shiftleft": "Shift_L",
    "shiftright": "Shift_R",
    "ctrl": "Control_L",
    "ctrlleft": "Control_L",
    "ctrlright": "Control_R",
    "alt": "Alt_L",
    "altleft": "Alt_L",
    "altright": "Alt_R",
    "pause": "Pause",
    "capslock": "Caps_Lock",
    "esc": "Escape",
    "escape": "Escape",
    "space": "space",
    "pageup": "Prior",
    "pagedown": "Next",
    "end": "End",
    "home": "Home",
    "left": "Left",
    "up": "Up",
    "right": "Right",
    "down": "Down",
    "select": "Select",
    "print": "Print",
    "execute": "Execute",
    "printscreen": "Print",
    "prtsc": "Print",
    "insert": "Insert",
    "delete": "Delete",
    "help": "Help",
    "sleep": "XF86Sleep",
    "numlock": "Num_Lock",
    "scrolllock": "Scroll_Lock",
    "clear": "Clear",
    "separator": "KP_Separator",
    "modechange": "Mode_switch",
    "apps": "Menu",
    "browserback": "XF86Back",
    "browserfavorites": "XF86Favorites",
    "browserforward": "XF86Forward",
    "browserhome": "XF86HomePage",
    "browserrefresh": "XF86Refresh",
    "browsersearch": "XF86Search",
    "browserstop": "XF86Stop",
    "launchapp1": "XF86MyComputer",
    "launchapp2": "XF86Calculator",
    "launchmail": "XF86Mail",
    "launchmediaselect": "XF86AudioMedia",
    "playpause": "XF86AudioPlay",
    "stop": "XF86AudioStop",
    "prevtrack": "XF86AudioPrev",
    "nexttrack": "XF86AudioNext",
    "volumemute": "XF86AudioMute",
    "volumeup": "XF86AudioRaiseVolume",
    "volumedown": "XF86AudioLowerVolume",
    "zoom": "XF86ZoomIn",
    "start": "Super_L",
    # On a Linux desktop the Windows/Command key is Super; Option is Alt.
    "win": "Super_L",
    "winleft": "Super_L",
    "winright": "Super_R",
    "command": "Super_L",
    "option": "Alt_L",
    "optionleft": "Alt_L",
    "optionright": "Alt_R",
    "fn": "XF86WakeUp",
    "multiply": "KP_Multiply",
    "add": "KP_Add",
    "subtract": "KP_Subtract",
    "decimal": "KP_Decimal",
    "divide": "KP_Divide",
    "hanguel": "Hangul",
    "hangul": "Hangul",
    "hanja": "Hangul_Hanja",
    "kana": "Hiragana_Katakana",
    "kanji": "Kanji",
    "junja": "Hangul_Jeonja",
    "convert": "Henkan_Mode",
    "nonconvert": "Muhenkan",
    "yen": "yen",
    "\t": "Tab",
    "\n": "Return",
    "\r": "Return",
    " ": "space",
}
_NAMED.update({f"num{i}": f"KP_{i}" for i in range(10)})
_NAMED.update({f"f{i}": f"F{i}" for i in range(1, 25)})


_LATIN1_NAMES: dict[int, str] = {}
for _name, _value in vars(XK).items():
    if _name.startswith("XK_") and isinstance(_value, int) and 0x20 <= _value <= 0x7E:
        _LATIN1_NAMES.setdefault(_value, _name[3:])


def _character_name(char: str) -> str:
    return _LATIN1_NAMES.get(ord(char), char)


def _lookup(name: str) -> int:
    """The keysym called ``name`` (python-xlib spells ``XF86Back`` as ``XF86_Back``)."""
    keysym = XK.string_to_keysym(name)
    if keysym == 0 and name.startswith("XF86"):
        keysym = XK.string_to_keysym("XF86_" + name[4:])
    return keysym


KEYSYM_NAMES: dict[str, str] = {key: _NAMED.get(key) or _character_name(key) for key in KEYS}
"""Every canonical key name to its X keysym name."""

MODIFIER_KEYSYMS: frozenset[int] = frozenset(
    _lookup(name)
    for name in (
        "Shift_L",
        "Shift_R",
        "Control_L",
        "Control_R",
        "Alt_L",
        "Alt_R",
        "Super_L",
        "Super_R",
        "Meta_L",
        "Meta_R",
        "ISO_Level3_Shift",
        "Mode_switch",
    )
)
"""Keysyms of the modifier keys."""


def key_keysym(key: str) -> int:
    """The keysym of a canonical key name (see :data:`KEYSYM_NAMES`).

    Raises:
        KeyError: ``key`` is not a canonical key name.
    """
    name = KEYSYM_NAMES[key]
    keysym = _lookup(name)
    if keysym == 0 and len(name) == 1:
        keysym = char_keysym(name)
    if keysym == 0:
        raise KeyError(f"no X keysym for key {key!r} ({name})")
    return keysym


def char_keysym(char: str) -> int:
    """The keysym that types ``char``: the code point for Latin-1, else ``0x1000000 + codepoint``.

    Newline and carriage return are ``Return``, tab is ``Tab``.
    """
    if len(char) != 1:
        raise ValueError(f"expected one character, got {char!r}")
    if char in ("\n", "\r"):
        return XK.XK_Return
    if char == "\t":
        return XK.XK_Tab
    if char == "\b":
        return XK.XK_BackSpace
    code = ord(char)
    if 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xFF:
        return code
    return 0x1000000 + code
