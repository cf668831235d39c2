"""The desktop controller of ``hud/Ubuntu-v0``: one Xvfb display, a window manager and real X input.

Session (started lazily, on the env's first reset; :mod:`~hud_gym.controllers.ubuntu.session`): a
private Xvfb display (a free number from :data:`~hud_gym.controllers.x11.xvfb.FIRST_DISPLAY` up)
authorised by a fresh cookie, openbox with a minimal configuration (or no WM), a private home and
temp directory, one persistent X connection, one MIT-SHM screen grabber. By default (``sandbox``)
all of it runs in bubblewrap sandboxes as an unprivileged uid (:mod:`~hud_gym.controllers.ubuntu.sandboxed`),
the task processes (:meth:`UbuntuController.spawn`, :meth:`~UbuntuController.run`, the ``launch``
action, the clipboard owner) in one sandbox per episode; with ``sandbox=False`` they run in one
process group per episode (:mod:`~hud_gym.controllers.ubuntu.processes`) as this process's user.

Reset: kill the task's processes (the episode's sandbox, or SIGTERM then SIGKILL by process group;
no survivor), close the windows left over, release held keys and buttons, give remapped keycodes
back, move the pointer to (0, 0), empty the home and temp directories.

Actions: XTEST input (:mod:`~hud_gym.controllers.ubuntu.xinput`), synced with the server after each
action. Scroll amounts are pixels, positive = down/right, one wheel click per
:data:`PIXELS_PER_WHEEL_CLICK` pixels (rounded; a non-zero amount scrolls at least one click).

Observation: :meth:`~hud_gym.controllers.ubuntu.connection.XConnection.settle` (XSync, then XDamage
events until the repaints stop) and one MIT-SHM grab; the text is ``"Focused window: <title>"``.

Safety: a task's or an agent's programs reach only the sandbox (see the README's "Security model").
``launch`` starts only the apps of :data:`LAUNCHABLE` with checked arguments unless shell commands
are allowed (``allow_shell=True``, or inside the gym's container: then they run in the sandbox);
paths of tasks stay inside the env's home unless ``allow_absolute_paths=True``; the network is
there only for a task that asks for it (``config={"network": true}``) on an env made with
``allow_network=True``.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import shutil
import time
import uuid
import warnings
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hud_gym.actions import (
    ActionError,
    CLAAction,
    ClickAction,
    CustomAction,
    DragAction,
    KeyDownAction,
    KeyUpAction,
    MoveAction,
    Point,
    PositionFetch,
    PressAction,
    ScreenshotFetch,
    ScrollAction,
    TypeAction,
    WaitAction,
)
from hud_gym.controllers.base import ActionOutcome, Controller, ControllerError, Frame
from hud_gym.controllers.dispatch import ActionTable, CustomActions
from hud_gym.controllers.ubuntu import windows as xwindows
from hud_gym.controllers.ubuntu.apps import KNOWN_APPS
from hud_gym.controllers.ubuntu.capture import ScreenCapture
from hud_gym.controllers.ubuntu.connection import X_ERRORS, XConnection
from hud_gym.controllers.ubuntu.display import WINDOW_MANAGERS, DesktopNotAvailableError, require_programs
from hud_gym.controllers.ubuntu.keysyms import char_keysym, key_keysym
from hud_gym.controllers.ubuntu.session import DesktopSession
from hud_gym.controllers.ubuntu.xinput import BUTTONS, KEYMAP_SETTLE, XInput
from hud_gym.controllers.x11.xauth import process_authority
from hud_gym.core.loop import add_shutdown_hook
from hud_gym.evaluation.patterns import compile_task_pattern
from hud_gym.keys import UnknownKeyError, normalize_keys
from hud_gym.task import Task

__all__ = ["CUSTOM_ACTIONS", "LAUNCHABLE", "PIXELS_PER_WHEEL_CLICK", "UbuntuController", "wheel_clicks"]

Settled = tuple[ActionOutcome, float | None]
"""What an action handler returns: the outcome, and the quiet time the observation settles with."""

PIXELS_PER_WHEEL_CLICK = 100
"""Scroll pixels per mouse-wheel click (X buttons 4-7), as HUD's xdo executor."""
MAX_WHEEL_CLICKS = 200

