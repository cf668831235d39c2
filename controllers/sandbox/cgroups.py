"""Control groups for what an episode starts: find where this process may make them, make one per
episode, and read what it used.

Two kernel interfaces, one API. **cgroup v2** (one hierarchy; ``memory``, ``pids`` and ``cpu``
controllers enabled for the children of a cgroup this process may write: the root cgroup, the one
``HUD_GYM_CGROUP`` names, or the parent of this process's own cgroup, as a ``systemd`` delegation
gives) and **cgroup v1** (one hierarchy per controller: ``memory``, ``pids``, ``cpu``,
``cpuacct``; the groups are made under this process's own group in each). :func:`detect` finds
which works here (:mod:`.cgroup_detect`); :class:`Cgroup` is one episode's group.

A group's limits: ``memory`` (v2 ``memory.max`` and ``memory.swap.max`` 0; v1
``memory.limit_in_bytes`` and ``memory.memsw.limit_in_bytes``), ``pids`` (``pids.max``: processes
*and* threads), ``cpu`` (a quota of cores: v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``) and a lower
CPU weight than the host's own work (v2 ``cpu.weight`` 50, v1 ``cpu.shares`` 512). What it used:
the fork refusals (``pids.events``), the out-of-memory kills (v2 ``memory.events``, v1
``memory.oom_control``) and the CPU time (v2 ``cpu.stat``, v1 ``cpuacct.usage``).

``HUD_GYM_CGROUP=off`` turns cgroups off (the limits are then rlimits, :mod:`.limits`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["BACKSTOP", "CGROUP_ENV", "PREFIX", "Cgroup", "CgroupSupport", "Usage"]

CGROUP_ENV = "HUD_GYM_CGROUP"
"""``off``: no cgroups; a path: the (delegated, writable) cgroup v2 directory to make groups under."""
CONTROLLERS = ("memory", "pids", "cpu")
V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuacct")
PREFIX = "hud-gym-"
PERIOD_US = 100_000
LOW_WEIGHT_V2 = 50
LOW_SHARES_V1 = 512
BACKSTOP = 4
"""A group whose memory limit its owner enforces gets the kernel's at this many times it."""


@dataclass(frozen=True)
class Usage:
    """What a group used: fork refusals at ``pids.max``, out-of-memory kills, CPU seconds."""

    pids_refused: int = 0
    oom_kills: int = 0
    cpu_seconds: float = 0.0


@dataclass(frozen=True)
class CgroupSupport:
    """Where groups can be made: ``version`` 1 or 2, and the parent folder per controller."""

    version: int
    parents: dict[str, Path] = field(default_factory=dict)

    def describe(self) -> str:
        where = sorted({str(p) for p in self.parents.values()})
        return f"cgroup v{self.version} under {', '.join(where)}"


