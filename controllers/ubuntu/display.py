"""The X server and window manager of one desktop env: an Xvfb display and openbox.

:func:`start_xvfb` picks a free display number (from :data:`FIRST_DISPLAY` up: one whose
``/tmp/.X{n}-lock`` and ``/tmp/.X11-unix/X{n}`` do not exist and that no env of this process
holds) and starts ``Xvfb :n -displayfd FD -screen 0 WxHx24 -nolisten tcp -shmem -noreset``. Xvfb
writes the display number to ``FD`` once it accepts connections, so readiness is an event, not a
sleep; if another process took the number in the meantime Xvfb exits, the pipe closes without a
number, and the next number is tried.

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
import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from hud_gym.controllers.base import ControllerError

__all__ = [
    "DesktopNotAvailableError",
    "FIRST_DISPLAY",
    "WINDOW_MANAGERS",
    "XvfbServer",
    "die_with_parent",
    "require_programs",
    "start_window_manager",
    "start_xvfb",
    "stop_process",
    "wait_for_window_manager",
]

FIRST_DISPLAY = 50
"""Display numbers are searched from here (below it: the numbers people use for real displays)."""
LAST_DISPLAY = 999

WINDOW_MANAGERS: dict[str, tuple[str, str]] = {"openbox": ("openbox", "openbox")}
"""Supported window managers: name -> (executable, Debian package)."""

_claimed: set[int] = set()
_claimed_lock = threading.Lock()


class DesktopNotAvailableError(FileNotFoundError):
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


# ----------------------------------------------------------------------------- processes

_PR_SET_PDEATHSIG = 1
try:
    _prctl: Callable[..., int] | None = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # not Linux
    _prctl = None


def die_with_parent() -> None:
    """``preexec_fn``: the child gets SIGKILL when the thread that started it ends (Linux)."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


async def stop_process(process: asyncio.subprocess.Process | None, timeout: float = 3.0) -> None:
    """SIGTERM ``process`` (its whole session), wait up to ``timeout``, then SIGKILL; reap it."""
    if process is None or process.returncode is not None:
        return
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)  # leader of its own session: its children go too
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(sig)
        try:
            await asyncio.wait_for(process.wait(), wait)
            return
        except asyncio.TimeoutError:
            continue


# ----------------------------------------------------------------------------- Xvfb


class XvfbServer:
    """A running Xvfb.

    Attributes:
        number: the display number.
        name: the display name (``":<number>"``).
        process: the Xvfb process.
    """

    def __init__(self, number: int, process: asyncio.subprocess.Process) -> None:
        self.number = number
        self.name = f":{number}"
        self.process = process
        self._lock_file: Path | None = None
        self._write_lock_file()

    def _write_lock_file(self) -> None:
        """Xvfb makes no ``/tmp/.X{n}-lock`` with ``-displayfd``; write one as an X server does, so
        tools that look for free displays there (``xvfb-run``) skip ours."""
        path = Path(f"/tmp/.X{self.number}-lock")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
        except OSError:
            return
        with os.fdopen(fd, "w") as handle:
            handle.write(f"{self.process.pid:10d}\n")
        self._lock_file = path

    @property
    def alive(self) -> bool:
        """True while Xvfb runs."""
        return self.process.returncode is None

    async def stop(self) -> None:
        """Stop Xvfb and free its number."""
        try:
            await stop_process(self.process)
        finally:
            if self._lock_file is not None:
                with contextlib.suppress(OSError):
                    if self._lock_file.read_text().strip() == str(self.process.pid):
                        self._lock_file.unlink()
                self._lock_file = None
            with _claimed_lock:
                _claimed.discard(self.number)


def _display_free(number: int) -> bool:
    return not (Path(f"/tmp/.X{number}-lock").exists() or Path(f"/tmp/.X11-unix/X{number}").exists())


def _candidates() -> Iterator[int]:
    for number in range(FIRST_DISPLAY, LAST_DISPLAY + 1):
        with _claimed_lock:
            if number in _claimed or not _display_free(number):
                continue
            _claimed.add(number)
        yield number