LAUNCHABLE: dict[str, str] = {
    "xterm": "a terminal (args: -title/-T TITLE, -geometry/-g GEOM, -fa FONT, -fs SIZE, -bg/-fg COLOUR, -name NAME)",
    "editor": "the hud-gym text editor (args: [FILE], a path inside the home)",
    "eventlog": "the hud-gym event-log test window (args: --log FILE --title TITLE --geometry +X+Y)",
    "xcalc": "a calculator (no args)",
    "xclock": "a clock (no args)",
    "xeyes": "eyes following the pointer (no args)",
    "xlogo": "the X logo (no args)",
    "xedit": "a text editor (args: [FILE], a path inside the home)",
}
"""Apps ``launch`` may start by name without shell permission, with what their args may be."""

_XTERM_OPTIONS = frozenset({"-title", "-T", "-geometry", "-g", "-fa", "-fs", "-bg", "-fg", "-name"})
_EVENTLOG_OPTIONS = frozenset({"--log", "--title", "--geometry"})

_live: weakref.WeakSet[UbuntuController] = weakref.WeakSet()


async def _close_all() -> None:
    for controller in list(_live):
        with contextlib.suppress(Exception):
            await controller.close()


def wheel_clicks(pixels: int) -> int:
    """Wheel clicks for a scroll of ``pixels``: ``pixels / PIXELS_PER_WHEEL_CLICK`` rounded half up,
    sign kept, at least one click for a non-zero amount (``1 -> 1``, ``150 -> 2``, ``250 -> 3``)."""
    if pixels == 0:
        return 0
    clicks = min(MAX_WHEEL_CLICKS, max(1, math.floor(abs(pixels) / PIXELS_PER_WHEEL_CLICK + 0.5)))
    return clicks if pixels > 0 else -clicks


def _detect_container() -> bool:
    # Only the gym's own image says so (docker/ubuntu sets it): a generic container marker such as
    # /.dockerenv is also present on many hosts and CI runners, where the shell must stay refused.
    return os.environ.get("HUD_GYM_IN_CONTAINER") == "1"


