"""The desktop API the gym's setup and evaluate functions use: permissions, processes, windows, clipboard.

Task processes (:meth:`DesktopAPI.spawn`, :meth:`~DesktopAPI.run`, the ``launch`` action, the
clipboard owner) run in the episode's sandbox (or, with ``sandbox=False``, its process group) and
die at the next reset. What they may start and reach is decided by the pure functions of
:mod:`.policy`, called here with the env's options. :class:`DesktopAPI` works on the env's
:class:`~.state.DesktopState`; the functions reach it as ``ctx.controller.desktop``.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import hud_gym.controllers.ubuntu.policy as policy
import hud_gym.controllers.ubuntu.windows as xwindows
from hud_gym.bounds import CLIPBOARD_BYTES, Clipped, clip_bytes
from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.ubuntu.apps import KNOWN_APPS
from hud_gym.controllers.ubuntu.display import DesktopNotAvailableError
from hud_gym.controllers.ubuntu.state import DesktopState
from hud_gym.evaluation.patterns import compile_task_pattern

__all__ = ["DesktopAPI"]


class DesktopAPI:
    """Permissions, processes, windows and clipboard (a part of :class:`~.controller.UbuntuController`).

    Args:
        state: the env's desktop state (its folders: ``state.home``, ``state.tmp``, ...).
    """

    def __init__(self, state: DesktopState) -> None:
        self.state = state

    # ----------------------------------------------------------------- permissions

    def shell_allowed(self) -> bool:
        """True when arbitrary commands may run (``allow_shell``, or inside the gym's container)."""
        return self.state.options.allow_shell or self.state.in_container

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

    def resolve_path(self, path: str, *, check_links: bool = True) -> Path:
        """A task's path as a real path: relative paths and ``~/...`` resolve inside :attr:`home`
        (``check_links``: see :func:`.policy.resolve_path`).

        Raises:
            PermissionError: an absolute path, or one leaving the home (``..``, a symlink), unless
                the env was created with ``allow_absolute_paths=True``.
        """
        return policy.resolve_path(
            path, self.state.home, allow_absolute_paths=self.state.options.allow_absolute_paths, check_links=check_links
        )

    def own_network(self) -> int | None:
        """A descriptor (the caller closes it) of the episode's own network namespace: its
        sandbox's, when the episode has no network and its sandbox runs; ``None`` otherwise. What
        a task's own servers listen on (``download_file`` reaches them there, never the host's
        loopback)."""
        procs = self.state.procs
        opener = getattr(procs, "own_network", None)
        return opener() if opener is not None and not self.state.episode_network else None

    @property
    def known_apps(self) -> dict[str, list[str]]:
        """The apps launchable by name without shell permission: name -> base command line."""
        apps = self.state.session.apps if self.state.session is not None else KNOWN_APPS
        return {name: list(argv) for name, argv in apps.items()}

    def launch_argv(self, app: str, args: Sequence[str] = ()) -> list[str]:
        """The checked command line that launches ``app`` with ``args`` (see :data:`~.policy.LAUNCHABLE`).

        Without shell permission only the known apps start, and only with the arguments
        :data:`~.policy.LAUNCHABLE` lists (no ``xterm -e``); file arguments go through
        :meth:`resolve_path` (:func:`.policy.launch_argv` decides).

        Raises:
            PermissionError: not allowed without shell permission (or a path outside the home).
            ValueError: bad arguments, or no such program.
        """
        return policy.launch_argv(
            app,
            args,
            home=self.state.session.home if self.state.session is not None else None,
            apps=self.known_apps,
            shell_allowed=self.shell_allowed(),
            allow_absolute_paths=self.state.options.allow_absolute_paths,
            search_path=self.state.child_env.get("PATH"),
        )

    # ----------------------------------------------------------------- processes

    async def spawn(self, argv: list[str], *, cwd: Path | None = None) -> asyncio.subprocess.Process:
        """Start ``argv`` for the task: in the episode's process group (killed at reset and close),
        with :attr:`child_env`, in ``cwd`` (default: the home), output to a log in the session folder.

        Raises:
            FileNotFoundError: no such program.
        """
        self.state.check_alive()
        assert self.state.procs is not None
        return await self.state.procs.spawn(list(argv), cwd=cwd if cwd is not None else self.state.home)

    async def run(self, argv: list[str] | str, timeout: float = 10.0) -> tuple[int, str, str]:
        """Run ``argv`` (a string: ``bash -lc <string>``) in the home, in the episode's process group,
        to completion; returns ``(returncode, stdout, stderr)``.

        Raises:
            TimeoutError: it ran longer than ``timeout`` seconds (it and its children were killed).
        """
        self.state.check_alive()
        assert self.state.procs is not None
        command = ["bash", "-lc", argv] if isinstance(argv, str) else list(argv)
        return await self.state.procs.run(command, timeout=timeout, cwd=self.state.home)

    # ----------------------------------------------------------------- windows, clipboard

    async def windows(self) -> list[dict[str, Any]]:
        """The mapped top-level windows: ``{"id", "title", "pid", "class", "geometry": (x, y, w, h)}``
        (``pid``: the host pid of the window's process, from its ``_NET_WM_PID``; ``None`` if unknown)."""
        conn, _ = self.state.x
        managed = self.state.wm is not None
        try:
            listed = await conn.call(lambda: xwindows.list_windows(conn, managed))
        except ControllerError as exc:
            raise ControllerError(f"cannot list the windows of {self.state.display}: {exc}") from exc
        return self._host_pids(listed)

    def _host_pids(self, windows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Sandboxed apps set ``_NET_WM_PID`` to their pid inside the sandbox: translate to the host's."""
        translate = getattr(self.state.procs, "host_pids", None)
        if translate is None or not windows:
            return windows
        mapping = translate()
        return [{**w, "pid": mapping.get(w["pid"]) if w.get("pid") is not None else None} for w in windows]

    async def focused_window(self) -> dict[str, Any] | None:
        """The window with the keyboard focus (as in :meth:`windows`), or ``None``."""
        conn, _ = self.state.x
        managed = self.state.wm is not None
        try:
            window = await conn.call(lambda: xwindows.focused_window(conn, managed))
        except ControllerError as exc:
            raise ControllerError(f"cannot read the focus of {self.state.display}: {exc}") from exc
        return self._host_pids([window])[0] if window is not None else None

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
        """The text of the CLIPBOARD selection ('' when nobody owns it), as :meth:`clipboard_read`."""
        return (await self.clipboard_read()).text

    async def clipboard_read(self) -> Clipped:
        """The CLIPBOARD selection, read as at most :data:`~hud_gym.bounds.CLIPBOARD_BYTES` bytes
        (+1, to know it held more: ``truncated``); an agent fills the clipboard, so it is never
        read whole (a 300 MB clipboard added 859 MiB to the host process)."""
        self._require_xclip()
        assert self.state.procs is not None
        code, out = await self.state.procs.read_output(
            ["xclip", "-selection", "clipboard", "-o"], timeout=5.0, limit=CLIPBOARD_BYTES
        )
        return clip_bytes(out, CLIPBOARD_BYTES) if code == 0 or len(out) > CLIPBOARD_BYTES else Clipped("", False, 0)

    async def clipboard_set(self, text: str) -> None:
        """Own the CLIPBOARD selection with ``text`` (the owner, an ``xclip`` process, is a task
        process: killed at reset and close)."""
        self._require_xclip()
        assert self.state.procs is not None
        # xclip forks a child that owns the selection (and holds no pipe of ours) and exits.
        process = await self.state.procs.spawn(
            ["xclip", "-selection", "clipboard", "-i"], cwd=self.state.home, stdin=asyncio.subprocess.PIPE
        )
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
        self.state.check_alive()
        if shutil.which("xclip", path=self.state.child_env.get("PATH")) is None:
            raise DesktopNotAvailableError("the clipboard needs xclip: run `sudo apt-get install xclip`")

    def pids(self) -> dict[str, Any]:
        """Process ids of the session (for tests): ``xvfb``, ``wm`` (the processes started for them:
        their sandboxes' launchers when sandboxed) and the live ``tasks`` (the episode's sandbox's
        processes; unsandboxed: group members, their descendants, processes carrying the env's token)."""
        if self.state.session is None:
            return {"xvfb": None, "wm": None, "tasks": set()}
        return self.state.session.pids()
