"""Per-episode resource limits: what they are, how they are enforced here, and whether an episode
broke one.

:class:`ResourceLimits` (an env option, ``limits``): memory, processes and threads, a CPU quota
and a CPU budget for what one episode starts. They are enforced by a control group per episode
where this process can make one (:mod:`.cgroups`: cgroup v2, or v1), else by rlimits set on every
program the episode starts (``RLIMIT_AS``, ``RLIMIT_NPROC``, ``RLIMIT_CPU``: per process, counted
per user namespace, so per sandbox, since Linux 5.14). :func:`enforcement` says which (``hud-gym
doctor`` prints it).

An episode that reaches a limit is over: a fork refused at ``pids``, a process killed for memory,
the CPU budget spent (cgroups); the processes within :data:`NPROC_SLACK` of ``pids``, their memory past ``memory`` or their
CPU time past the budget, read from ``/proc`` (rlimits, which refuse without telling). Then
:meth:`Confinement.violation` names it, the controller kills the episode's processes and the env
reports ``env_error``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import psutil
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hud_gym.controllers.sandbox.cgroup_detect import detect, sweep
from hud_gym.controllers.sandbox.cgroups import Cgroup, CgroupSupport, Usage

__all__ = ["DESKTOP_LIMITS", "MIB", "Confinement", "ResourceLimits", "cgroup_support", "enforcement", "parse_limits"]

MIB = 1 << 20
NPROC_SLACK = 8
"""rlimits: the episode counts as at its ``pids`` limit this close to it (the supervisor, and the
zombies a fork bomb leaves, count too but are not listed)."""


class ResourceLimits(BaseModel):
    """What one episode's processes may use (``None``: no limit of that kind).

    Attributes:
        memory_mb: memory of all of them together, MiB (rlimits: the address space of each).
        pids: processes and threads at once.
        cpu_cores: CPU at once, in cores (a cgroup quota; rlimits cannot do it).
        cpu_seconds: CPU time for the whole episode (rlimits: for each process).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    memory_mb: int | None = Field(2048, ge=32)
    pids: int | None = Field(512, ge=16)
    cpu_cores: float | None = Field(1.0, gt=0.01)
    cpu_seconds: float | None = Field(300.0, gt=0)


DESKTOP_LIMITS = ResourceLimits(memory_mb=2048, pids=512, cpu_cores=1.0, cpu_seconds=300.0)
"""The desktop's defaults: 2 GiB, 512 processes and threads, one core, 300 CPU seconds per episode."""


def parse_limits(value: ResourceLimits | Mapping[Any, Any] | None, default: ResourceLimits) -> ResourceLimits:
    """The env option ``limits``: a :class:`ResourceLimits`, a dict of some of its fields (the others
    from ``default``) or ``None`` (``default``).

    Raises:
        ValueError: an unknown field or a bad value, named.
    """
    if value is None:
        return default
    if isinstance(value, ResourceLimits):
        return value
    if not isinstance(value, Mapping):
        raise ValueError(f"limits must be a dict of {', '.join(ResourceLimits.model_fields)}, got {value!r}")
    try:
        return default.model_copy(update={}) if not value else ResourceLimits(**{**default.model_dump(), **value})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"bad limits: {problems}") from None


@functools.lru_cache(maxsize=1)
def _support() -> tuple[CgroupSupport | None, str]:
    support, reason = detect()
    if support is not None:
        with contextlib.suppress(OSError):
            sweep(support)
    return support, reason


def cgroup_support() -> CgroupSupport | None:
    """Where this process makes its cgroups (``None``: it cannot; rlimits then)."""
    return _support()[0]


def enforcement() -> tuple[str, str]:
    """How limits are enforced in this process: ``("cgroup2" | "cgroup1" | "rlimit", detail)``."""
    support, reason = _support()
    if support is not None:
        return f"cgroup{support.version}", reason
    return "rlimit", f"setrlimit on each program (no cgroups: {reason})"


