"""The state of one desktop env, which the parts of the desktop controller share.

:class:`DesktopState` keeps the options of an
:class:`~hud_gym.controllers.ubuntu.controller.UbuntuController`
(:class:`~hud_gym.envs.ubuntu_options.UbuntuOptions`) with what they resolve to (``in_container``,
``sandbox``, ``limits``) and the desktop session: the session itself (:mod:`.session`: display,
window manager, folders, task processes), the X connection, the XTEST input and the screen
grabber (all set by :mod:`.lifecycle`), and the settle the next observation waits for (set by the
actions). The parts (:mod:`.lifecycle`, :mod:`.input`, :mod:`.desktop`, :mod:`.custom`) each
receive this one object; none of them holds state of its own.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.sandbox.limits import DESKTOP_LIMITS, parse_limits
from hud_gym.controllers.ubuntu.policy import detect_container
from hud_gym.controllers.ubuntu.session import DesktopSession
from hud_gym.controllers.ubuntu.xinput import XInput
from hud_gym.controllers.x11.capture import ScreenCapture
from hud_gym.controllers.x11.connection import XConnection
from hud_gym.envs.ubuntu_options import UbuntuOptions

__all__ = ["DesktopState"]


class DesktopState:
    """The options and the session of one desktop env (see the module docstring).

    Args:
        screen_size: ``(width, height)`` of the display (checked by the controller).
        options: the env's options.

    Attributes:
        screen_size, options: as given.
        in_container, sandbox: ``options.in_container`` and ``options.sandbox`` resolved.
        limits: the episode's limits (``options.limits`` over the defaults).
        display: the X display name (``":57"``), set at start.
        episode_network: the current episode has the network (its task asked for it, and the env
            allows it); what ``download_file`` may reach follows it.
        last_settle: ``{"settle": s, "damage": n, "first_damage": s}`` of the last observation
            (see :meth:`~hud_gym.controllers.x11.connection.XConnection.settle`).
        token: this env's token (carried by its task processes).
        session, conn, input, capture: the session's parts (``None`` until started, after close).
        pending_settle: ``(first_paint, quiet)`` the next observation settles with, or ``None``.
        closed: the desktop is not started, or closed.
    """

    def __init__(self, screen_size: tuple[int, int], options: UbuntuOptions) -> None:
        self.screen_size = screen_size
        self.options = options
        self.in_container = detect_container() if options.in_container is None else options.in_container
        self.sandbox = (not self.in_container) if options.sandbox is None else options.sandbox
        self.sandbox_refused = options.sandbox is False and not self.in_container
        self.episode_network = False  # this episode's task asked for the network, and got it (reset)
        self.limits = parse_limits(options.limits, DESKTOP_LIMITS)
        self.display = ""
        self.last_settle: dict[str, float] = {}
        self.token = uuid.uuid4().hex
        self.session: DesktopSession | None = None
        self.conn: XConnection | None = None
        self.input: XInput | None = None
        self.capture: ScreenCapture | None = None
        self.pending_settle: tuple[float, float] | None = None
        self.closed = True

    # ----------------------------------------------------------------- the live session

    def check_alive(self) -> None:
        """Raise unless the desktop is started and its Xvfb and window manager run.

        Raises:
            ControllerError: not started, closed, or a process of the session died.
        """
        if self.closed or self.session is None or self.conn is None:
            raise ControllerError("the desktop controller is not started")
        self.session.check_alive()

    @property
    def x(self) -> tuple[XConnection, XInput]:
        """The X connection and input of the live desktop (:meth:`check_alive` first)."""
        self.check_alive()
        assert self.conn is not None and self.input is not None
        return self.conn, self.input

    @property
    def io(self) -> tuple[XConnection, XInput]:
        """The X connection and input, unchecked (on the X thread, after ``step`` checked)."""
        assert self.conn is not None and self.input is not None
        return self.conn, self.input

    @property
    def procs(self) -> Any:
        """The episode's task processes (:class:`~hud_gym.controllers.ubuntu.processes.TaskProcesses`)."""
        return self.session.processes if self.session is not None else None

    @property
    def wm(self) -> Any:
        """The window manager's process (``None``: no window manager, or not started)."""
        return self.session.wm if self.session is not None else None

    # ----------------------------------------------------------------- folders

    def _dirs(self) -> DesktopSession:
        if self.session is None:
            raise ControllerError("the desktop controller is not started (reset the env first)")
        return self.session

    @property
    def home(self) -> Path:
        """The env's home directory (emptied and recreated at every reset; the same path in the sandbox)."""
        return self._dirs().home

    @property
    def tmp(self) -> Path:
        """The env's temp directory (``TMPDIR`` of task processes; emptied at every reset)."""
        return self._dirs().tmp

    @property
    def session_dir(self) -> Path:
        """The controller's own files: the WM configuration, the logs of Xvfb, WM and task processes."""
        return self._dirs().session_dir

    @property
    def child_env(self) -> dict[str, str]:
        """The environment of processes the task starts (a copy)."""
        return dict(self.session.child_env) if self.session is not None else {}

    @property
    def file_owner(self) -> tuple[int, int] | None:
        """``(uid, gid)`` that files written into the home for the task must belong to (the
        sandbox uid when running as root), or ``None``."""
        return self._dirs().file_owner

    @property
    def xauthority(self) -> Path:
        """An authority file (mode 0600) holding this display's cookie, for this user's own X tools
        (``XAUTHORITY=... xdotool ...``)."""
        return self._dirs().xauthority
