"""The options and the state of the desktop controller, and the folders of its session.

:class:`UbuntuState` checks and keeps the options of an
:class:`~hud_gym.controllers.ubuntu.controller.UbuntuController` (documented there) and creates
the state its parts work on: the session (:mod:`.session`: display, window manager, folders, task
processes), the X connection, the XTEST input and the screen grabber (all set by
:mod:`.lifecycle`), and the settle the next observation waits for (set by the actions).
"""

from __future__ import annotations

import uuid
from pathlib import Path

from hud_gym.controllers.base import Controller, ControllerError
from hud_gym.controllers.ubuntu.display import WINDOW_MANAGERS
from hud_gym.controllers.ubuntu.policy import detect_container
from hud_gym.controllers.ubuntu.session import DesktopSession
from hud_gym.controllers.ubuntu.xinput import XInput
from hud_gym.controllers.x11.capture import ScreenCapture
from hud_gym.controllers.x11.connection import XConnection

__all__ = ["UbuntuState"]


class UbuntuState(Controller):
    """The desktop controller's options, state and folders (the parts are its subclasses)."""

    gym = "ubuntu"

    def __init__(
        self,
        screen_size: tuple[int, int] = (1280, 720),
        *,
        allow_shell: bool = False,
        allow_absolute_paths: bool = False,
        window_manager: str | None = "openbox",
        in_container: bool | None = None,
        sandbox: bool | None = None,
        allow_network: bool = False,
        first_paint: float = 0.05,
        quiet: float = 0.005,
        settle_limit: float = 1.0,
        kill_grace: float = 0.5,
        launch_timeout: float = 10.0,
    ) -> None:
        super().__init__((int(screen_size[0]), int(screen_size[1])))
        if window_manager is not None and window_manager not in WINDOW_MANAGERS:
            raise ValueError(
                f"window_manager must be one of {', '.join(WINDOW_MANAGERS)} or None, got {window_manager!r}"
            )
        if self.screen_size[0] < 16 or self.screen_size[1] < 16:
            raise ValueError(f"screen_size must be at least 16x16, got {screen_size}")
        self.allow_shell = bool(allow_shell)
        self.allow_absolute_paths = bool(allow_absolute_paths)
        self.window_manager = window_manager
        self.in_container = detect_container() if in_container is None else bool(in_container)
        self.sandbox = (not self.in_container) if sandbox is None else bool(sandbox)
        self._sandbox_refused = sandbox is False and not self.in_container
        self.allow_network = bool(allow_network)
        self.episode_network = False  # this episode's task asked for the network, and got it (reset)
        self.first_paint = first_paint
        self.quiet = quiet
        self.settle_limit = settle_limit
        self.kill_grace = kill_grace
        self.launch_timeout = launch_timeout
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
