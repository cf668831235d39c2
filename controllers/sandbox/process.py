"""A program running in a :class:`~hud_gym.controllers.sandbox.runner.Sandbox`, seen from the host:
the part of ``asyncio.subprocess.Process`` the controllers use.

Its exit code comes from the sandbox's supervisor (its parent), its host pid and its signals go
through a pidfd (never a recycled pid), its pipes are this process's ends wrapped as asyncio
streams.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

__all__ = ["SandboxProcess", "pidfd_pid"]


def pidfd_pid(pidfd: int) -> int:
    """The host pid a pidfd refers to (-1: the process is gone and reaped)."""
    with open(f"/proc/self/fdinfo/{pidfd}", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("Pid:"):
                return int(line.split()[1])
    return -1


class SandboxProcess:
    """A program running in a :class:`Sandbox`; see the module docstring.

    Attributes:
        pid: its host pid (-1 if it had already ended when it was reported).
        ns_pid: its pid inside the sandbox.
        stdin: a stream writer when started with ``stdin=PIPE``.
        stdout, stderr: stream readers when started with ``PIPE``.
    """

    def __init__(self, pid: int, ns_pid: int, pidfd: int, done: asyncio.Future[int]) -> None:
        self.pid = pid
        self.ns_pid = ns_pid
        self._pidfd = pidfd
        self._done = done
        self.stdin: asyncio.StreamWriter | None = None
        self.stdout: asyncio.StreamReader | None = None
        self.stderr: asyncio.StreamReader | None = None
        done.add_done_callback(lambda _f: self._close_pidfd())

    def _close_pidfd(self) -> None:
        if self._pidfd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._pidfd)
            self._pidfd = -1

    @property
    def returncode(self) -> int | None:
        """The exit code (``-N``: killed by signal ``N``), ``None`` while it runs."""
        return self._done.result() if self._done.done() and not self._done.cancelled() else None

    async def wait(self) -> int:
        """Wait until it ends; its exit code."""
        return await asyncio.shield(self._done)

    def send_signal(self, sig: int) -> None:
        """Send ``sig`` (through its pidfd: never to a recycled pid)."""
        if self._pidfd >= 0:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._pidfd, sig)

    def kill(self) -> None:
        """SIGKILL it."""
        self.send_signal(signal.SIGKILL)

    async def communicate(self, input: bytes | None = None) -> tuple[bytes, bytes]:
        """Write ``input`` to its stdin (then close it), read stdout and stderr to the end, wait."""
        if self.stdin is not None:
            if input:
                self.stdin.write(input)
                with contextlib.suppress(ConnectionError):
                    await self.stdin.drain()
            self.stdin.close()

        async def read(stream: asyncio.StreamReader | None) -> bytes:
            return await stream.read() if stream is not None else b""

        out, err = await asyncio.gather(read(self.stdout), read(self.stderr))
        await self.wait()
        return out, err
