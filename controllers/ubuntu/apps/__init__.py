"""Small Tk desktop apps shipped with the desktop gym (stdlib + tkinter only, run as scripts).

- :mod:`eventlog`: a test window that logs every key, button, motion and wheel event (keysym,
  state, coordinates) and its text field's content to a JSON-lines file.
- :mod:`editor`: a minimal text editor with File > Save / Save As / Quit.

Run them by path with the interpreter in isolated mode (``[sys.executable, "-I",
str(app_path("editor")), ...]``) so a start does not import hud_gym, and Tk does not run the
``~/.<app>.py`` profile it would otherwise read from the home; :data:`APPS_DIR` is their folder.
(In the desktop sandbox they run with the sandbox's Python, from a copy the sandbox can read.)
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["APPS_DIR", "KNOWN_APPS", "app_path"]

APPS_DIR: Path = Path(__file__).resolve().parent
"""The folder holding the app scripts."""

KNOWN_APPS: dict[str, list[str]] = {
    "xterm": ["xterm"],
    "editor": [sys.executable, "-I", str(APPS_DIR / "editor.py")],
    "eventlog": [sys.executable, "-I", str(APPS_DIR / "eventlog.py")],
    # The classic X11 apps of Debian's x11-apps package.
    "xcalc": ["xcalc"],
    "xclock": ["xclock"],
    "xeyes": ["xeyes"],
    "xlogo": ["xlogo"],
    "xedit": ["xedit"],
}
"""The desktop apps a task or an agent may launch by name without shell permission: name ->
the command line that starts it (arguments are appended)."""


def app_path(name: str) -> Path:
    """The script of the shipped app ``name`` (``"eventlog"`` or ``"editor"``).

    Raises:
        FileNotFoundError: no such app.
    """
    path = APPS_DIR / f"{name}.py"
    if name.startswith("_") or not path.is_file():
        raise FileNotFoundError(f"no shipped app {name!r} in {APPS_DIR}")
    return path