class Confinement:
    """One episode's limits in force: its cgroup (if any), the rlimits of its programs, the check.

    Args:
        limits: the limits.
        support: the cgroups to use (default: :func:`enforcement`'s); ``None`` with
            ``use_cgroups=False`` forces rlimits.
    """

    def __init__(self, limits: ResourceLimits, support: CgroupSupport | None = None, use_cgroups: bool = True) -> None:
        self.limits = limits
        if use_cgroups and support is None:
            support = cgroup_support()
        self.cgroup: Cgroup | None = None
        if use_cgroups and support is not None:
            memory = limits.memory_mb * MIB if limits.memory_mb is not None else None
            self.cgroup = Cgroup.create(support, memory=memory, pids=limits.pids, cpu=limits.cpu_cores)
        self._cpu_seen: dict[int, float] = {}  # rlimits: CPU seconds of each process seen, gone ones too
        self._joins = (
            [os.open(path, os.O_WRONLY | os.O_CLOEXEC) for path in self.cgroup.procs_files()] if self.cgroup else []
        )

    @property
    def mode(self) -> str:
        """``cgroup2``, ``cgroup1`` or ``rlimit``."""
        return f"cgroup{self.cgroup.support.version}" if self.cgroup is not None else "rlimit"

    def join(self) -> None:
        """Put the calling process in the episode's cgroup (a ``preexec_fn``: before the launcher runs)."""
        for fd in self._joins:
            os.write(fd, b"0")

    def rlimits(self) -> dict[str, int]:
        """The rlimits every program of the episode gets (``as``, ``nproc``, ``cpu``; none with a cgroup)."""
        if self.cgroup is not None:
            return {}
        found = {}
        if self.limits.memory_mb is not None:
            found["as"] = self.limits.memory_mb * MIB
        if self.limits.pids is not None:
            found["nproc"] = self.limits.pids
        if self.limits.cpu_seconds is not None:  # a backstop: the budget is checked over all programs
            found["cpu"] = 2 * int(self.limits.cpu_seconds) + 1
        return found

    def usage(self, pids: Iterable[int]) -> Usage:
        """What the episode used: from the cgroup, else summed over ``pids`` (``/proc``)."""
        if self.cgroup is not None:
            return self.cgroup.usage()
        threads, memory = 0, 0
        for pid in pids:
            with contextlib.suppress(psutil.Error):
                proc = psutil.Process(pid)
                with proc.oneshot():
                    threads += proc.num_threads()
                    memory += proc.memory_info().rss
                    times = proc.cpu_times()
                    self._cpu_seen[pid] = max(self._cpu_seen.get(pid, 0.0), times.user + times.system)
        cpu = sum(self._cpu_seen.values())
        at_pids = self.limits.pids is not None and threads + NPROC_SLACK >= self.limits.pids
        at_memory = self.limits.memory_mb is not None and memory >= self.limits.memory_mb * MIB
        return Usage(pids_refused=int(at_pids), oom_kills=int(at_memory), cpu_seconds=cpu)

    def violation(self, pids: Callable[[], Iterable[int]]) -> str | None:
        """Which limit the episode reached (a sentence), or ``None``; ``pids``: its processes."""
        used = self.usage(pids() if self.cgroup is None else ())
        limits = self.limits
        if used.pids_refused:
            return f"the episode's processes reached their limit of {limits.pids} processes and threads"
        if used.oom_kills:
            return f"the episode's processes reached their memory limit of {limits.memory_mb} MiB"
        if limits.cpu_seconds is not None and used.cpu_seconds > limits.cpu_seconds:
            return f"the episode's processes used {used.cpu_seconds:.1f} CPU seconds, over their budget of {limits.cpu_seconds:g}"
        return None

    def close(self) -> None:
        """Kill what is left in the cgroup and remove it (idempotent)."""
        for fd in self._joins:
            os.close(fd)
        self._joins = []
        if self.cgroup is not None:
            self.cgroup.remove()


def set_rlimits(values: Mapping[str, int]) -> None:
    """Apply :meth:`Confinement.rlimits` to the calling process (soft = hard)."""
    names = {"as": resource.RLIMIT_AS, "nproc": resource.RLIMIT_NPROC, "cpu": resource.RLIMIT_CPU}
    for name, value in values.items():
        resource.setrlimit(names[name], (value, value))
