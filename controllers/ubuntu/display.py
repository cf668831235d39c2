"""The X server and window manager of one desktop env: an Xvfb display and openbox.

The Xvfb part (a free display number, its cookie, readiness through ``-displayfd``) is
gym-neutral and lives in :mod:`hud_gym.controllers.x11.xvfb`.

:func:`start_window_manager` starts openbox with a minimal configuration (new windows get the
focus, click-to-focus, title bars, Alt+Tab and Alt+F4, no menus or panels) written to the env's
session folder; :func:`wait_for_window_manager` waits until it owns the screen
(``_NET_SUPPORTING_WM_CHECK`` on the root window).

Both processes run in sessions of their own (task process-group kills never reach them) and die
with the hud-gym loop thread that started them (``PR_SET_PDEATHSIG``), so a crashed Python process
leaves no display behind.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.process_utils import die_with_parent
from hud_gym.errors import HudGymError

__all__ = [
    "DesktopNotAvailableError",
    "WINDOW_MANAGERS",
    "require_programs",
    "start_window_manager",
    "wait_for_window_manager",
]

WINDOW_MANAGERS: dict[str, tuple[str, str]] = {"openbox": ("openbox", "openbox")}
"""Supported window managers: name -> (executable, Debian package)."""


class DesktopNotAvailableError(HudGymError, FileNotFoundError):
    """A program the desktop gym needs (Xvfb, the window manager) is not installed."""


def require_programs(window_manager: str | None) -> dict[str, str]:
    """The paths of Xvfb and the window manager.

    Raises:
        DesktopNotAvailableError: one is missing; the message names the Debian packages to install.
        ValueError: an unknown window manager.
    """
    if window_manager is not None and window_manager not in WINDOW_MANAGERS:
        raise ValueError(f"window_manager must be one of {', '.join(WINDOW_MANAGERS)} or None, got {window_manager!r}")
    wanted = {"Xvfb": "xvfb"}
    if window_manager is not None:
        executable, package = WINDOW_MANAGERS[window_manager]
        wanted[executable] = package
    found = {name: shutil.which(name) for name in wanted}
    missing = [name for name, path in found.items() if path is None]
    if missing:
        packages = " ".join(dict.fromkeys(["xvfb", *(WINDOW_MANAGERS[window_manager][1:] if window_manager else ())]))
        raise DesktopNotAvailableError(
            f"the desktop gym needs {' and '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not "
            f"installed: run `sudo apt-get install {packages}` (or `bash scripts/install-system.sh`)"
        )
    return {name: str(path) for name, path in found.items()}


# ----------------------------------------------------------------------------- window manager

_OPENBOX_RC = """<?xml version="1.0" encoding="UTF-8"?>
<openbox_config xmlns="http://openbox.org/3.4/rc">
  <resistance><strength>0</strength><screen_edge_strength>0</screen_edge_strength></resistance>
  <focus>
    <focusNew>yes</focusNew><focusLast>yes</focusLast><followMouse>no</followMouse>
    <underMouse>no</underMouse><raiseOnFocus>no</raiseOnFocus>
  </focus>
  <placement><policy>Smart</policy><center>yes</center><monitor>Primary</monitor></placement>
  <theme>
    <name>Clearlooks</name><titleLayout>LMC</titleLayout><keepBorder>yes</keepBorder>
    <animateIconify>no</animateIconify>
  </theme>
  <desktops><number>1</number><firstdesk>1</firstdesk><popupTime>0</popupTime></desktops>
  <resize><drawContents>yes</drawContents><popupShow>Never</popupShow></resize>
  <margins><top>0</top><bottom>0</bottom><left>0</left><right>0</right></margins>
  <keyboard>
    <chainQuitKey>C-g</chainQuitKey>
    <keybind key="A-Tab"><action name="NextWindow"><dialog>none</dialog><bar>no</bar></action></keybind>
    <keybind key="A-S-Tab"><action name="PreviousWindow"><dialog>none</dialog><bar>no</bar></action></keybind>
    <keybind key="A-F4"><action name="Close"/></keybind>
  </keyboard>
  <mouse>
    <dragThreshold>1</dragThreshold><doubleClickTime>500</doubleClickTime><screenEdgeWarpTime>0</screenEdgeWarpTime>
    <context name="Frame">
      <mousebind button="A-Left" action="Press"><action name="Focus"/><action name="Raise"/></mousebind>
      <mousebind button="A-Left" action="Drag"><action name="Move"/></mousebind>
    </context>
    <context name="Titlebar">
      <mousebind button="Left" action="Press"><action name="Focus"/><action name="Raise"/></mousebind>
      <mousebind button="Left" action="Drag"><action name="Move"/></mousebind>
      <mousebind button="Left" action="DoubleClick"><action name="ToggleMaximize"/></mousebind>
    </context>
    <context name="Client">
      <mousebind button="Left" action="Press"><action name="Focus"/><action name="Raise"/></mousebind>
      <mousebind button="Middle" action="Press"><action name="Focus"/><action name="Raise"/></mousebind>
      <mousebind button="Right" action="Press"><action name="Focus"/><action name="Raise"/></mousebind>
    </context>
    <context name="Top"><mousebind button="Left" action="Drag"><action name="Resize"><edge>top</edge></action></mousebind></context>
    <context name="Bottom"><mousebind button="Left" action="Drag"><action name="Resize"><edge>bottom</edge></action></mousebind></context>
    <context name="Left"><mousebind button="Left" action="Drag"><action name="Resize"><edge>left</edge></action></mousebind></context>
    <context name="Right"><mousebind button="Left" action="Drag"><action name="Resize"><edge>right</edge></action></mousebind></context>
    <context name="BRCorner"><mousebind button="Left" action="Drag"><action name="Resize"/></mousebind></context>
    <context name="Close"><mousebind button="Left" action="Click"><action name="Close"/></mousebind></context>
    <context name="Maximize"><mousebind button="Left" action="Click"><action name="ToggleMaximize"/></mousebind></context>
  </mouse>
  <menu><file>{menu}</file><hideDelay>0</hideDelay></menu>
  <applications/>
