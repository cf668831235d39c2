"""The desktop controller's lifecycle: start the session, reset it between episodes, close it.

Start (lazily, on the env's first reset): the session (:mod:`.session`: Xvfb, the window manager,
the folders, sandboxed unless told otherwise), one persistent X connection, one MIT-SHM screen
grabber, the XTEST input. Every live controller is closed at interpreter exit (a hook of the
hud-gym loop).

Reset: kill the task's processes (the episode's sandbox, or SIGTERM then SIGKILL by process group;
no survivor), close the windows left over, release held keys and buttons, give remapped keycodes
back, empty the clipboard (selections and cut buffers), move the pointer to (0, 0), empty the home
and temp directories.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import warnings
import weakref
from typing import Any

import hud_gym.controllers.ubuntu.windows as xwindows
from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.ubuntu.display import require_programs
from hud_gym.controllers.ubuntu.session import DesktopSession
from hud_gym.controllers.ubuntu.state import UbuntuState
from hud_gym.controllers.ubuntu.xinput import XInput
from hud_gym.controllers.x11.capture import ScreenCapture
from hud_gym.controllers.x11.connection import XConnection
from hud_gym.controllers.x11.xauth import process_authority
from hud_gym.core.loop import add_shutdown_hook
from hud_gym.task import Task

__all__ = ["DesktopLifecycle"]

_live: weakref.WeakSet[DesktopLifecycle] = weakref.WeakSet()


async def _close_all() -> None:
    for controller in list(_live):
        with contextlib.suppress(Exception):
            await controller.close()


class DesktopLifecycle(UbuntuState):
    """Start, reset, health and close (a part of :class:`~.controller.UbuntuController`)."""

    async def start(self) -> None:
        """Start Xvfb, the window manager, the X connection and the screen grabber.

        Raises:
            DesktopNotAvailableError: Xvfb, the window manager or the sandbox is not installed.
            ControllerError: they did not start.
        """
        require_programs(self.options.window_manager)
        if self._sandbox_refused:
            warnings.warn(
                "hud/Ubuntu-v0 with sandbox=False: the desktop's programs run as this process's user, "
                "with this host's files and network",
                stacklevel=2,
            )
        self._closed = False
        _live.add(self)
        add_shutdown_hook(_close_all)
        try:
            self._session = session = DesktopSession(
                self.screen_size,
                self.options.window_manager,
                sandbox=self.sandbox,
                token=self.token,
                in_container=self.in_container,
                limits=self.limits,
            )
            await session.start()
            self.display = session.display
            with process_authority().connecting():
                self._conn = conn = XConnection(self.display)
                self._capture = ScreenCapture(self.display, self.screen_size)
            await session.start_window_manager(lambda: xwindows.has_window_manager(conn))
            self._input = XInput(conn)
        except BaseException:
            await self.close()
            raise

    async def health(self) -> bool:
        """True while Xvfb, the window manager and the X connection are alive (and the episode's
        processes within their limits)."""
        try:
            await self._check_limits()
            self._check_alive()
            assert self._conn is not None
            await self._conn.call(self._conn.sync)
        except ControllerError:
            return False
        return True

    def _check_alive(self) -> None:
        if self._closed or self._session is None or self._conn is None:
            raise ControllerError("the desktop controller is not started")
        self._session.check_alive()

    async def _check_limits(self) -> None:
        """End the episode whose processes reached one of their limits (:mod:`hud_gym.controllers.sandbox.limits`).

        Raises:
            ControllerError: one was reached (the message names it); the processes are killed.
        """
        procs = self._procs
        check = getattr(procs, "violation", None)
        violation = check() if check is not None else None
        if violation is not None:
            await procs.kill_all(self.options.kill_grace)
            raise ControllerError(f"{violation}; the episode's processes were killed")

    @property
    def _procs(self) -> Any:
        """The episode's task processes (:class:`~hud_gym.controllers.ubuntu.processes.TaskProcesses`)."""
        return self._session.processes if self._session is not None else None

    @property
    def _wm(self) -> Any:
        return self._session.wm if self._session is not None else None

    @property
    def _x(self) -> tuple[XConnection, XInput]:
        self._check_alive()
        assert self._conn is not None and self._input is not None
        return self._conn, self._input

    async def reset(self, task: Task | None, seed: int | None) -> None:
        """A clean desktop for the next episode; see the module docstring.

        Raises:
            PermissionError: the task asks for the network (``config={"network": true}``) and the
                env was not made with ``allow_network=True``.
        """
        conn, xin = self._x
        network = bool((task.config or {}).get("network")) if task is not None else False
        if network and not self.options.allow_network:
            raise PermissionError(
                f"task {task.id if task else ''!r} asks for the network (config.network): create the "
                "env with allow_network=True to give it the host's network"
            )
        assert self._procs is not None and self._session is not None
        self.episode_network = False
        await self._procs.kill_all(self.options.kill_grace)
        try:
            await conn.run(lambda: self._x_reset(conn, xin))
        except ControllerError as exc:
            raise ControllerError(f"the X server of {self.display} failed during reset: {exc}") from exc
        self._session.prepare_episode(network)
        self.episode_network = network
        await conn.call(conn.begin)
        # Whatever the setup draws is settled; with no drawing at all there is nothing to wait for.
        self._pending_settle = (0.0, max(self.options.quiet, 0.02))

    async def _x_reset(self, conn: XConnection, xin: XInput) -> None:
        """The X part of :meth:`reset` (on the X connection's thread)."""
        await self._close_windows(conn)
        xwindows.clear_selections(conn)
        xin.release_all()
        xin.restore_keymap()
        xin.move(0, 0)
        conn.display.set_input_focus(1, 0, 0)  # X.PointerRoot, RevertToNone, CurrentTime
        conn.sync()

    async def _close_windows(self, conn: XConnection) -> None:
        """Kill the X clients of the windows left after the task processes died (up to 2 s)."""
        managed = self._wm is not None
        deadline = time.monotonic() + 2.0
        killed: set[int] = set()
        while True:
            conn.sync()
            left = xwindows.list_windows(conn, managed)
            if not left or time.monotonic() > deadline:
                return
            for window in left:
                if window["id"] not in killed:
                    conn.display.create_resource_object("window", window["id"]).kill_client()
                    killed.add(window["id"])
            await asyncio.sleep(0.01)

    async def close(self) -> None:
        """Stop the task processes, the window manager and Xvfb; remove the directories."""
        if self._closed and self._session is None:
            return
        self._closed = True
        _live.discard(self)
        session, self._session = self._session, None
        if session is not None and session.processes is not None:
            with contextlib.suppress(Exception):
                await session.processes.kill_all(self.options.kill_grace)
        capture, self._capture = self._capture, None
        if self._conn is not None:  # never blocks: a frozen X server holds its thread, not this loop
            if capture is not None:
                self._conn.thread.call_soon(capture.close)
            self._conn.close()
            self._conn = None
        elif capture is not None:
            capture.close()
        self._input = None
        if session is not None:
            await session.stop(self.options.kill_grace)

    def pids(self) -> dict[str, Any]:
        """Process ids of the session (for tests): ``xvfb``, ``wm`` (the processes started for them:
        their sandboxes' launchers when sandboxed) and the live ``tasks`` (the episode's sandbox's
        processes; unsandboxed: group members, their descendants, processes carrying the env's token)."""
        if self._session is None:
            return {"xvfb": None, "wm": None, "tasks": set()}
        return self._session.pids()
