"""The desktop env in sandboxes: what Xvfb, the window manager and the task processes each see.

Three sandboxes (:mod:`hud_gym.controllers.sandbox`) per env, all as the env's sandbox uid:

- **Xvfb**, for the env's life: a private folder as ``/tmp/.X11-unix`` (to make its socket in, out of
  other uids' reach until it is 0600 and linked at its public path) and the env's X authority
  folder read-only; no network. It listens on its socket file only (no TCP port, no abstract
  socket: this process holds the abstract name on the host, :mod:`hud_gym.controllers.x11.xsocket`).
- **the window manager**, for the env's life: the display's socket, the authority folder and
  the env's shared read-only folder (its configuration); no network.
- **the task processes**, one sandbox per episode (:class:`SandboxedProcesses`): the display's
  socket, the authority folder, the shared folder (the hud-gym apps), the env's home and temp
  folders (read-write, at their host paths), and the network only for an episode whose task asks
  for it on an env that allows it. Started by the episode's first program, ended whole at reset
  and close: no process of an episode survives it.
"""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hud_gym.controllers.sandbox.limits import Confinement, ResourceLimits
from hud_gym.controllers.sandbox.policy import (
    Bind,
    Identity,
    SandboxPolicy,
    bwrap_argv,
    host_layout,
)
from hud_gym.controllers.sandbox.runner import Sandbox, SandboxProcess, pid_namespace
from hud_gym.controllers.ubuntu.processes import TaskProcesses

__all__ = ["DesktopSandbox", "SandboxedProcesses", "require_sandbox_programs"]

SANDBOX_PYTHON = "/usr/bin/python3"
"""The Python inside the sandboxes (Debian's, with ``python3-tk``): runs the supervisor and the hud-gym apps."""
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"


def require_sandbox_programs(switch: bool) -> dict[str, str]:
    """The paths of ``bwrap`` (and ``setpriv`` when the sandbox is entered from root).

    Raises:
        FileNotFoundError: one is missing; the message names the package and ``sandbox=False``.
    """
    from hud_gym.controllers.ubuntu.display import DesktopNotAvailableError

    found = {"bwrap": shutil.which("bwrap"), **({"setpriv": shutil.which("setpriv")} if switch else {})}
    if found["bwrap"] is None:
        raise DesktopNotAvailableError(
            "the desktop gym runs its desktop in a bubblewrap sandbox, and bwrap is not installed: run "
            "`sudo apt-get install bubblewrap` (or `bash scripts/install-system.sh`), or create the env with "
            "sandbox=False to run the desktop unisolated on this host"
        )
    if switch and found.get("setpriv") is None:
        raise DesktopNotAvailableError(
            "the desktop sandbox needs setpriv to leave root: run `sudo apt-get install util-linux`"
        )
    if not Path(SANDBOX_PYTHON).is_file():
        raise DesktopNotAvailableError(
            f"the desktop sandbox runs its apps with {SANDBOX_PYTHON}: run `sudo apt-get install python3 python3-tk`"
        )
    return {name: str(path) for name, path in found.items() if path is not None}


@functools.lru_cache(maxsize=1)
def _layout() -> dict[str, str]:
    return host_layout()


class DesktopSandbox:
    """The three sandbox policies of one env; see the module docstring.

    Args:
        identity: the env's sandbox identity.
        number: the display number.
        auth_dir: the folder of the display's authority file.
        share: the env's read-only folder (apps, supervisor, ``/etc`` files, WM configuration).
        home, tmp: the env's home and temp folders.
        etc: synthesized ``/etc`` files: name -> file in ``share``.
        programs: :func:`require_sandbox_programs`.
    """

    def __init__(
        self,
        identity: Identity,
        number: int,
        auth_dir: Path,
        share: Path,
        home: Path,
        tmp: Path,
        etc: dict[str, str],
        programs: dict[str, str],
    ) -> None:
        self.identity = identity
        self.number = number
        self.auth_dir = auth_dir
        self.share = share
        self.home = home
        self.tmp = tmp
        self.etc = etc
        self.programs = programs

    @property
    def socket(self) -> str:
        return f"/tmp/.X11-unix/X{self.number}"

    def _argv(self, policy: SandboxPolicy, command: list[str]) -> list[str]:
        return bwrap_argv(
            policy, command, bwrap=self.programs["bwrap"], setpriv=self.programs.get("setpriv", "setpriv")
        )

    def _policy(
        self, binds: list[Bind], network: bool = False, etc: dict[str, str] | None = None, as_pid_1: bool = False
    ) -> SandboxPolicy:
        return SandboxPolicy(
            identity=self.identity,
            binds=tuple(binds),
            etc=self.etc if etc is None else etc,
            layout=_layout(),
            network=network,
            as_pid_1=as_pid_1,
        )

    def xvfb(self, argv: list[str], socket_dir: Path) -> list[str]:
        """Xvfb's command line in its sandbox (``socket_dir`` is its ``/tmp/.X11-unix``)."""
        binds = [Bind(str(socket_dir), "/tmp/.X11-unix", writable=True), Bind(str(self.auth_dir))]
        return self._argv(self._policy(binds), argv)

    def window_manager(self, argv: list[str]) -> list[str]:
        """The window manager's command line in its sandbox."""
        return self._argv(self._policy([Bind(self.socket), Bind(str(self.auth_dir)), Bind(str(self.share))]), argv)

    def tasks(self, network: bool) -> Callable[[list[str]], list[str]]:
        """The launcher of an episode's task sandbox (with or without the network)."""
        binds = [
            Bind(self.socket),
            Bind(str(self.auth_dir)),
            Bind(str(self.share)),
            Bind(str(self.home), writable=True),
            Bind(str(self.tmp), writable=True),
        ]
        etc = {k: v for k, v in self.etc.items() if not (network and k == "hosts")}
        policy = self._policy(binds, network=network, etc=etc, as_pid_1=True)  # the supervisor is pid 1
        return lambda argv: self._argv(policy, argv)


