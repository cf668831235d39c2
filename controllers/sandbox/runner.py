"""A running sandbox and the programs started in it, seen from the host.

:class:`Sandbox` starts ``bwrap`` (its command line from :mod:`.policy`) with the in-sandbox
:mod:`.supervisor` as its command, over a ``SOCK_SEQPACKET`` socket pair, and waits for the
supervisor's ``ready``. :meth:`Sandbox.spawn` asks the supervisor to start a program with three
descriptors of ours as its stdin, stdout and stderr (a log file, ``/dev/null``, or pipes whose
other ends this process reads and writes) and returns a :class:`SandboxProcess`: the subset of
``asyncio.subprocess.Process`` the controllers use (``pid`` on the host, ``returncode``,
``wait``, ``communicate``, ``stdin``, ``send_signal``).

The supervisor runs inside the sandbox, where the sandbox's own programs could tamper with it, so
nothing it says is trusted beyond the sandbox: process ids come from pidfds (translated by the
kernel), and :meth:`Sandbox.pids` lists the processes of the sandbox's pid namespace as the host's
``/proc`` shows it. :meth:`Sandbox.stop` kills the launcher; the sandbox's init dies with it
(``--die-with-parent``) and the kernel ends every process of its pid namespace, daemons included.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.process_utils import (
    alive,
    await_gone,
    die_with_parent,
    stop_process,
)
from hud_gym.controllers.sandbox.process import SandboxProcess, pidfd_pid

__all__ = ["SUPERVISOR", "Sandbox", "SandboxError", "SandboxProcess", "pid_namespace"]

SUPERVISOR = Path(__file__).resolve().parent / "supervisor.py"
"""The supervisor script (copied to a place the sandbox can read; see :class:`Sandbox`)."""
_MAX_MESSAGE = 1 << 20
PIPE = subprocess.PIPE
DEVNULL = subprocess.DEVNULL


class SandboxError(ControllerError):
    """The sandbox did not start, or its supervisor is gone."""


def pid_namespace(pid: int) -> int | None:
    """The inode of ``pid``'s pid namespace (``None``: gone or not ours to see)."""
    try:
        return os.stat(f"/proc/{pid}/ns/pid").st_ino
    except OSError:
        return None


