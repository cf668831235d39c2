"""What an OSWorld task names that is read without the desktop: its VM's home, the paths under it,
and its input scripts (``python -c "import pyautogui; ..."``) as key presses, pauses and clicks.

Light on purpose: the converter (:mod:`.mapper`, used by the task-file format detection) imports
it, and must not import the desktop's controller.
"""

from __future__ import annotations

import ast
import re
from typing import Any, NamedTuple

__all__ = ["MAX_SLEEP", "OSWORLD_HOME", "OSWORLD_SCREEN", "Click", "Item", "home_path", "pyautogui_input"]

OSWORLD_HOME = "/home/user"
"""The home directory of OSWorld's VM; mapped to the env's home."""
OSWORLD_SCREEN = (1920, 1080)
"""The screen of OSWorld's VM: its scripts' ``pyautogui`` coordinates are on it (scaled to the env's)."""
MAX_SLEEP = 10.0
"""The longest a ``sleep`` step (or a script's ``time.sleep``) waits."""

_PYAUTOGUI = re.compile(r"\A\s*import pyautogui\s*;")
_MAX_SCRIPT = 2000
_MOUSE = ("pyautogui.click", "pyautogui.doubleClick", "pyautogui.mouseDown", "pyautogui.mouseUp")


class Click(NamedTuple):
    """A click of a script: at ``(x, y)`` on OSWorld's screen (``None``: where the pointer is),
    ``clicks`` times (2: ``doubleClick``)."""

    x: float | None
    y: float | None
    clicks: int = 1


Item = list[str] | float | Click


def home_path(path: str) -> str:
    """OSWorld's VM path as the env's: ``/home/user/x`` is ``~/x``."""
    if path == OSWORLD_HOME or path.startswith(OSWORLD_HOME + "/"):
        return "~" + path[len(OSWORLD_HOME) :]
    return path


def _point(call: ast.Call) -> tuple[float | None, float | None] | None:
    """The ``(x, y)`` of a mouse call (positional or keyword; none: the pointer's place), or
    ``None`` for anything else (another argument, a value that is not a number)."""
    try:
        values = [ast.literal_eval(a) for a in call.args]
        named = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    except ValueError:
        return None
    if set(named) - {"x", "y"} or len(values) > 2:
        return None
    x, y = [*values, None, None][:2]
    x, y = named.get("x", x), named.get("y", y)
    if (x is None) != (y is None) or not all(isinstance(v, (int, float)) for v in (x, y) if v is not None):
        return None
    return x, y


def _mouse(name: str, call: ast.Call, out: list[Item]) -> bool:
    """Append the click of a mouse call (a ``mouseUp`` ends the ``mouseDown`` before it, at the
    same place: one click); ``False`` when it is not one this reads."""
    point = _point(call)
    if point is None:
        return False
    if name == "pyautogui.mouseDown":
        out.append(Click(*point, clicks=0))  # pressed: a click once its mouseUp comes
    elif name == "pyautogui.mouseUp":
        pressed = out[-1] if out else None
        if not (isinstance(pressed, Click) and pressed.clicks == 0 and point in ((None, None), pressed[:2])):
            return False
        out[-1] = pressed._replace(clicks=1)
    else:
        out.append(Click(*point, clicks=2 if name == "pyautogui.doubleClick" else 1))
    return True


def _item(call: ast.Call, out: list[Item]) -> bool:
    name = ast.unparse(call.func)
    if name in _MOUSE:
        return _mouse(name, call, out)
    try:
        args: list[Any] = [ast.literal_eval(a) for a in call.args]
    except ValueError:
        return False
    flat = [k for a in args for k in (a if isinstance(a, list) else [a])]
    if name in ("pyautogui.hotkey", "pyautogui.press") and flat and all(isinstance(k, str) for k in flat):
        out += [flat] if name == "pyautogui.hotkey" else [[k] for k in flat]
    elif name == "time.sleep" and len(flat) == 1 and isinstance(flat[0], (int, float)):
        out.append(min(float(flat[0]), MAX_SLEEP))
    else:
        return False
    return True


def pyautogui_input(script: str) -> list[Item] | None:
    """The input of an OSWorld script (``import pyautogui; pyautogui.hotkey("ctrl", "s");
    time.sleep(0.5); pyautogui.doubleClick(x=960, y=540)``), read as Python's syntax tree, never
    run: key presses (lists of keys), pauses (seconds) and clicks (:class:`Click`, on OSWorld's
    screen); ``None`` when it is anything else (a ``mouseDown`` left pressed too)."""
    if len(script) > _MAX_SCRIPT or not _PYAUTOGUI.match(script):
        return None
    try:
        tree = ast.parse(script)
    except SyntaxError:
        return None
    out: list[Item] = []
    for node in tree.body:
        if isinstance(node, ast.Import) and all(a.name in ("pyautogui", "time") for a in node.names):
            continue
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and _item(node.value, out)):
            return None
    if any(isinstance(item, Click) and item.clicks == 0 for item in out):
        return None
    return out