class Cgroup:
    """One episode's group (a folder per hierarchy); see the module docstring."""

    def __init__(self, support: CgroupSupport, folders: dict[str, Path]) -> None:
        self.support = support
        self.folders = folders
        self.memory_limit: int | None = None

    @classmethod
    def create(
        cls,
        support: CgroupSupport,
        *,
        memory: int | None,
        pids: int | None,
        cpu: float | None,
        kernel_oom_kill: bool = True,
    ) -> Cgroup:
        """Make a group with these limits (bytes, processes and threads, cores; ``None``: none).
        ``kernel_oom_kill=False``: ``memory`` is for the owner to enforce (it polls
        :meth:`at_memory_limit` and kills), the kernel's limit is :data:`BACKSTOP` times it:
        Chromium's browser process crashes when a renderer fails for memory at a cgroup limit, and
        lives on when the renderer is killed (SIGKILL) first.

        Raises:
            OSError: the kernel refused (the half-made group is removed).
        """
        name = f"{PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}"
        folders = {c: parent / name for c, parent in support.parents.items()}
        group = cls(support, folders)
        try:
            for folder in dict.fromkeys(folders.values()):
                folder.mkdir(mode=0o755)
            group._limit(memory, pids, cpu)
            if not kernel_oom_kill and memory is not None:
                group._hold_at_limit(memory)
        except OSError:
            group.remove()
            raise
        return group

    def _write(self, controller: str, name: str, value: str, optional: bool = False) -> None:
        try:
            (self.folders[controller] / name).write_text(value)
        except FileNotFoundError:
            if not optional:
                raise

    def _limit(self, memory: int | None, pids: int | None, cpu: float | None) -> None:
        v2 = self.support.version == 2
        if memory is not None:
            if v2:
                self._write("memory", "memory.max", str(memory))
                self._write("memory", "memory.swap.max", "0", optional=True)
            else:
                self._write("memory", "memory.limit_in_bytes", str(memory))
                self._write("memory", "memory.memsw.limit_in_bytes", str(memory), optional=True)
        if pids is not None:
            self._write("pids", "pids.max", str(pids))
        quota = str(max(1000, int(cpu * PERIOD_US))) if cpu is not None else ("max" if v2 else "-1")
        if v2:
            self._write("cpu", "cpu.max", f"{quota} {PERIOD_US}")
            self._write("cpu", "cpu.weight", str(LOW_WEIGHT_V2))
        else:
            self._write("cpu", "cpu.cfs_period_us", str(PERIOD_US))
            self._write("cpu", "cpu.cfs_quota_us", quota)
            self._write("cpu", "cpu.shares", str(LOW_SHARES_V1))

    def _hold_at_limit(self, memory: int) -> None:
        self.memory_limit = memory
        if self.support.version == 2:
            self._write("memory", "memory.max", str(BACKSTOP * memory))
        else:  # the memory+swap limit first: it may never be below the memory limit
            self._write("memory", "memory.memsw.limit_in_bytes", str(BACKSTOP * memory), optional=True)
            self._write("memory", "memory.limit_in_bytes", str(BACKSTOP * memory))

    def at_memory_limit(self) -> bool:
        """The group's memory reached the limit its owner enforces (``kernel_oom_kill=False``)."""
        limit = self.memory_limit
        name = "memory.current" if self.support.version == 2 else "memory.usage_in_bytes"
        try:
            used = int((self.folders["memory"] / name).read_text())
        except (OSError, ValueError):
            return False
        return limit is not None and used >= limit

    def procs_files(self) -> list[str]:
        """The ``cgroup.procs`` files a process writes ``0`` to in order to join (one per hierarchy)."""
        return [str(folder / "cgroup.procs") for folder in dict.fromkeys(self.folders.values())]

    def add(self, pid: int) -> None:
        """Move a running process (all its threads) into the group.

        Raises:
            OSError: it is gone, or not ours to move.
        """
        for path in self.procs_files():
            Path(path).write_text(str(pid))

    def pids(self) -> set[int]:
        """The processes in the group (empty once removed)."""
        found: set[int] = set()
        for path in self.procs_files():
            with contextlib.suppress(OSError, ValueError):
                found |= {int(line) for line in Path(path).read_text().split()}
        return found

    def _counter(self, controller: str, name: str, key: str) -> int:
        with contextlib.suppress(OSError, ValueError):
            for line in (self.folders[controller] / name).read_text().splitlines():
                parts = line.split()
                if len(parts) == 2 and parts[0] == key:
                    return int(parts[1])
        return 0

    def usage(self) -> Usage:
        """What the group used so far (zeros for what cannot be read)."""
        v2 = self.support.version == 2
        oom = self._counter("memory", "memory.events" if v2 else "memory.oom_control", "oom_kill")
        if v2:
            cpu = self._counter("cpu", "cpu.stat", "usage_usec") / 1e6
        else:
            try:
                cpu = int((self.folders["cpuacct"] / "cpuacct.usage").read_text()) / 1e9
            except (OSError, ValueError):
                cpu = 0.0
        return Usage(pids_refused=self._counter("pids", "pids.events", "max"), oom_kills=oom, cpu_seconds=cpu)

    def kill(self, timeout: float = 5.0) -> set[int]:
        """SIGKILL every process in the group until none is left (up to ``timeout`` s); the pids left."""
        deadline = time.monotonic() + timeout
        while True:
            left = self.pids()
            if not left or time.monotonic() > deadline:
                return left
            if self.support.version == 2:
                with contextlib.suppress(OSError):
                    self._write("pids", "cgroup.kill", "1")
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)

    def remove(self, timeout: float = 5.0) -> bool:
        """Kill what is left and remove the folders; ``False`` if one could not be removed."""
        self.kill(timeout)
        removed = True
        for folder in dict.fromkeys(self.folders.values()):
            deadline = time.monotonic() + timeout
            while True:
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:  # EBUSY while the last processes exit
                    if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                        removed = False
                        break
                    time.sleep(0.005)
        return removed
