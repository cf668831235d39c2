"""The processes and folders of one desktop env: Xvfb, the window manager, the task processes.

A :class:`DesktopSession` owns, under one private base folder (mode 0711):

- ``home/`` and ``tmp/``: the env's home and temp folders (emptied at every episode), owned by the
  sandbox uid;
- ``auth/``: the display's authority file (0700 folder, 0600 file, owned by the sandbox uid);
- ``share/`` (sandboxed only): what the sandboxes read but may not change: the hud-gym apps, the
  supervisor, the synthesized ``/etc`` files, the window manager's configuration;
- ``session/`` (0700, this process only): logs.

Every display gets a fresh cookie (:mod:`hud_gym.controllers.x11.xauth`): Xvfb reads it from
``auth/``, the env's processes get it as ``XAUTHORITY``, this process's own connections through
:func:`~hud_gym.controllers.x11.xauth.process_authority`. With ``sandbox=True`` Xvfb, the window
manager and the task processes run in bubblewrap sandboxes (:mod:`.sandboxed`); without, they run
as this process's user, as the desktop gym did before sandboxes.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import psutil

from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.process_utils import alive, stop_process
from hud_gym.controllers.sandbox.limits import ResourceLimits
from hud_gym.controllers.sandbox.policy import (
    INNER_USER,
    Identity,
    etc_files,
    identity_for,
)
from hud_gym.controllers.sandbox.runner import SUPERVISOR
from hud_gym.controllers.temp_folders import make_temp_folder
from hud_gym.controllers.ubuntu.apps import APPS_DIR, KNOWN_APPS
from hud_gym.controllers.ubuntu.display import (
    WINDOW_MANAGERS,
    start_window_manager,
    wait_for_window_manager,
)
from hud_gym.controllers.ubuntu.homefs import HomeFiles
from hud_gym.controllers.ubuntu.processes import ENV_TOKEN_VAR, TaskProcesses
from hud_gym.controllers.ubuntu.profile import lay_down_profile
from hud_gym.controllers.ubuntu.sandboxed import (
    SANDBOX_PATH,
    SANDBOX_PYTHON,
    DesktopSandbox,
    SandboxedProcesses,
    require_sandbox_programs,
)
from hud_gym.controllers.x11.xauth import (
    new_cookie,
    process_authority,
    write_display_authority,
)
from hud_gym.controllers.x11.xvfb import XvfbServer, start_xvfb

__all__ = ["DesktopSession"]

_PYTHON_APPS = ("editor", "eventlog")


def program_pid(pid: int, name: str) -> int:
    """The pid of the program called ``name`` that process ``pid`` runs: ``pid`` itself, or its
    descendant of that name inside a sandbox (``pid`` when none is found)."""
    try:
        root = psutil.Process(pid)
        return next((p.pid for p in [root, *root.children(recursive=True)] if p.name() == name), pid)
    except psutil.Error:
        return pid


def _empty_dir(path: Path) -> None:
    if path.exists():
        for child in path.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    child.unlink()
    path.mkdir(parents=True, exist_ok=True)


class DesktopSession:
    """One env's display, window manager, task processes and folders; see the module docstring.

    Args:
        screen_size: ``(width, height)`` of the display.
        window_manager: ``"openbox"`` or ``None``.
        sandbox: run the desktop in bubblewrap sandboxes.
        token: the env's token (:data:`~hud_gym.controllers.ubuntu.processes.ENV_TOKEN_VAR`).
        in_container: inside the gym's container, where the cookie is also added to the user's
            ``~/.Xauthority`` (for the live view's VNC server).
        limits: what each episode's task sandbox may use (sandboxed only).
    """

    def __init__(
        self,
        screen_size: tuple[int, int],
        window_manager: str | None,
        *,
        sandbox: bool,
        token: str,
        in_container: bool = False,
        limits: ResourceLimits | None = None,
    ) -> None:
        self.screen_size = screen_size
        self.limits = limits
        self.window_manager = window_manager
        self.sandboxed = sandbox
        self.token = token
        self.in_container = in_container
        self.base = make_temp_folder("hud-gym-ubuntu-", self)
        os.chmod(self.base, 0o711)
        self.home, self.tmp, self.auth_dir = self.base / "home", self.base / "tmp", self.base / "auth"
        self.share, self.session_dir = self.base / "share", self.base / "session"
        self.cookie = new_cookie()
        self.identity: Identity | None = None
        self.xvfb: XvfbServer | None = None
        self.wm: Any = None
        self._xvfb_pid: int | None = None  # the programs (inside their sandboxes' launchers)
        self._wm_pid: int | None = None
        self.processes: TaskProcesses | None = None
        self.child_env: dict[str, str] = {}
        self.apps: dict[str, list[str]] = {name: list(argv) for name, argv in KNOWN_APPS.items()}
        self._programs: dict[str, str] = {}
        self._sandbox: DesktopSandbox | None = None
        self._etc: dict[str, str] = {}

    # ----------------------------------------------------------------- properties

    @property
    def display(self) -> str:
        """The display name (``":57"``)."""
        return self.xvfb.name if self.xvfb is not None else ""

    @property
    def file_owner(self) -> tuple[int, int] | None:
        """``(uid, gid)`` files this process writes into the home must get (``None``: leave as is)."""
        ident = self.identity
        return (ident.uid, ident.gid) if ident is not None and ident.switch else None

    @property
    def xauthority(self) -> Path:
        """An authority file with this display's cookie, for tools of this process's user."""
        return process_authority().path

    # ----------------------------------------------------------------- start

    async def start(self) -> None:
        """Create the folders and the cookie, start Xvfb (sandboxed: as the sandbox uid).

        Raises:
            DesktopNotAvailableError: bwrap (or setpriv, python3) is missing.
            ControllerError: Xvfb did not start.
        """
        if self.sandboxed:
            self._programs = require_sandbox_programs(os.geteuid() == 0)
        self.session_dir.mkdir(mode=0o700)
        for folder in (self.home, self.tmp):
            folder.mkdir(mode=0o700)
        if self.sandboxed:
            self._write_share()
        auth = self.auth_dir / "Xauthority"
        env = {"PATH": SANDBOX_PATH, "LANG": "C.UTF-8"}
        if not self.sandboxed:
            write_display_authority(self.auth_dir, self.cookie)
        try:
            self.xvfb = await start_xvfb(
                self.screen_size,
                self.session_dir / "xvfb.log",
                auth=auth,
                command=self._xvfb_command if self.sandboxed else None,
                env=env,
                owner=self._xvfb_owner,
            )
        except ControllerError as exc:
            if self.sandboxed and "bwrap" in str(exc):
                raise ControllerError(
                    f"{exc}\nThe desktop's bubblewrap sandbox could not start: this host may not allow unprivileged "
                    "user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 also "
                    "kernel.apparmor_restrict_unprivileged_userns=0), or create the env with sandbox=False"
                ) from exc
            raise
        self._xvfb_pid = program_pid(self.xvfb.process.pid, "Xvfb")
        process_authority().add(self.xvfb.number, self.cookie)
        self.child_env = self._child_env()
        if self.in_container:
            self._user_authority("add", ".", self.cookie.hex())
        self.processes = (
            SandboxedProcesses(
                self.child_env,
                self.session_dir / "logs",
                self._sandbox,
                str(self.share / "supervisor.py"),
                env,
                limits=self.limits,
            )
            if self._sandbox is not None
            else TaskProcesses(self.child_env, self.session_dir / "logs")
        )

    def _xvfb_owner(self, number: int) -> int:
        """The uid Xvfb runs as on display ``number``: the sandbox uid, or this process's."""
        return identity_for(os.geteuid(), os.getegid(), number).uid if self.sandboxed else os.geteuid()

    def _xvfb_command(self, number: int, argv: list[str], socket_dir: Path) -> list[str]:
        """Xvfb's sandboxed command line for display ``number``: its identity and cookie prepared first."""
        self.identity = identity_for(os.geteuid(), os.getegid(), number)
        owner = self.file_owner
        for folder in (self.home, self.tmp):
            if owner is not None:
                os.chown(folder, *owner)
        write_display_authority(self.auth_dir, self.cookie, owner)
        self._sandbox = DesktopSandbox(
            self.identity, number, self.auth_dir, self.share, self.home, self.tmp, self._etc, self._programs
        )
        return self._sandbox.xvfb(argv, socket_dir)

    def _write_share(self) -> None:
        """The sandboxes' read-only folder (see the module docstring), world-readable."""
        (self.share / "apps").mkdir(parents=True)
        (self.share / "etc").mkdir()
        for name in _PYTHON_APPS:
            shutil.copyfile(APPS_DIR / f"{name}.py", self.share / "apps" / f"{name}.py")
            self.apps[name] = [SANDBOX_PYTHON, "-I", str(self.share / "apps" / f"{name}.py")]
        shutil.copyfile(SUPERVISOR, self.share / "supervisor.py")
        for name, content in etc_files(str(self.home)).items():
            (self.share / "etc" / name).write_text(content)
            self._etc[name] = str(self.share / "etc" / name)
        for path in [self.share, *self.share.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)

    def _child_env(self) -> dict[str, str]:
        home, tmp = self.home, self.tmp
        user = INNER_USER if self.sandboxed else os.environ.get("USER", "user")
        return {
            "DISPLAY": self.display,
            "XAUTHORITY": str(self.auth_dir / "Xauthority"),
            "HOME": str(home),
            "TMPDIR": str(tmp),
            "XDG_RUNTIME_DIR": str(tmp / "runtime"),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "PATH": SANDBOX_PATH if self.sandboxed else os.environ.get("PATH") or SANDBOX_PATH,
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "SHELL": "/bin/bash",
            "USER": user,
            "LOGNAME": user if self.sandboxed else os.environ.get("LOGNAME", user),
            "NO_AT_BRIDGE": "1",
            # The sandbox has no D-Bus session (so no dconf): GTK apps keep their settings in a
            # file of the home, where `gsettings` reads them too.
            "GSETTINGS_BACKEND": "keyfile",
            # Thunderbird uses the home profile's default profile (:mod:`.profile`), not a new
            # profile of its own per installation.
            "MOZ_LEGACY_PROFILES": "1",
            ENV_TOKEN_VAR: self.token,
        }

    async def start_window_manager(self, has_wm: Any) -> None:
        """Start the window manager and wait until ``has_wm()`` (it manages the screen)."""
        if self.window_manager is None:
            return
        log = self.session_dir / "wm.log"
        env = {k: v for k, v in self.child_env.items() if k != ENV_TOKEN_VAR}
        config = self.share / "wm" if self.sandboxed else self.session_dir / "wm"
        env["HOME"] = "/tmp" if self.sandboxed else str(self.session_dir)
        command = self._sandbox.window_manager if self._sandbox is not None else None
        self.wm = await start_window_manager(self.window_manager, self.display, config, log, env, command)
        await wait_for_window_manager(has_wm, self.wm, log)
        self._wm_pid = program_pid(self.wm.pid, Path(WINDOW_MANAGERS[self.window_manager][0]).name)

    def _user_authority(self, action: str, *args: str) -> None:
        """``xauth add|remove :N ...`` on the user's own authority file (the container's live view)."""
        if shutil.which("xauth") is None or self.xvfb is None:
            return
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(
                ["xauth", "-q", action, self.display, *args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=5,
                check=False,
            )

    # ----------------------------------------------------------------- episodes

    def prepare_episode(self, network: bool = False) -> None:
        """Empty the home and temp folders (the task processes are gone), lay down the home's
        profile (:mod:`.profile`); choose the next episode's network (sandboxed)."""
        _empty_dir(self.home)
        _empty_dir(self.tmp)
        lay_down_profile(HomeFiles(self.home, self.file_owner))
        runtime = self.tmp / "runtime"
        runtime.mkdir(mode=0o700, exist_ok=True)
        if self.file_owner is not None:
            os.chown(runtime, *self.file_owner)
        _empty_dir(self.session_dir / "logs")
        if isinstance(self.processes, SandboxedProcesses):
            self.processes.network = network

    def check_alive(self) -> None:
        """Raise a :class:`ControllerError` naming what died (Xvfb, the window manager).

        The programs themselves are checked (by pid: a zombie is dead), not only the processes
        started for them: a sandbox's launcher exits, and asyncio learns of it, some time after
        the program inside died, and a step in between would not see the death.
        """
        if self.xvfb is None:
            raise ControllerError("the desktop controller is not started")
        if not self.xvfb.alive or not alive(self._xvfb_pid or self.xvfb.process.pid):
            code = self.xvfb.process.returncode
            raise ControllerError(
                f"Xvfb ({self.display}) " + (f"exited with code {code}" if code is not None else "died")
            )
        if self.wm is not None and (self.wm.returncode is not None or not alive(self._wm_pid or self.wm.pid)):
            code = self.wm.returncode
            raise ControllerError("the window manager " + (f"exited with code {code}" if code is not None else "died"))

    def pids(self) -> dict[str, Any]:
        """``xvfb`` and ``wm`` (their launchers' pids), and the live ``tasks``."""
        return {
            "xvfb": self.xvfb.process.pid if self.xvfb is not None else None,
            "wm": self.wm.pid if self.wm is not None else None,
            "tasks": self.processes.pids() if self.processes is not None else set(),
        }

    async def stop(self, kill_grace: float = 0.5) -> None:
        """Stop everything and remove the folders (idempotent)."""
        if self.processes is not None:
            with contextlib.suppress(Exception):
                await self.processes.kill_all(kill_grace)
            self.processes = None
        if self.wm is not None:
            with contextlib.suppress(Exception):
                await stop_process(self.wm)
            self.wm = None
        if self.xvfb is not None:
            if self.in_container:
                self._user_authority("remove")
            process_authority().remove(self.xvfb.number)
            with contextlib.suppress(Exception):
                await self.xvfb.stop()
            self.xvfb = None
        shutil.rmtree(self.base, ignore_errors=True)