class UbuntuController(Controller):
    """Drives one private X desktop; see the module docstring.

    Args:
        screen_size: ``(width, height)`` of the display.
        allow_shell: allow what runs arbitrary commands (``launch`` of any program; the setup
            functions that run shell commands check :meth:`shell_allowed`).
        allow_absolute_paths: let task paths leave the env's home (see :meth:`resolve_path`).
        window_manager: ``"openbox"`` or ``None`` (bare X: windows get no title bar nor focus
            handling).
        in_container: running inside the gym's container, where shell commands are allowed;
            ``None`` detects it: ``HUD_GYM_IN_CONTAINER=1``, set by the ``docker/ubuntu`` image
            (``/.dockerenv`` is not enough: many hosts and CI runners are themselves containers).
        sandbox: run the desktop (Xvfb, WM, apps, task processes) in bubblewrap sandboxes as an
            unprivileged uid; ``None``: yes, except inside the gym's container (itself the
            sandbox). ``False`` runs them as this process's user, with a warning.
        allow_network: let a task that asks for it (``config={"network": true}``) have the host's
            network in its sandbox; without, the sandbox has only its own loopback.
        first_paint: seconds to wait for the first repaint after input before observing.
        quiet: seconds without repaint after which the screen is settled.
        settle_limit: most seconds an observation waits for the screen to settle.
        kill_grace: seconds task processes get between SIGTERM and SIGKILL.
        launch_timeout: seconds ``launch`` waits for the app's first window.

    Attributes:
        display: the X display name (``":57"``), set by :meth:`start`.
        home: the env's home directory (emptied at every reset).
        tmp: the env's temp directory (emptied at every reset).
        child_env: the environment of task processes (``DISPLAY``, ``HOME``, ``TMPDIR``, ...).
        allow_shell, allow_absolute_paths, in_container, sandbox, allow_network: as given
            (``in_container`` and ``sandbox`` resolved).
        last_settle: ``{"settle": s, "damage": n, "first_damage": s}`` of the last observation
            (see :meth:`~hud_gym.controllers.ubuntu.connection.XConnection.settle`).
    """

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
            raise ValueError(f"window_manager must be one of {', '.join(WINDOW_MANAGERS)} or None, got {window_manager!r}")
        if self.screen_size[0] < 16 or self.screen_size[1] < 16:
            raise ValueError(f"screen_size must be at least 16x16, got {screen_size}")
        self.allow_shell = bool(allow_shell)
        self.allow_absolute_paths = bool(allow_absolute_paths)
        self.window_manager = window_manager
        self.in_container = _detect_container() if in_container is None else bool(in_container)
        self.sandbox = (not self.in_container) if sandbox is None else bool(sandbox)
        self._sandbox_refused = sandbox is False and not self.in_container
        self.allow_network = bool(allow_network)
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

    # ================================================================= paths, permissions

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

    def shell_allowed(self) -> bool:
        """True when arbitrary commands may run (``allow_shell``, or inside the gym's container)."""
        return self.allow_shell or self.in_container

    def require_shell(self, what: str) -> None:
        """Raise unless :meth:`shell_allowed`.

        Raises:
            PermissionError: naming ``what`` and how to allow it.
        """
        if not self.shell_allowed():
            raise PermissionError(
                f"{what} runs arbitrary commands: create the env with allow_shell=True or run it inside its "
                "container (docker/ubuntu)"
            )

    def resolve_path(self, path: str) -> Path:
        """A task's path as a real path: relative paths and ``~/...`` resolve inside :attr:`home`.

        Raises:
            PermissionError: an absolute path, or one leaving the home (``..``, a symlink), unless
                the env was created with ``allow_absolute_paths=True``.
        """
        text = os.fspath(path)
        home = self.home
        if text == "~" or text.startswith("~/"):
            text = text[2:]
        elif text.startswith("~"):
            if not self.allow_absolute_paths:
                raise PermissionError(f"path {path!r} is outside the env's home: create the env with allow_absolute_paths=True to use it")
            return Path(os.path.expanduser(text))
        if os.path.isabs(text):
            if not self.allow_absolute_paths:
                raise PermissionError(
                    f"absolute path {path!r} is outside the env's home ({home}): create the env with "
                    "allow_absolute_paths=True to use it"
                )
            return Path(os.path.normpath(text))
        candidate = Path(os.path.normpath(home / text))
        real_home = home.resolve()
        inside = candidate == home or home in candidate.parents
        if inside:
            real = candidate.resolve()
            inside = real == real_home or real_home in real.parents
        if not inside and not self.allow_absolute_paths:
            raise PermissionError(
                f"path {path!r} leaves the env's home ({home}): create the env with allow_absolute_paths=True to use it"
            )
        return candidate

    # ================================================================= lifecycle

    async def start(self) -> None:
        """Start Xvfb, the window manager, the X connection and the screen grabber.

        Raises:
            DesktopNotAvailableError: Xvfb, the window manager or the sandbox is not installed.
            ControllerError: they did not start.
        """
        require_programs(self.window_manager)
        if self._sandbox_refused:
            warnings.warn("hud/Ubuntu-v0 with sandbox=False: the desktop's programs run as this process's user, "
                          "with this host's files and network", stacklevel=2)
        self._closed = False
        _live.add(self)
        add_shutdown_hook(_close_all)
        try:
            self._session = session = DesktopSession(self.screen_size, self.window_manager, sandbox=self.sandbox,
                                                     token=self.token, in_container=self.in_container)
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
        """True while Xvfb, the window manager and the X connection are alive."""
        try:
            self._check_alive()
            assert self._conn is not None
            self._conn.sync()
        except ControllerError:
            return False
        return True

    def _check_alive(self) -> None:
        if self._closed or self._session is None or self._conn is None:
            raise ControllerError("the desktop controller is not started")
        self._session.check_alive()

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
        if network and not self.allow_network:
            raise PermissionError(f"task {task.id if task else ''!r} asks for the network (config.network): create the "
                                  "env with allow_network=True to give it the host's network")
        assert self._procs is not None and self._session is not None
        await self._procs.kill_all(self.kill_grace)
        try:
            await self._close_windows(conn)
            xin.release_all()
            xin.restore_keymap()
            xin.move(0, 0)
            conn.display.set_input_focus(1, 0, 0)  # X.PointerRoot, RevertToNone, CurrentTime
            conn.sync()
        except X_ERRORS as exc:
            raise ControllerError(f"the X server of {self.display} failed during reset: {exc}") from exc
        self._session.prepare_episode(network)
        conn.begin()
        # Whatever the setup draws is settled; with no drawing at all there is nothing to wait for.
        self._pending_settle = (0.0, max(self.quiet, 0.02))

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
                await session.processes.kill_all(self.kill_grace)
        if self._capture is not None:
            self._capture.close()
            self._capture = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._input = None
        if session is not None:
            await session.stop(self.kill_grace)

    def pids(self) -> dict[str, Any]:
        """Process ids of the session (for tests): ``xvfb``, ``wm`` (the processes started for them:
        their sandboxes' launchers when sandboxed) and the live ``tasks`` (the episode's sandbox's
        processes; unsandboxed: group members, their descendants, processes carrying the env's token)."""
        if self._session is None:
            return {"xvfb": None, "wm": None, "tasks": set()}
        return self._session.pids()

    # ================================================================= processes

    async def spawn(self, argv: list[str], *, cwd: Path | None = None) -> asyncio.subprocess.Process:
        """Start ``argv`` for the task: in the episode's process group (killed at reset and close),
        with :attr:`child_env`, in ``cwd`` (default: the home), output to a log in the session folder.

        Raises:
            FileNotFoundError: no such program.
        """
        self._check_alive()
        assert self._procs is not None
        return await self._procs.spawn(list(argv), cwd=cwd if cwd is not None else self.home)

    async def run(self, argv: list[str] | str, timeout: float = 10.0) -> tuple[int, str, str]:
        """Run ``argv`` (a string: ``bash -lc <string>``) in the home, in the episode's process group,
        to completion; returns ``(returncode, stdout, stderr)``.

        Raises:
            TimeoutError: it ran longer than ``timeout`` seconds (it and its children were killed).
        """
        self._check_alive()
        assert self._procs is not None
        command = ["bash", "-lc", argv] if isinstance(argv, str) else list(argv)
        return await self._procs.run(command, timeout=timeout, cwd=self.home)

    # ================================================================= windows, clipboard

    async def windows(self) -> list[dict[str, Any]]:
        """The mapped top-level windows: ``{"id", "title", "pid", "class", "geometry": (x, y, w, h)}``
        (``pid``: the host pid of the window's process, from its ``_NET_WM_PID``; ``None`` if unknown)."""
        conn, _ = self._x
        try:
            return self._host_pids(xwindows.list_windows(conn, self._wm is not None))
        except X_ERRORS as exc:
            raise ControllerError(f"cannot list the windows of {self.display}: {exc}") from exc

    def _host_pids(self, windows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Sandboxed apps set ``_NET_WM_PID`` to their pid inside the sandbox: translate to the host's."""
        translate = getattr(self._procs, "host_pids", None)
        if translate is None or not windows:
            return windows
        mapping = translate()
        return [{**w, "pid": mapping.get(w["pid"]) if w.get("pid") is not None else None} for w in windows]

    async def focused_window(self) -> dict[str, Any] | None:
        """The window with the keyboard focus (as in :meth:`windows`), or ``None``."""
        conn, _ = self._x
        try:
            window = xwindows.focused_window(conn, self._wm is not None)
            return self._host_pids([window])[0] if window is not None else None
        except X_ERRORS as exc:
            raise ControllerError(f"cannot read the focus of {self.display}: {exc}") from exc

    async def wait_for_window(self, title_pattern: str, timeout: float = 10.0) -> dict[str, Any]:
        """The first window whose title matches ``title_pattern`` (``re.search``; a task pattern,
        so matched by :mod:`hud_gym.evaluation.patterns`), polling every 20 ms.

        Raises:
            TimeoutError: none within ``timeout`` seconds; the message names the pattern and the titles seen.
            PatternError: an invalid pattern, or one that backtracks past its (short) match timeout.
        """
        pattern = compile_task_pattern(title_pattern, timeout_s=0.05)
        deadline = time.monotonic() + timeout
        while True:
            windows = await self.windows()
            for window in windows:
                if pattern.search(window["title"]):
                    return window
            if time.monotonic() >= deadline:
                titles = [w["title"] for w in windows]
                raise TimeoutError(f"no window title matches {title_pattern!r} after {timeout} s; windows: {titles}")
            await asyncio.sleep(0.02)

    async def clipboard_get(self) -> str:
        """The text of the CLIPBOARD selection ('' when nobody owns it)."""
        self._require_xclip()
        assert self._procs is not None
        code, out, _err = await self._procs.run(["xclip", "-selection", "clipboard", "-o"], timeout=5.0)
        return out if code == 0 else ""

    async def clipboard_set(self, text: str) -> None:
        """Own the CLIPBOARD selection with ``text`` (the owner, an ``xclip`` process, is a task
        process: killed at reset and close)."""
        self._require_xclip()
        assert self._procs is not None
        # xclip forks a child that owns the selection (and holds no pipe of ours) and exits.
        process = await self._procs.spawn(["xclip", "-selection", "clipboard", "-i"], cwd=self.home,
                                          stdin=asyncio.subprocess.PIPE)
        assert process.stdin is not None
        process.stdin.write(text.encode())
        await process.stdin.drain()
        process.stdin.close()
        try:
            code = await asyncio.wait_for(process.wait(), 5.0)
        except asyncio.TimeoutError:
            raise ControllerError("xclip did not take the clipboard within 5 s") from None
        if code != 0:
            raise ControllerError(f"xclip could not take the clipboard (exit code {code})")
        # xclip forks a child that owns the selection; wait until it answers with our text.
        deadline = time.monotonic() + 2.0
        while await self.clipboard_get() != text and time.monotonic() < deadline:
            await asyncio.sleep(0.01)

    def _require_xclip(self) -> None:
        self._check_alive()
        if shutil.which("xclip", path=self.child_env.get("PATH")) is None:
            raise DesktopNotAvailableError("the clipboard needs xclip: run `sudo apt-get install xclip`")

    # ================================================================= actions

    async def step(self, action: CLAAction) -> ActionOutcome:
        """Execute one CLA action (screen pixels) with XTEST input, then ``XSync``.

        Raises:
            ActionError: an invalid action (unknown custom action, a disallowed launch, ...).
            ControllerError: the display is gone.
        """
        conn, _ = self._x
        conn.begin()
        try:
            outcome, settle = await ACTIONS.run(self, action)
            conn.sync()
        except X_ERRORS as exc:
            self._check_alive()
            raise ControllerError(f"X input on {self.display} failed: {type(exc).__name__}: {exc}") from exc
        if settle is not None:
            first, quiet = self._pending_settle or (0.0, 0.0)
            self._pending_settle = (max(first, self.first_paint), max(quiet, settle))
        return outcome

    # One handler per CLA type (the table is :data:`ACTIONS`, after the class). Each returns the
    # outcome and the quiet time the observation should settle with (``None``: no input was sent).

    @property
    def _io(self) -> tuple[XConnection, XInput]:
        """The X connection and input of a started desktop (``step`` checked it is alive)."""
        assert self._conn is not None and self._input is not None
        return self._conn, self._input

    async def _click(self, action: ClickAction) -> Settled:
        conn, xin = self._io
        await self._holding(conn, xin, action.hold_keys, lambda: self._clicks(conn, xin, action))
        return ActionOutcome(), self.quiet

    async def _press(self, action: PressAction) -> Settled:
        conn, xin = self._io
        await self._keys_ready(conn, xin, action.keys)
        xin.press(action.keys)
        return ActionOutcome(), self.quiet

    async def _key_down(self, action: KeyDownAction) -> Settled:
        conn, xin = self._io
        await self._keys_ready(conn, xin, action.keys)
        xin.key_down(action.keys)
        return ActionOutcome(), self.quiet

    async def _key_up(self, action: KeyUpAction) -> Settled:
        _, xin = self._io
        xin.key_up(action.keys)
        return ActionOutcome(), self.quiet

    async def _type(self, action: TypeAction) -> Settled:
        conn, xin = self._io
        for chunk in xin.chunks(action.text.replace("\r\n", "\n")):
            await self._map_keysyms(conn, xin, [char_keysym(c) for c in chunk])
            xin.type_text(chunk)
        if action.enter_after:
            xin.press(["enter"])
        return ActionOutcome(), self.quiet

    async def _scroll(self, action: ScrollAction) -> Settled:
        conn, xin = self._io
        await self._holding(conn, xin, action.hold_keys, lambda: self._scroll_at(xin, action))
        return ActionOutcome(), self.quiet

    async def _move(self, action: MoveAction) -> Settled:
        _, xin = self._io
        if action.point is not None:
            xin.move(*self._clamp(xin, action.point))
        elif action.offset is not None:
            x, y, _ = xin.pointer()
            xin.move(*self._clamp(xin, Point(x=x + action.offset.x, y=y + action.offset.y)))
        return ActionOutcome(), self.quiet

    async def _drag(self, action: DragAction) -> Settled:
        conn, xin = self._io
        await self._holding(conn, xin, action.hold_keys, lambda: self._drag_along(conn, xin, action))
        return ActionOutcome(), self.quiet

    async def _wait(self, action: WaitAction) -> Settled:
        await asyncio.sleep(action.time / 1000)
        return ActionOutcome(), None

    async def _position(self, action: PositionFetch) -> Settled:
        x, y, _mask = self._io[1].pointer()
        return ActionOutcome(info={"position": (x, y)}), None

    async def _screenshot(self, action: ScreenshotFetch) -> Settled:
        return ActionOutcome(), None  # the observation after every step is the screenshot

    async def _custom(self, action: CustomAction) -> Settled:
        return await CUSTOM.run(self, action)

    def _clamp(self, xin: XInput, point: Point | None) -> tuple[int, int]:
        if point is None:
            x, y, _ = xin.pointer()
            return x, y
        width, height = self.screen_size
        return min(max(point.x, 0), width - 1), min(max(point.y, 0), height - 1)

    async def _keys_ready(self, conn: XConnection, xin: XInput, keys: list[str]) -> None:
        """Map the keysyms of ``keys`` the keymap lacks (see :meth:`_map_keysyms`)."""
        await self._map_keysyms(conn, xin, [key_keysym(k) for k in keys])

    async def _map_keysyms(self, conn: XConnection, xin: XInput, keysyms: list[int]) -> None:
        """Put ``keysyms`` the keymap lacks on spare keycodes, with the waits of :mod:`.xinput`:
        after the last use of a reused keycode, and after the change, :data:`KEYMAP_SETTLE`."""
        plan = xin.plan(keysyms)
        if not plan:
            return
        delay = xin.reuse_delay(plan)
        if delay > 0:
            conn.sync()
            await asyncio.sleep(delay)
        xin.apply(plan)
        conn.sync()
        await asyncio.sleep(KEYMAP_SETTLE)

    async def _holding(self, conn: XConnection, xin: XInput, keys: list[str] | None, body: Any) -> None:
        """Run ``await body()`` with ``keys`` held (down in order, up in reverse order)."""
        await self._keys_ready(conn, xin, keys or [])
        codes = [c for c in xin.chord_keycodes([key_keysym(k) for k in keys or []]) if c not in xin.pressed]
        pressed: list[int] = []
        try:
            for code in codes:
                xin.key_event(code, True)
                pressed.append(code)
            await body()
        finally:
            for code in reversed(pressed):
                xin.key_event(code, False)

    async def _clicks(self, conn: XConnection, xin: XInput, action: ClickAction) -> None:
        x, y = self._clamp(xin, action.point)
        xin.move(x, y)
        delays = action.pattern or []
        number = BUTTONS[action.button]
        for i in range(len(delays) + 1):
            xin.click(number)
            if i < len(delays):
                conn.display.flush()  # the server timestamps each click when it gets it
                await asyncio.sleep(delays[i] / 1000)

    async def _scroll_at(self, xin: XInput, action: ScrollAction) -> None:
        x, y = self._clamp(xin, action.point)
        xin.move(x, y)
        if action.scroll is None:
            return
        for amount, (negative, positive) in ((action.scroll.y, (4, 5)), (action.scroll.x, (6, 7))):
            clicks = wheel_clicks(amount)
            for _ in range(abs(clicks)):
                xin.click(positive if clicks > 0 else negative)

    async def _drag_along(self, conn: XConnection, xin: XInput, action: DragAction) -> None:
        path = [self._clamp(xin, p) for p in action.path]
        delays = action.pattern or []
        xin.move(*path[0])
        xin.button(1, True)
        try:
            previous = path[0]
            for i, point in enumerate(path[1:]):
                if delays:
                    conn.display.flush()
                    await asyncio.sleep(delays[i % len(delays)] / 1000)
                # Intermediate motion (every ~20 px) so applications see the pointer travel.
                steps = max(1, min(20, math.ceil(math.hypot(point[0] - previous[0], point[1] - previous[1]) / 20)))
                for s in range(1, steps + 1):
                    xin.move(round(previous[0] + (point[0] - previous[0]) * s / steps),
                             round(previous[1] + (point[1] - previous[1]) * s / steps))
                previous = point
        finally:
            xin.button(1, False)

    # ----------------------------------------------------------------- custom actions

    # One handler per custom action (the table is :data:`CUSTOM`, after the class).

    async def _key_sequence(self, args: dict[str, Any]) -> Settled:
        conn, xin = self._io
        keys = args.get("keys")
        if not isinstance(keys, list) or not keys or not all(isinstance(k, (str, list)) for k in keys):
            raise ActionError("custom action 'key_sequence' needs args {'keys': ['ctrl+a', 'Delete', ...]}")
        try:
            chords = [normalize_keys(k) for k in keys]
        except UnknownKeyError as exc:
            raise ActionError(f"custom action 'key_sequence': {exc}") from None
        for chord in chords:
            await self._keys_ready(conn, xin, chord)
            xin.press(chord)
        return ActionOutcome(), self.quiet

    async def _clipboard_set(self, args: dict[str, Any]) -> Settled:
        text = args.get("text")
        if not isinstance(text, str):
            raise ActionError("custom action 'clipboard_set' needs args {'text': '<text>'}")
        await self.clipboard_set(text)
        return ActionOutcome(), None

    @property
    def known_apps(self) -> dict[str, list[str]]:
        """The apps launchable by name without shell permission: name -> base command line."""
        apps = self._session.apps if self._session is not None else KNOWN_APPS
        return {name: list(argv) for name, argv in apps.items()}

    def launch_argv(self, app: str, args: Sequence[str] = ()) -> list[str]:
        """The checked command line that launches ``app`` with ``args`` (see :data:`LAUNCHABLE`).

        Without shell permission only the known apps start, and only with the arguments
        :data:`LAUNCHABLE` lists (no ``xterm -e``); file arguments go through :meth:`resolve_path`.

        Raises:
            PermissionError: not allowed without shell permission (or a path outside the home).
            ValueError: bad arguments, or no such program.
        """
        args = list(args)
        if app in KNOWN_APPS:
            base = list(self._session.apps[app] if self._session is not None else KNOWN_APPS[app])
            if app == "xterm":
                if not self.shell_allowed():
                    self._check_options(app, args, _XTERM_OPTIONS)
                return [*base, *args]
            if app in ("editor", "xedit"):
                if len(args) > 1 or any(a.startswith("-") for a in args):
                    raise ValueError(f"launch {app!r} takes at most one argument: the file to open")
                return [*base, *(str(self.resolve_path(a)) for a in args)]
            if app != "eventlog":
                if args and not self.shell_allowed():
                    raise PermissionError(f"launch {app!r} takes no arguments without shell permission")
                return [*base, *args]
            self._check_options(app, args, _EVENTLOG_OPTIONS)
            if "--log" in args:
                index = args.index("--log") + 1
                args[index] = str(self.resolve_path(args[index]))
            else:
                args += ["--log", str(self.home / "eventlog.jsonl")]
            return [*base, *args]
        if not self.shell_allowed():
            raise PermissionError(
                f"launch {app!r}: only {', '.join(KNOWN_APPS)} can be launched by name; launching other programs "
                "runs arbitrary commands: create the env with allow_shell=True or run it inside its container (docker/ubuntu)"
            )
        if shutil.which(app, path=self.child_env.get("PATH")) is None:
            raise ValueError(f"launch: no program {app!r} on the PATH")
        return [app, *args]

    def _check_options(self, app: str, args: list[str], options: frozenset[str]) -> None:
        i = 0
        while i < len(args):
            if args[i] in options and i + 1 < len(args):
                i += 2
                continue
            raise PermissionError(
                f"launch {app!r}: argument {args[i]!r} is not allowed without shell permission "
                f"(allowed: {', '.join(sorted(options))}, each with a value; or create the env with allow_shell=True)"
            )

    async def _launch(self, args: dict[str, Any]) -> Settled:
        app = args.get("app")
        extra = args.get("args", [])
        if not isinstance(app, str) or not app:
            raise ActionError(f"custom action 'launch' needs args {{'app': <name>, 'args': [...]}}; apps: {', '.join(LAUNCHABLE)}")
        if not isinstance(extra, list) or not all(isinstance(a, str) for a in extra):
            raise ActionError("custom action 'launch': 'args' must be a list of strings")
        try:
            argv = self.launch_argv(app, extra)
        except (PermissionError, ValueError) as exc:
            raise ActionError(str(exc) if str(exc).startswith("launch") else f"launch {app!r}: {exc}") from None
        before = {w["id"] for w in await self.windows()}
        try:
            process = await self.spawn(argv)
        except (FileNotFoundError, PermissionError) as exc:
            raise ActionError(f"launch {app!r}: {exc}") from None
        info: dict[str, Any] = {"launched": app, "pid": process.pid, "window": None}
        deadline = time.monotonic() + self.launch_timeout
        while time.monotonic() < deadline:
            new = [w for w in await self.windows() if w["id"] not in before]
            if new:
                info["window"] = new[-1]["title"]
                break
            if process.returncode is not None:
                info["exit_code"] = process.returncode
                break
            await asyncio.sleep(0.01)
        # A new window paints its content in a few bursts: settle with a longer quiet time.
        return ActionOutcome(info=info), max(self.quiet, 0.1)

    # ================================================================= observation

    async def observe(self) -> Frame:
        """The screen once the applications have repainted after the last action; see the module docstring.

        Raises:
            ControllerError: the display is gone.
        """
        conn, _ = self._x
        assert self._capture is not None
        if self._pending_settle is not None:
            (first_paint, quiet), self._pending_settle = self._pending_settle, None
            self.last_settle = await conn.settle(first_paint, quiet, self.settle_limit)
        else:
            self.last_settle = {"settle": 0.0, "damage": 0.0}
        screenshot = self._capture.grab()
        try:
            managed = self._wm is not None
            focused = xwindows.focused_window(conn, managed)
            titles = xwindows.window_titles(conn, managed)
        except X_ERRORS as exc:
            self._check_alive()
            raise ControllerError(f"cannot read the windows of {self.display}: {exc}") from exc
        title = focused["title"] if focused is not None else None
        return Frame(
            screenshot=screenshot,
            text=f"Focused window: {title if title is not None else '(none)'}",
            info={"focused_window": title, "windows": titles},
        )


ACTIONS: ActionTable[UbuntuController, Settled] = ActionTable(UbuntuController.gym, {
    ClickAction: UbuntuController._click,
    PressAction: UbuntuController._press,
    KeyDownAction: UbuntuController._key_down,
    KeyUpAction: UbuntuController._key_up,
    TypeAction: UbuntuController._type,
    ScrollAction: UbuntuController._scroll,
    MoveAction: UbuntuController._move,
    DragAction: UbuntuController._drag,
    WaitAction: UbuntuController._wait,
    PositionFetch: UbuntuController._position,
    ScreenshotFetch: UbuntuController._screenshot,
    CustomAction: UbuntuController._custom,
})
"""What :meth:`UbuntuController.step` runs for each CLA type (``ResponseAction`` never reaches a controller)."""

CUSTOM: CustomActions[UbuntuController, Settled] = CustomActions(UbuntuController.gym, {
    "launch": UbuntuController._launch,
    "key_sequence": UbuntuController._key_sequence,
    "clipboard_set": UbuntuController._clipboard_set,
})
"""The desktop gym's custom actions (``CustomAction(action=name, args={...})``)."""

CUSTOM_ACTIONS: tuple[str, ...] = CUSTOM.names
"""The names of the desktop gym's custom actions."""