</openbox_config>
"""
_OPENBOX_MENU = """<?xml version="1.0" encoding="UTF-8"?>
<openbox_menu xmlns="http://openbox.org/3.4/menu"><menu id="root-menu" label="hud-gym"/></openbox_menu>
"""


def write_openbox_config(folder: Path) -> Path:
    """Write the minimal openbox ``rc.xml`` (and an empty menu) to ``folder``; returns the rc path."""
    folder.mkdir(parents=True, exist_ok=True)
    menu = folder / "menu.xml"
    menu.write_text(_OPENBOX_MENU)
    rc = folder / "rc.xml"
    rc.write_text(_OPENBOX_RC.replace("{menu}", str(menu)))
    for path in (folder, menu, rc):  # readable by a sandboxed window manager
        path.chmod(0o755 if path.is_dir() else 0o644)
    return rc


async def start_window_manager(
    name: str,
    display: str,
    config_dir: Path,
    log_path: Path,
    env: dict[str, str],
    command: Callable[[list[str]], list[str]] | None = None,
) -> asyncio.subprocess.Process:
    """Start window manager ``name`` on ``display`` with its config in ``config_dir``.

    ``env`` is the environment to run it with (the env's ``HOME``/``XDG_*`` are fine); ``command``
    turns its argument list into the command line run (a sandbox launcher; default: as is).
    """
    executable, _package = WINDOW_MANAGERS[name]
    rc = write_openbox_config(config_dir)
    argv = [executable, "--config-file", str(rc), "--sm-disable"]
    with open(log_path, "ab") as log:
        return await asyncio.create_subprocess_exec(
            *(command(argv) if command else argv),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env={**env, "DISPLAY": display},
            start_new_session=True,
            preexec_fn=die_with_parent,
        )


async def wait_for_window_manager(
    has_wm: Callable[[], bool], process: asyncio.subprocess.Process, log_path: Path, timeout: float = 10.0
) -> None:
    """Wait until ``has_wm()`` (the WM set ``_NET_SUPPORTING_WM_CHECK``), polling every 5 ms.

    Raises:
        ControllerError: the WM exited or did not take the screen within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while not has_wm():
        if process.returncode is not None or time.monotonic() > deadline:
            log = log_path.read_text(errors="replace")[-600:] if log_path.exists() else ""
            state = f"exited with {process.returncode}" if process.returncode is not None else "timed out"
            raise ControllerError(f"the window manager {state} before managing the screen:\n{log.strip()}")
        await asyncio.sleep(0.005)
