"""Private Xvfb displays: a free display number, cookie authorisation, readiness as an event.

:func:`start_xvfb` picks a free display number (from :data:`FIRST_DISPLAY` up: one whose
``/tmp/.X{n}-lock`` and ``/tmp/.X11-unix/X{n}`` do not exist and that no display of this process
holds, and whose abstract socket name this process can bind: :mod:`.xsocket`) and starts ``Xvfb :n
-auth FILE -displayfd FD -screen 0 WxHx24 -nolisten tcp -nolisten local -noreset``.
Xvfb writes the display number to ``FD`` once it accepts connections, so readiness is an event, not
a sleep; if another process took the number in the meantime Xvfb exits (or, sandboxed, its socket
cannot be linked at the public path), and the next number is tried.

With ``-auth`` only clients presenting the display's cookie (:mod:`~hud_gym.controllers.x11.xauth`)
connect: another local user can neither read the screen nor type into it. And because a client
may turn that check off (``xhost +``), no other local uid may reach the server at all: its socket
file is made 0600 as soon as it is ready, and its abstract socket name is held, unlistened, by this
process (:mod:`.xsocket`). No ``-shmem``: Xvfb's framebuffer is not put in a SysV shared-memory
segment other users could attach.

A ``command`` hook turns Xvfb's argument list into the command actually run: a sandbox launcher
(see :mod:`hud_gym.controllers.sandbox`) whose ``/tmp/.X11-unix`` is a private folder
(:class:`.xsocket.PrivateSocketDir`). The server runs in a session of its own and dies with the
hud-gym loop thread that started it (:mod:`.xlaunch`), so a crashed Python process leaves no
display behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.process_utils import stop_process
from hud_gym.controllers.x11.xlaunch import launch_xvfb
from hud_gym.controllers.x11.xsocket import AbstractNameHold, PrivateSocketDir, restrict_socket

__all__ = ["FIRST_DISPLAY", "LAST_DISPLAY", "XvfbServer", "start_xvfb"]

FIRST_DISPLAY = 50
"""Display numbers are searched from here (below it: the numbers people use for real displays)."""
LAST_DISPLAY = 999

_claimed: set[int] = set()
_claimed_lock = threading.Lock()


class XvfbServer:
    """A running Xvfb.

    Attributes:
        number: the display number.
        name: the display name (``":<number>"``).
        process: the process started (Xvfb, or the sandbox launcher that runs it).
    """

    def __init__(self, number: int, process: asyncio.subprocess.Process, hold: AbstractNameHold) -> None:
        self.number = number
        self.name = f":{number}"
        self.process = process
        self._hold = hold
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
        """Stop Xvfb and free its number (its lock file, and its socket if a SIGKILL left it)."""
        try:
            await stop_process(self.process)
        finally:
            if self._lock_file is not None:
                with contextlib.suppress(OSError):
                    if self._lock_file.read_text().strip() == str(self.process.pid):
                        self._lock_file.unlink()
                self._lock_file = None
            with contextlib.suppress(OSError):
                Path(f"/tmp/.X11-unix/X{self.number}").unlink()
            self._hold.release()
            with _claimed_lock:
                _claimed.discard(self.number)


def _display_free(number: int) -> bool:
    return not (Path(f"/tmp/.X{number}-lock").exists() or Path(f"/tmp/.X11-unix/X{number}").exists())


def _candidates() -> Iterator[tuple[int, AbstractNameHold]]:
    """Free display numbers, each claimed and with its abstract socket name held."""
    for number in range(FIRST_DISPLAY, LAST_DISPLAY + 1):
        with _claimed_lock:
            if number in _claimed or not _display_free(number):
                continue
            _claimed.add(number)
        hold = AbstractNameHold(number)
        if hold.acquire():
            yield number, hold
        else:  # another process holds the number's abstract socket name
            with _claimed_lock:
                _claimed.discard(number)


def ensure_socket_dir() -> None:
    """Create ``/tmp/.X11-unix`` (mode 1777, as X servers do) when it does not exist."""
    folder = Path("/tmp/.X11-unix")
    if not folder.is_dir():
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o1777)
            os.chmod(folder, 0o1777)


Command = Callable[[int, list[str], Path], list[str]]
"""``command(number, xvfb_argv, socket_dir) -> argv``: the command line that runs Xvfb for display
``number`` in a sandbox whose ``/tmp/.X11-unix`` is ``socket_dir`` (:class:`.xsocket.PrivateSocketDir`)."""
Owner = Callable[[int], int]
"""``owner(number) -> uid``: the uid Xvfb runs as for display ``number`` (its socket's owner)."""


def _release(number: int, hold: AbstractNameHold) -> None:
    hold.release()
    with _claimed_lock:
        _claimed.discard(number)


def _log_tail(log_path: Path) -> str:
    return log_path.read_text(errors="replace")[-600:].strip() if log_path.exists() else ""


async def _start_on(
    number: int,
    hold: AbstractNameHold,
    argv: list[str],
    log_path: Path,
    timeout: float,
    env: dict[str, str] | None,
    command: Command | None,
    uid: int,
) -> XvfbServer | None:
    """Xvfb on display ``number``, its socket reachable by ``uid`` only; None: another server took
    the number meanwhile (try the next one).

    Raises:
        ControllerError: Xvfb failed for another reason.
    """
    private = PrivateSocketDir(uid) if command is not None else None
    process: asyncio.subprocess.Process | None = None
    taken = False
    try:
        run = command(number, argv, private.path) if command is not None and private is not None else argv
        process, reported = await launch_xvfb(run, log_path, timeout, env)
        ready = reported == str(number) and process.returncode is None
        if ready and private is not None:
            taken = not private.publish(number)  # the public path exists: another server's
            ready = not taken
        elif ready:
            restrict_socket(number, uid)
    except BaseException:
        if process is not None:
            await stop_process(process, timeout=1.0)
        raise
    finally:
        if private is not None:
            private.remove()
    if ready:
        return XvfbServer(number, process, hold)
    await stop_process(process, timeout=1.0)
    if taken or any(
        sign in _log_tail(log_path) for sign in ("already active", "Cannot establish any listening sockets")
    ):
        return None
    raise ControllerError(f"Xvfb did not start (log {log_path}):\n{_log_tail(log_path)}")


async def start_xvfb(
    size: tuple[int, int],
    log_path: Path,
    xvfb: str = "Xvfb",
    attempts: int = 8,
    timeout: float = 20.0,
    *,
    auth: Path | str | None = None,
    command: Command | None = None,
    env: dict[str, str] | None = None,
    owner: Owner | None = None,
) -> XvfbServer:
    """Start Xvfb on a free display of ``size`` (width, height), 24-bit; see the module docstring.

    Args:
        auth: the authority file Xvfb reads its cookie from (``-auth``; the path as Xvfb sees it).
        command: turns Xvfb's argument list into the command line run (default: as is).
        env: the environment to start it with (default: this process's).
        owner: the uid Xvfb runs as (default: this process's): only it may connect (:mod:`.xsocket`).

    Raises:
        ControllerError: Xvfb failed to start (the message quotes its log).
    """
    width, height = size
    ensure_socket_dir()
    uid = owner or (lambda number: os.geteuid())
    candidates = _candidates()
    for _ in range(attempts):
        candidate = next(candidates, None)
        if candidate is None:
            break
        number, hold = candidate
        argv = [
            xvfb,
            f":{number}",
            *(["-auth", str(auth)] if auth is not None else []),
            "-displayfd",
            "{fd}",
            "-screen",
            "0",
            f"{width}x{height}x24",
            "-nolisten",
            "tcp",
            "-nolisten",
            "local",
            "-noreset",
            "-dpi",
            "96",
        ]
        try:
            server = await _start_on(number, hold, argv, log_path, timeout, env, command, uid(number))
        except BaseException:
            _release(number, hold)
            raise
        if server is not None:
            return server
        _release(number, hold)
    raise ControllerError(f"Xvfb did not start (log {log_path}):\n{_log_tail(log_path)}")
