"""Starting and stopping controller servers for ``controller="subprocess"`` and ``"docker"``.

:data:`SUBPROCESS` runs ``python -m hud_gym.controllers.remote.server GYM --port 0`` as a child
process in its own session (process group), with a fresh token in its environment (never on the
command line, where ``ps`` would show it). It is ready when it prints its ``HUD_GYM_SERVER_READY``
line; the port is the one it bound. Every env of this process for that gym shares that server
(refcounted leases); the last lease given back stops it (SIGTERM, which closes its browsers and
displays, then SIGKILL to the whole group). A server that died (its process gone or a zombie, even
before asyncio has reaped it) is replaced by the next acquire.
The child also gets SIGTERM if this process dies without closing its envs (``PR_SET_PDEATHSIG``).

:data:`DOCKER` does the same with a container of the gym's image (``hud-gym-GYM``, built from
``docker/GYM/Dockerfile`` when it is missing and this is a source checkout, else pulled), through
the Docker SDK (:mod:`~hud_gym.controllers.remote.docker`), published on a random loopback port.
With no reachable engine it fails with a :class:`~hud_gym.controllers.base.ControllerError` that
says so and how to fix it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import secrets
import signal
import sys
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.process_utils import alive as process_alive
from hud_gym.controllers.remote.docker import docker_image, remove_container, run_container, wait_ready
from hud_gym.controllers.remote.server import READY_PREFIX, SERVER_MODULE, TOKEN_ENV_VAR
from hud_gym.controllers.remote.shm import PREFIX as SHM_PREFIX
from hud_gym.controllers.remote.shm import SHM_DIR
from hud_gym.core.loop import add_shutdown_hook

__all__ = ["DOCKER", "SUBPROCESS", "DockerLauncher", "ServerLease", "SubprocessLauncher", "docker_image"]

READY_TIMEOUT = 60.0
STOP_TIMEOUT = 20.0


@dataclass
class ServerLease:
    """A share of a running server: its URL and token; :meth:`release` gives it back."""

    url: str
    token: str
    release: Callable[[], Awaitable[None]]


def _die_with_parent() -> None:
    """``preexec_fn``: SIGTERM when the thread that started the server ends (Linux)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


@dataclass(eq=False)
class _Server:
    """One launched server and the leases taken on it."""

    gym: str
    url: str
    token: str
    stop: Callable[[], Awaitable[None]]
    is_alive: Callable[[], Awaitable[bool]]
    pid: int | None = None
    leases: int = 0
    stopped: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


class _Launcher:
    """Shared servers per gym type, refcounted; subclasses say how to start one."""

    def __init__(self) -> None:
        self._servers: dict[str, _Server] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._owner: tuple[int, int] | None = None

    def _check_owner(self) -> None:
        owner = (os.getpid(), id(asyncio.get_running_loop()))
        if owner != self._owner:
            # A forked child or another loop: the servers found here are not ours to share.
            self._servers, self._locks, self._owner = {}, {}, owner
            add_shutdown_hook(self.shutdown)

    def server(self, gym: str) -> _Server | None:
        """The server currently shared for ``gym`` (``None`` when there is none)."""
        return self._servers.get(gym)

    async def acquire(self, gym: str) -> ServerLease:
        """A lease on this process's server for ``gym``, started (or replaced, if dead) as needed.

        Raises:
            ControllerError: the server could not be started.
        """
        self._check_owner()
        lock = self._locks.setdefault(gym, asyncio.Lock())
        async with lock:
            server = self._servers.get(gym)
            if server is not None and not await server.is_alive():
                del self._servers[gym]
                await self._stop(server)  # reap what the dead server left (its leases still count)
                server = None
            if server is None:
                server = await self._launch(gym)
                self._servers[gym] = server
            server.leases += 1
        released = False

        async def release() -> None:
            nonlocal released
            if not released:
                released = True
                await self._release(server)

        return ServerLease(server.url, server.token, release)

    async def _release(self, server: _Server) -> None:
        server.leases -= 1
        if server.leases > 0:
            return
        if self._servers.get(server.gym) is server:
            del self._servers[server.gym]
        await self._stop(server)

    async def _stop(self, server: _Server) -> None:
        if not server.stopped:
            server.stopped = True
            await server.stop()

    async def shutdown(self) -> None:
        """Stop every server (at interpreter exit)."""
        servers, self._servers = list(self._servers.values()), {}
        await asyncio.gather(*(self._stop(s) for s in servers), return_exceptions=True)

    async def _launch(self, gym: str) -> _Server:
        raise NotImplementedError


