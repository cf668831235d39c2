"""The options and the state of the desktop controller, and the folders of its session.

:class:`UbuntuState` keeps the options of an
:class:`~hud_gym.controllers.ubuntu.controller.UbuntuController`
(:class:`~hud_gym.envs.ubuntu_options.UbuntuOptions`, ``self.options``) with what they resolve to
(``in_container``, ``sandbox``, ``limits``) and creates
the state its parts work on: the session (:mod:`.session`: display, window manager, folders, task
processes), the X connection, the XTEST input and the screen grabber (all set by
:mod:`.lifecycle`), and the settle the next observation waits for (set by the actions).
"""

from __future__ import annotations

import uuid
from pathlib import Path

from hud_gym.controllers.base import Controller, ControllerError
from hud_gym.controllers.sandbox.limits import DESKTOP_LIMITS, parse_limits
from hud_gym.controllers.ubuntu.policy import detect_container
from hud_gym.controllers.ubuntu.session import DesktopSession
from hud_gym.controllers.ubuntu.xinput import XInput
from hud_gym.controllers.x11.capture import ScreenCapture
from hud_gym.controllers.x11.connection import XConnection
from hud_gym.envs.ubuntu_options import UbuntuOptions

__all__ = ["UbuntuState"]


class UbuntuState(Controller):
    """The desktop controller's options, state and folders (the parts are its subclasses)."""

    gym = "ubuntu"

    def __init__(self, screen_size: tuple[int, int] = (1280, 720), options: UbuntuOptions | None = None) -> None:
        super().__init__((int(screen_size[0]), int(screen_size[1])))
        if self.screen_size[0] < 16 or self.screen_size[1] < 16:
            raise ValueError(f"screen_size must be at least 16x16, got {screen_size}")
        self.options = options if options is not None else UbuntuOptions()
        self.in_container = detect_container() if self.options.in_container is None else self.options.in_container
        self.sandbox = (not self.in_container) if self.options.sandbox is None else self.options.sandbox
        self._sandbox_refused = self.options.sandbox is False and not self.in_container
        self.episode_network = False  # this episode's task asked for the network, and got it (reset)
        self.limits = parse_limits(self.options.limits, DESKTOP_LIMITS)
        self.display = ""
        self.last_settle: dict[str, float] = {}
        self.token = uuid.uuid4().hex

        self._session: DesktopSession | None = None
        self._conn: XConnection | None = None
        self._input: XInput | None = None
        self._capture: ScreenCapture | None = None
        self._pending_settle: tuple[float, float] | None = None  # (first_paint, quiet) for observe()
        self._closed = True

    # ----------------------------------------------------------------- folders

    def _dirs(self) -> DesktopSession:
        if self._session is None:
            raise ControllerError("the desktop controller is not started (reset the env first)")
        return self._session

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
        return dict(self._session.child_env) if self._session is not None else {}

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