async def _read_display_number(fd: int, timeout: float) -> str:
    """Read what Xvfb writes to its ``-displayfd`` (the number and a newline; '' on EOF)."""
    loop = asyncio.get_running_loop()
    buffer = b""
    deadline = time.monotonic() + timeout
    while not buffer.endswith(b"\n"):
        ready = loop.create_future()
        loop.add_reader(fd, lambda: ready.done() or ready.set_result(None))
        try:
            await asyncio.wait_for(ready, max(0.0, deadline - time.monotonic()))
        finally:
            loop.remove_reader(fd)
        chunk = os.read(fd, 64)
        if not chunk:
            break
        buffer += chunk
    return buffer.decode().strip()


async def _launch_xvfb(xvfb: str, number: int, width: int, height: int, log_path: Path,
                       timeout: float) -> tuple[asyncio.subprocess.Process, str]:
    """Start ``Xvfb :number``; returns it and what it wrote to ``-displayfd`` ('' if it failed)."""
    read_fd, write_fd = os.pipe()
    try:
        with open(log_path, "ab") as log:
            process = await asyncio.create_subprocess_exec(
                xvfb, f":{number}", "-displayfd", str(write_fd),
                "-screen", "0", f"{width}x{height}x24",
                "-nolisten", "tcp", "-shmem", "-noreset", "-dpi", "96",
                stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                pass_fds=(write_fd,), start_new_session=True, preexec_fn=die_with_parent,
            )
        os.close(write_fd)
        write_fd = -1
        try:
            reported = await _read_display_number(read_fd, timeout)
        except asyncio.TimeoutError:
            reported = ""
    finally:
        os.close(read_fd)
        if write_fd >= 0:
            os.close(write_fd)
    return process, reported


async def start_xvfb(size: tuple[int, int], log_path: Path, xvfb: str = "Xvfb", attempts: int = 8,
                     timeout: float = 20.0) -> XvfbServer:
    """Start Xvfb on a free display of ``size`` (width, height), 24-bit; see the module docstring.

    Raises:
        ControllerError: Xvfb failed to start (the message quotes its log).
    """
    width, height = size
    last_log = ""
    candidates = _candidates()
    for _ in range(attempts):
        number = next(candidates, None)
        if number is None:
            break
        try:
            process, reported = await _launch_xvfb(xvfb, number, width, height, log_path, timeout)
        except BaseException:
            with _claimed_lock:
                _claimed.discard(number)
            raise
        if reported == str(number) and process.returncode is None:
            return XvfbServer(number, process)
        await stop_process(process, timeout=1.0)
        with _claimed_lock:
            _claimed.discard(number)
        last_log = log_path.read_text(errors="replace")[-600:] if log_path.exists() else ""
        # Another server took the number meanwhile: try the next one; any other failure is final.
        if not any(sign in last_log for sign in ("already active", "Cannot establish any listening sockets")):
            break
    raise ControllerError(f"Xvfb did not start (log {log_path}):\n{last_log.strip()}")


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
    return rc


async def start_window_manager(name: str, display: str, config_dir: Path, log_path: Path,
                               env: dict[str, str]) -> asyncio.subprocess.Process:
    """Start window manager ``name`` on ``display`` with its config in ``config_dir``.

    ``env`` is the environment to run it with (the env's ``HOME``/``XDG_*`` are fine).
    """
    executable, _package = WINDOW_MANAGERS[name]
    rc = write_openbox_config(config_dir)
    with open(log_path, "ab") as log:
        return await asyncio.create_subprocess_exec(
            executable, "--config-file", str(rc), "--sm-disable",
            stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            env={**env, "DISPLAY": display}, start_new_session=True, preexec_fn=die_with_parent,
        )


async def wait_for_window_manager(has_wm: Callable[[], bool], process: asyncio.subprocess.Process,
                                  log_path: Path, timeout: float = 10.0) -> None:
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
