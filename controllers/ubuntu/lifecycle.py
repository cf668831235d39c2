"""The desktop controller's lifecycle: start the session, reset it between episodes, close it.

Start (lazily, on the env's first reset): the session (:mod:`.session`: Xvfb, the window manager,
the folders, sandboxed unless told otherwise), one persistent X connection, one MIT-SHM screen
grabber, the XTEST input. Every live controller is closed at interpreter exit (a hook of the
hud-gym loop).

Reset: kill the task's processes (the episode's sandbox, or SIGTERM then SIGKILL by process group;
no survivor), close the windows left over, release held keys and buttons, give remapped keycodes
back, empty the clipboard (selections and cut buffers), move the pointer to (0, 0), empty the home
and temp directories.

:class:`DesktopLifecycle` works on the env's :class:`~.state.DesktopState`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import warnings
import weakref

import hud_gym.controllers.ubuntu.windows as xwindows
from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.ubuntu.display import require_programs
from hud_gym.controllers.ubuntu.session import DesktopSession
from hud_gym.controllers.ubuntu.state import DesktopState
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


class DesktopLifecycle:
    """Start, reset, health and close (a part of :class:`~.controller.UbuntuController`).

    Args:
        state: the env's desktop state, which this part starts, resets and closes.
    """

    def __init__(self, state: DesktopState) -> None:
        self.state = state

    async def start(self) -> None:
        """Start Xvfb, the window manager, the X connection and the screen grabber.

        Raises:
            DesktopNotAvailableError: Xvfb, the window manager or the sandbox is not installed.
            ControllerError: they did not start.
        """
        require_programs(self.state.options.window_manager)
        if self.state.sandbox_refused:
            warnings.warn(
                "hud/Ubuntu-v0 with sandbox=False: the desktop's programs run as this process's user, "
                "with this host's files and network",
                stacklevel=2,
            )
        self.state.closed = False
        _live.add(self)
        add_shutdown_hook(_close_all)
        try:
            self.state.session = session = DesktopSession(
                self.state.screen_size,
                self.state.options.window_manager,
                sandbox=self.state.sandbox,
                token=self.state.token,
                in_container=self.state.in_container,
                limits=self.state.limits,
            )
            await session.start()
            self.state.display = session.display
            with process_authority().connecting():
                self.state.conn = conn = XConnection(self.state.display)
                self.state.capture = ScreenCapture(self.state.display, self.state.screen_size)
            await session.start_window_manager(lambda: xwindows.has_window_manager(conn))
            self.state.input = XInput(conn)
        except BaseException:
            await self.close()
            raise

    async def health(self) -> bool:
        """True while Xvfb, the window manager and the X connection are alive (and the episode's
        processes within their limits)."""
        try:
            await self.check_limits()
            self.state.check_alive()
            assert self.state.conn is not None
            await self.state.conn.call(self.state.conn.sync)
        except ControllerError:
            return False
        return True

    async def check_limits(self) -> None:
        """End the episode whose processes reached one of their limits (:mod:`hud_gym.controllers.sandbox.limits`).

        Raises:
            ControllerError: one was reached (the message names it); the processes are killed.
        """
        procs = self.state.procs
        check = getattr(procs, "violation", None)
        violation = check() if check is not None else None
        if violation is not None:
            await procs.kill_all(self.state.options.kill_grace)
            raise ControllerError(f"{violation}; the episode's processes were killed")

    async def reset(self, task: Task | None, seed: int | None) -> None:
        """A clean desktop for the next episode; see the module docstring.

        Raises:
            PermissionError: the task asks for the network (``config={"network": true}``) and the
                env was not made with ``allow_network=True``.
        """
        conn, xin = self.state.x
        network = bool((task.config or {}).get("network")) if task is not None else False
        if network and not self.state.options.allow_network:
            raise PermissionError(
                f"task {task.id if task else ''!r} asks for the network (config.network): create the "
                "env with allow_network=True to give it the host's network"
            )
        assert self.state.procs is not None and self.state.session is not None
        self.state.episode_network = False
        await self.state.procs.kill_all(self.state.options.kill_grace)
        try:
            await conn.run(lambda: self._x_reset(conn, xin))
        except ControllerError as exc:
            raise ControllerError(f"the X server of {self.state.display} failed during reset: {exc}") from exc
        self.state.session.prepare_episode(network)
        self.state.episode_network = network
        await conn.call(conn.begin)
        # Whatever the setup draws is settled; with no drawing at all there is nothing to wait for.
        self.state.pending_settle = (0.0, max(self.state.options.quiet, 0.02))

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
        managed = self.state.wm is not None
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
        if self.state.closed and self.state.session is None:
            return
        self.state.closed = True
        _live.discard(self)
        session, self.state.session = self.state.session, None
        if session is not None and session.processes is not None:
            with contextlib.suppress(Exception):
                await session.processes.kill_all(self.state.options.kill_grace)
        capture, self.state.capture = self.state.capture, None
        if self.state.conn is not None:  # never blocks: a frozen X server holds its thread, not this loop
            if capture is not None:
                self.state.conn.thread.call_soon(capture.close)
            self.state.conn.close()
            self.state.conn = None
        elif capture is not None:
            capture.close()
        self.state.input = None
        if session is not None:
            await session.stop(self.state.options.kill_grace)