class Sandbox:
    """One running sandbox; see the module docstring.

    Args:
        command: turns the supervisor's command line into the sandbox launcher's (bwrap, from a
            :class:`~.policy.SandboxPolicy`).
        supervisor: the supervisor script as the sandbox sees it.
        env: the launcher's environment.
        log_path: where the launcher's and supervisor's own output goes.
        python: the sandbox's Python.
    """

    def __init__(
        self, command: Any, supervisor: str, env: dict[str, str], log_path: Path, python: str = "/usr/bin/python3"
    ) -> None:
        self._command = command
        self._supervisor = supervisor
        self._env = env
        self._log_path = log_path
        self._python = python
        self._launcher: asyncio.subprocess.Process | None = None
        self._sock: socket.socket | None = None
        self._pending: dict[int, asyncio.Future[tuple[int, int, int]]] = {}
        self._running: dict[int, asyncio.Future[int]] = {}
        self._ids = itertools.count(1)
        self._ready: asyncio.Future[tuple[int, int]] | None = None
        self.supervisor_pid: int | None = None
        self.namespace: int | None = None

    @property
    def alive(self) -> bool:
        """True while the launcher and the supervisor run."""
        return self._launcher is not None and self._launcher.returncode is None and self._sock is not None

    async def start(self, timeout: float = 15.0) -> None:
        """Start the sandbox and wait for its supervisor.

        Raises:
            SandboxError: it did not start (the message quotes bwrap's log).
        """
        loop = asyncio.get_running_loop()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ours.setblocking(False)
        self._sock = ours
        self._ready = ready = loop.create_future()
        argv = self._command([self._python, "-I", "-S", self._supervisor, str(theirs.fileno())])
        try:
            with open(self._log_path, "ab") as log:
                self._launcher = await asyncio.create_subprocess_exec(
                    *argv,
                    stdin=DEVNULL,
                    stdout=log,
                    stderr=log,
                    env=self._env,
                    pass_fds=(theirs.fileno(),),
                    start_new_session=True,
                    preexec_fn=die_with_parent,
                )
        finally:
            theirs.close()
        loop.add_reader(ours.fileno(), self._on_message)
        launcher = asyncio.ensure_future(self._launcher.wait())
        try:
            done, _ = await asyncio.wait({ready, launcher}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            if ready not in done:
                raise SandboxError(
                    self._failure("did not start" if not done else f"exited with {self._launcher.returncode}")
                )
            self.supervisor_pid, self.namespace = ready.result()
        except BaseException:
            await self.stop()
            raise
        finally:
            launcher.cancel()

    def _failure(self, what: str) -> str:
        log = self._log_path.read_text(errors="replace")[-800:].strip() if self._log_path.exists() else ""
        return f"the sandbox {what} (log {self._log_path}):\n{log}"

    # ----------------------------------------------------------------- messages

    def _on_message(self) -> None:
        sock = self._sock
        if sock is None:
            return
        try:
            data, fds, _flags, _addr = socket.recv_fds(sock, _MAX_MESSAGE, 1)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data, fds = b"", []
        if not data:
            self._lost()
            return
        try:
            message = json.loads(data)
            self._handle(message, fds[0] if fds else -1)
        except (ValueError, TypeError, KeyError, OSError):  # a garbled message: the sandbox is not ours any more
            for fd in fds:
                os.close(fd)
            self._lost()

    def _handle(self, message: dict[str, Any], fd: int) -> None:
        op = message.get("op")
        if op == "ready" and self._ready is not None and not self._ready.done():
            pid = pidfd_pid(fd)
            os.close(fd)
            self._ready.set_result((pid, pid_namespace(pid) or 0))
        elif op == "spawned":
            future = self._pending.pop(int(message["id"]), None)
            if future is None or future.done():
                os.close(fd)
                return
            future.set_result((pidfd_pid(fd), int(message["pid"]), fd))
        elif op == "failed":
            future = self._pending.pop(int(message["id"]), None)
            if future is not None and not future.done():
                code, error = int(message.get("errno") or 0), str(message.get("error", "failed"))
                filename = message.get("filename")
                args = (code, error) if filename is None else (code, error, str(filename))
                future.set_exception(OSError(*args))  # OSError(ENOENT, ...) is a FileNotFoundError
        elif op == "exit":
            done = self._running.pop(int(message["pid"]), None)
            if done is not None and not done.done():
                done.set_result(int(message["returncode"]))
        elif fd >= 0:
            os.close(fd)

    def _lost(self) -> None:
        """The supervisor is gone: fail what waits on it; its programs are ended by the kernel."""
        sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(sock.fileno())
            sock.close()
        error = SandboxError("the sandbox's supervisor is gone")
        waiting: list[asyncio.Future[Any]] = [*self._pending.values()]
        if self._ready is not None:
            waiting.append(self._ready)
        for future in waiting:
            if not future.done():
                future.set_exception(error)
        for done in self._running.values():
            if not done.done():
                done.set_result(-signal.SIGKILL)
        self._pending.clear()
        self._running.clear()

    # ----------------------------------------------------------------- programs

    async def spawn(
        self,
        argv: Sequence[str],
        *,
        env: dict[str, str],
        cwd: str | None = None,
        stdin: Any = DEVNULL,
        stdout: Any = DEVNULL,
        stderr: Any = DEVNULL,
    ) -> SandboxProcess:
        """Start ``argv`` in the sandbox. ``stdin``/``stdout``/``stderr``: ``DEVNULL``, ``PIPE``,
        a file object or a descriptor.

        Raises:
            FileNotFoundError: no such program (or ``cwd``).
            SandboxError: the sandbox is gone.
        """
        sock = self._sock
        if sock is None or not self.alive:
            raise SandboxError("the sandbox is not running")
        loop = asyncio.get_running_loop()
        ends: list[int] = []  # the child's descriptors, closed here once sent
        keep: list[int] = []  # our ends of pipes
        for index, spec in enumerate((stdin, stdout, stderr)):
            if spec == PIPE:
                read, write = os.pipe()
                child, mine = (read, write) if index == 0 else (write, read)
                ends.append(child)
                keep.append(mine)
            elif spec == DEVNULL or spec is None:
                ends.append(os.open(os.devnull, os.O_RDWR))
                keep.append(-1)
            else:
                ends.append(os.dup(spec if isinstance(spec, int) else spec.fileno()))
                keep.append(-1)
        request_id = next(self._ids)
        future: asyncio.Future[tuple[int, int, int]] = loop.create_future()
        self._pending[request_id] = future
        request = {"op": "spawn", "id": request_id, "argv": list(argv), "env": env, "cwd": cwd}
        try:
            socket.send_fds(sock, [json.dumps(request).encode()], ends)
        except OSError as exc:
            self._pending.pop(request_id, None)
            for fd in keep:
                if fd >= 0:
                    os.close(fd)
            raise SandboxError(f"the sandbox's supervisor is gone: {exc}") from exc
        finally:
            for fd in ends:
                os.close(fd)
        try:
            pid, ns_pid, pidfd = await future
        except BaseException:
            for fd in keep:
                if fd >= 0:
                    os.close(fd)
            raise
        done: asyncio.Future[int] = self._running.setdefault(ns_pid, loop.create_future())
        process = SandboxProcess(pid, ns_pid, pidfd, done)
        await self._attach(process, keep)
        return process

    async def _attach(self, process: SandboxProcess, fds: list[int]) -> None:
        loop = asyncio.get_running_loop()
        stdin, stdout, stderr = fds
        if stdin >= 0:
            transport, protocol = await loop.connect_write_pipe(
                asyncio.streams.FlowControlMixin, os.fdopen(stdin, "wb", 0)
            )
            process.stdin = asyncio.StreamWriter(transport, protocol, None, loop)
        for fd, name in ((stdout, "stdout"), (stderr, "stderr")):
            if fd >= 0:
                reader = asyncio.StreamReader(limit=2**24)
                await loop.connect_read_pipe(partial(asyncio.StreamReaderProtocol, reader), os.fdopen(fd, "rb", 0))
                setattr(process, name, reader)

    def _init_pid(self) -> int | None:
        """The host pid of the sandbox's pid 1: the supervisor (``--as-pid-1``) or its parent."""
        candidate: int | None = self.supervisor_pid
        with contextlib.suppress(OSError, ValueError, StopIteration, TypeError):
            for _ in range(2):
                with open(f"/proc/{candidate}/status", encoding="ascii") as handle:
                    status = {line.split(":")[0]: line.split()[1:] for line in handle}
                if candidate is not None and status["NSpid"][-1] == "1" and pid_namespace(candidate) == self.namespace:
                    return candidate
                candidate = int(status["PPid"][0])
        return None

    def pids(self) -> set[int]:
        """Host pids of the sandbox's programs (every process of its pid namespace but its init and
        the supervisor)."""
        if self.namespace is None:
            return set()
        found = set()
        for name in os.listdir("/proc"):
            if name.isdigit() and pid_namespace(int(name)) == self.namespace:
                found.add(int(name))
        return {pid for pid in found - {self.supervisor_pid, self._init_pid()} if alive(pid)}

    def host_pids(self) -> dict[int, int]:
        """The sandbox's programs: pid inside the sandbox -> host pid (from ``NSpid`` in ``/proc``)."""
        mapping = {}
        for pid in self.pids():
            with contextlib.suppress(OSError, ValueError, StopIteration):
                with open(f"/proc/{pid}/status", encoding="ascii") as handle:
                    nspid = next(line for line in handle if line.startswith("NSpid:"))
                mapping[int(nspid.split()[-1])] = pid
        return mapping

    async def stop(self) -> None:
        """End the sandbox and every process in it; wait until they are gone (up to 5 s).

        SIGKILL goes to the sandbox's pid 1: the kernel ends every process of its pid namespace,
        pid 1 reaps them, the launcher reaps pid 1 and exits, and this process reaps the launcher
        (so their CPU time is accounted to this process's children; bwrap's own init would lose it).
        """
        init = self._init_pid() if self.namespace is not None else None
        programs = self.pids()
        members = programs | ({self.supervisor_pid} if self.supervisor_pid else set()) | ({init} if init else set())
        if init is not None and programs:
            # The programs first, reaped by pid 1 while it lives: a pid namespace's teardown
            # reaps without accounting, and their CPU time would be lost to the measurements.
            for pid in programs:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + 1.0
            while any(os.path.exists(f"/proc/{pid}") for pid in programs) and time.monotonic() < deadline:
                await asyncio.sleep(0.002)
        self._lost()
        if init is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(init, signal.SIGKILL)
        if self._launcher is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._launcher.wait()), 2.0 if init is not None else 0.0)
            except asyncio.TimeoutError:
                await stop_process(self._launcher, timeout=0.0)
        await await_gone(members, 5.0)
