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

__all__ = ["APPS_DIR", "CDP_PORT", "CHROMIUM_ARGV", "KNOWN_APPS", "REAL_APPS", "app_path"]

APPS_DIR: Path = Path(__file__).resolve().parent
"""The folder holding the app scripts."""

CDP_PORT = 1337
"""The port of the desktop Chromium's DevTools protocol, on the sandbox's own loopback (OSWorld's VM
starts Chrome with ``--remote-debugging-port=1337``)."""

CHROMIUM_ARGV: tuple[str, ...] = (
    "chromium",
    "--no-first-run",
    "--no-default-browser-check",
    "--password-store=basic",
    # The desktop's bubblewrap sandbox is the boundary, and it refuses the nested user namespace
    # Chromium's own sandbox needs; --test-type hides the bar warning of it (as ChromeDriver does).
    "--no-sandbox",
    "--test-type",
    f"--remote-debugging-port={CDP_PORT}",
)
"""The desktop Chromium's command line (also the ``Exec`` of the home's ``chromium.desktop``)."""

# --norestore: no document recovery dialog after an episode killed LibreOffice mid-edit.
_LIBREOFFICE = ("libreoffice", "--norestore", "--nologo")

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
    # The real apps of an OSWorld-like desktop (docker/ubuntu/packages.txt); their settings (no
    # first-run wizard, tips or recovery prompt) are in the home profile each episode starts with
    # (:mod:`hud_gym.controllers.ubuntu.profile`).
    "libreoffice": [*_LIBREOFFICE],
    "libreoffice-calc": [*_LIBREOFFICE, "--calc"],
    "libreoffice-writer": [*_LIBREOFFICE, "--writer"],
    "libreoffice-impress": [*_LIBREOFFICE, "--impress"],
    "gimp": ["gimp", "--no-splash"],
    "vlc": ["vlc"],
    "thunderbird": ["thunderbird"],
    # --standalone: gedit asks no D-Bus session (the sandbox has none) for a running instance.
    "gedit": ["gedit", "--standalone"],
    "pcmanfm": ["pcmanfm"],
    "chromium": [*CHROMIUM_ARGV],
}
"""The desktop apps a task or an agent may launch by name without shell permission: name ->
the command line that starts it (arguments are appended)."""

REAL_APPS: frozenset[str] = frozenset(
    {"libreoffice", "libreoffice-calc", "libreoffice-writer", "libreoffice-impress"}
    | {"gimp", "vlc", "thunderbird", "gedit", "pcmanfm", "chromium"}
)
"""The real (Debian-packaged) apps of :data:`KNOWN_APPS`: each takes at most one file (or, for
``chromium``, an http(s) address) as its argument."""


def app_path(name: str) -> Path:
    """The script of the shipped app ``name`` (``"eventlog"`` or ``"editor"``).

    Raises:
        FileNotFoundError: no such app.
    """
    path = APPS_DIR / f"{name}.py"
    if name.startswith("_") or not path.is_file():
        raise FileNotFoundError(f"no shipped app {name!r} in {APPS_DIR}")
    return path