class SandboxedProcesses(TaskProcesses):
    """:class:`~hud_gym.controllers.ubuntu.processes.TaskProcesses` in one sandbox per episode.

    Args:
        env: the environment of task processes.
        log_dir: where their output goes.
        sandbox: the env's :class:`DesktopSandbox`.
        supervisor: the supervisor script's path (readable inside the sandbox).
        launcher_env: the environment of the sandbox launcher itself.
        limits: what each episode's sandbox may use (:mod:`hud_gym.controllers.sandbox.limits`;
            ``None``: no limits).
    """

    def __init__(
        self,
        env: dict[str, str],
        log_dir: Path | None,
        sandbox: DesktopSandbox,
        supervisor: str,
        launcher_env: dict[str, str],
        limits: ResourceLimits | None = None,
    ) -> None:
        super().__init__(env, log_dir)
        self.limits = limits
        self.sandbox = sandbox
        self.network = False
        self._supervisor = supervisor
        self._launcher_env = launcher_env
        self._running: Sandbox | None = None
        self._starting: asyncio.Lock | None = None

    @property
    def pgid(self) -> int | None:
        """No process group: the episode's processes are those of its sandbox."""
        return None

    async def _current(self) -> Sandbox:
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if self._running is None or not self._running.alive:
                if self._running is not None:
                    await self._running.stop()
                log = (self.log_dir or self.sandbox.share) / "sandbox.log"
                if self.log_dir is not None:
                    self.log_dir.mkdir(parents=True, exist_ok=True)
                confinement = await asyncio.to_thread(self._confinement)
                running = Sandbox(
                    self.sandbox.tasks(self.network), self._supervisor, self._launcher_env, log, confinement=confinement
                )
                await running.start()
                self._running = running
            return self._running

    def _confinement(self) -> Confinement | None:
        """The next episode sandbox's limits: in a cgroup if one can be made, else as rlimits."""
        if self.limits is None:
            return None
        try:
            return Confinement(self.limits)
        except OSError:  # the cgroup was refused (its parent removed, ...): rlimits still hold
            return Confinement(self.limits, use_cgroups=False)

    def violation(self) -> str | None:
        """The limit the episode's processes reached (a sentence), or ``None``."""
        running = self._running
        return running.violation() if running is not None else None

    async def spawn(  # type: ignore[override]  # a SandboxProcess quacks as the Process the callers use
        self, argv: list[str], *, cwd: Path | None = None, stdin: Any = subprocess.DEVNULL, capture: bool = False
    ) -> SandboxProcess:
        """Start ``argv`` in the episode's sandbox (started by its first program)."""
        if not argv:
            raise ValueError("argv is empty")
        sandbox = await self._current()
        out = subprocess.PIPE if capture else self._log_file(argv)
        try:
            process = await sandbox.spawn(
                argv, env=self.env, cwd=str(cwd) if cwd is not None else None, stdin=stdin, stdout=out, stderr=out
            )
        finally:
            if hasattr(out, "close"):
                out.close()
        self._children = [c for c in self._children if c.returncode is None] + [process]  # type: ignore[list-item]
        return process

    def pids(self) -> set[int]:
        """Every live process of the episode's sandbox (its init and supervisor aside)."""
        running = self._running
        return running.pids() if running is not None else set()

    def own_network(self) -> int | None:
        """A descriptor (the caller closes it) of the network namespace of the episode's running
        sandbox when it has no network (its own loopback only: what its task's servers listen on),
        else ``None`` (no sandbox running, or the host's network)."""
        running = self._running
        pid = running.supervisor_pid if running is not None and running.alive else None
        if pid is None or self.network:
            return None
        try:
            fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None
        if running is None or pid_namespace(pid) != running.namespace:  # the pid was reused meanwhile
            os.close(fd)
            return None
        return fd

    def host_pids(self) -> dict[int, int]:
        """The episode's processes: pid inside its sandbox -> host pid."""
        running = self._running
        return running.host_pids() if running is not None else {}

    async def kill_all(self, grace: float = 0.5) -> None:
        """End the episode's sandbox: every process in it dies at once (SIGKILL, pid namespace)."""
        running, self._running = self._running, None
        self._children = []
        if running is not None:
            await running.stop()
