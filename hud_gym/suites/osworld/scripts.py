"""What an OSWorld task names that is read without the desktop: its VM's home, the paths under it,
and its keystroke scripts (``python -c "import pyautogui; ..."``) as key presses.

Light on purpose: the converter (:mod:`.mapper`, used by the task-file format detection) imports
it, and must not import the desktop's controller.
"""

from __future__ import annotations

import ast
import re

__all__ = ["MAX_SLEEP", "OSWORLD_HOME", "home_path", "pyautogui_keys"]

OSWORLD_HOME = "/home/user"
"""The home directory of OSWorld's VM; mapped to the env's home."""
MAX_SLEEP = 10.0
"""The longest a ``sleep`` step (or a keystroke script's ``time.sleep``) waits."""

_PYAUTOGUI = re.compile(r"\A\s*import pyautogui\s*;")
_MAX_SCRIPT = 2000


def home_path(path: str) -> str:
    """OSWorld's VM path as the env's: ``/home/user/x`` is ``~/x``."""
    if path == OSWORLD_HOME or path.startswith(OSWORLD_HOME + "/"):
        return "~" + path[len(OSWORLD_HOME) :]
    return path


def pyautogui_keys(script: str) -> list[list[str] | float] | None:
    """The key presses (lists of keys) and pauses (seconds) of an OSWorld keystroke script
    (``import pyautogui; pyautogui.hotkey("ctrl", "s"); time.sleep(0.5)``), read as Python's
    syntax tree, never run; ``None`` when it is anything else."""
    if len(script) > _MAX_SCRIPT or not _PYAUTOGUI.match(script):
        return None
    try:
        tree = ast.parse(script)
    except SyntaxError:
        return None
    out: list[list[str] | float] = []
    for node in tree.body:
        if isinstance(node, ast.Import) and all(a.name in ("pyautogui", "time") for a in node.names):
            continue
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
            return None
        call = node.value
        name = ast.unparse(call.func)
        try:
            args = [ast.literal_eval(a) for a in call.args]
        except ValueError:
            return None
        flat = [k for a in args for k in (a if isinstance(a, list) else [a])]
        if name in ("pyautogui.hotkey", "pyautogui.press") and flat and all(isinstance(k, str) for k in flat):
            out += [flat] if name == "pyautogui.hotkey" else [[k] for k in flat]
        elif name == "time.sleep" and len(flat) == 1 and isinstance(flat[0], (int, float)):
            out.append(min(float(flat[0]), MAX_SLEEP))
        else:
            return None
    return out