class SubprocessLauncher(_Launcher):
    """Controller servers as local processes on loopback; see the module docstring."""

    async def _launch(self, gym: str) -> _Server:
        token = secrets.token_urlsafe(24)
        log = tempfile.NamedTemporaryFile(prefix=f"hud-gym-{gym}-server-", suffix=".log", delete=False)  # noqa: SIM115
        log_path = Path(log.name)
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                SERVER_MODULE,
                gym,
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--trust-client-options",
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                env={**os.environ, TOKEN_ENV_VAR: token},
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        except OSError as exc:
            log.close()
            log_path.unlink(missing_ok=True)
            raise ControllerError(f"could not start a {gym} controller server: {exc}") from exc
        finally:
            log.close()
        pgid = process.pid
        assert process.stdout is not None
        stdout = process.stdout

        async def alive() -> bool:
            # Not only the returncode: asyncio sets it when its child watcher has reaped the
            # server, some time after the process died (a reset right after a SIGKILL would
            # reconnect to the dead server); a dead, unreaped process is a zombie.
            return process.returncode is None and process_alive(process.pid)

        async def kill_group() -> None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
            if process.returncode is None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(process.wait(), STOP_TIMEOUT)

        async def stop() -> None:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.send_signal(signal.SIGTERM)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(process.wait(), STOP_TIMEOUT)
            await kill_group()
            drain.cancel()
            log_path.unlink(missing_ok=True)
            for leftover in SHM_DIR.glob(f"{SHM_PREFIX}{pgid}-*"):  # frames the env never mapped
                leftover.unlink(missing_ok=True)

        try:
            url = await asyncio.wait_for(self._ready_line(stdout), READY_TIMEOUT)
        except (asyncio.TimeoutError, EOFError) as exc:
            await kill_group()
            tail = _tail(log_path)
            log_path.unlink(missing_ok=True)
            what = "exited" if isinstance(exc, EOFError) else f"was not ready within {READY_TIMEOUT} s"
            raise ControllerError(
                f"the {gym} controller server (pid {pgid}) {what}; its log ends with:\n{tail}"
            ) from None
        # Nothing more is expected on stdout, but a full pipe would block the server: drain it.
        drain = asyncio.ensure_future(_drain(stdout))
        return _Server(gym, url, token, stop=stop, is_alive=alive, pid=pgid, extra={"log": str(log_path)})

    @staticmethod
    async def _ready_line(stdout: asyncio.StreamReader) -> str:
        while True:
            line = await stdout.readline()
            if not line:
                raise EOFError
            text = line.decode(errors="replace").strip()
            if text.startswith(READY_PREFIX):
                return text[len(READY_PREFIX) :].strip()


async def _drain(stream: asyncio.StreamReader) -> None:
    with contextlib.suppress(Exception):
        while await stream.read(65536):
            pass


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) or "(empty)"
    except OSError:
        return "(no log)"


class DockerLauncher(_Launcher):
    """Controller servers in containers of the gym's image; see the module docstring."""

    async def _launch(self, gym: str) -> _Server:
        token = secrets.token_urlsafe(24)
        container = await asyncio.to_thread(run_container, gym, token)
        try:
            url = await asyncio.wait_for(asyncio.to_thread(wait_ready, container), READY_TIMEOUT)
        except BaseException as exc:
            await asyncio.to_thread(remove_container, container, STOP_TIMEOUT)  # also ends the log stream
            if isinstance(exc, asyncio.TimeoutError):
                raise ControllerError(
                    f"the {gym} controller container was not ready within {READY_TIMEOUT} s"
                ) from None
            raise

        async def alive() -> bool:
            try:
                await asyncio.to_thread(container.reload)
            except Exception:  # noqa: BLE001  (gone: auto-removed)
                return False
            return container.status in ("created", "running")

        async def stop() -> None:
            await asyncio.to_thread(remove_container, container, STOP_TIMEOUT)

        return _Server(gym, url, token, stop=stop, is_alive=alive, extra={"container": container.id})


SUBPROCESS = SubprocessLauncher()
"""The process's controller servers for ``controller="subprocess"``."""

DOCKER = DockerLauncher()
"""The process's controller servers for ``controller="docker"``."""
