"""Which processes one ``hud/Ubuntu-v0`` env runs, and what they hold and spend (``desktop_density``).

An env's processes are the trees of the three sandboxes its controller started: Xvfb's and the
window manager's (for the env's life), and the current episode's (its launcher, bubblewrap's init,
the supervisor, the apps). Each tree is found from a pid the controller gives
(:meth:`~hud_gym.controllers.ubuntu.desktop.DesktopAPI.pids`): the Xvfb and window-manager
launchers are children of this process; the episode's launcher is found by walking up from one of
its programs to the child of this process. Nothing is found by name, so the envs' trees are
disjoint, and other programs of the machine are never counted.

PSS (proportional set size) is read from ``/proc/<pid>/smaps_rollup``: a page shared by k
processes counts 1/k in each, so summed over every process of the machine it is the memory used.
CPU is ``utime + stime`` from ``/proc/<pid>/stat`` (through psutil).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from typing import Any

import psutil

__all__ = ["EnvProcesses", "cpu_seconds", "env_processes", "pss_kib"]


@dataclass
class EnvProcesses:
    """The live processes of one env: ``roots`` (sandbox launchers, children of this process) and
    every process, by pid, with the root it descends from."""

    roots: dict[str, int] = field(default_factory=dict)
    """Sandbox -> its launcher's pid (``xvfb``, ``wm``, ``episode``)."""
    members: dict[int, str] = field(default_factory=dict)
    """pid -> the sandbox (a key of ``roots``) it belongs to."""

    def processes(self) -> list[psutil.Process]:
        """The members still alive, as psutil processes."""
        found = []
        for pid in sorted(self.members):
            with contextlib.suppress(psutil.Error):
                found.append(psutil.Process(pid))
        return found


def _launcher_of(pid: int) -> int | None:
    """The ancestor of ``pid`` that is a child of this process (``None``: not a descendant)."""
    me = os.getpid()
    try:
        process: psutil.Process | None = psutil.Process(pid)
        while process is not None:
            if process.ppid() == me:
                return int(process.pid)
            process = process.parent()
    except psutil.Error:
        return None
    return None


def env_processes(env: Any) -> EnvProcesses:
    """The live processes of ``env`` (a ``hud/Ubuntu-v0`` env, or its wrapper), by sandbox; none
    when its desktop is not running (no reset yet, or closed)."""
    controller = env.unwrapped.controller
    pids = controller.desktop.pids() if controller is not None else {}
    if pids.get("xvfb") is None:
        return EnvProcesses()
    roots = {"xvfb": int(pids["xvfb"])}
    if pids.get("wm") is not None:
        roots["wm"] = int(pids["wm"])
    for task_pid in sorted(pids.get("tasks", ())):
        launcher = _launcher_of(task_pid)
        if launcher is not None:
            roots["episode"] = launcher
            break
    result = EnvProcesses(roots=roots)
    for name, root in roots.items():
        try:
            tree = psutil.Process(root)
            result.members[root] = name
            for child in tree.children(recursive=True):
                result.members[child.pid] = name
        except psutil.Error:
            continue
    return result


def pss_kib(pid: int) -> dict[str, int]:
    """``Pss``, ``Pss_Anon``, ``Pss_File`` and ``Pss_Shmem`` of ``pid`` in KiB (empty: gone)."""
    values: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as rollup:
            for line in rollup:
                key, _, rest = line.partition(":")
                if key.startswith("Pss"):
                    values[key] = int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        return {}
    return values


def cpu_seconds(processes: list[psutil.Process]) -> float:
    """``utime + stime`` summed over ``processes`` (the ones gone since are skipped)."""
    total = 0.0
    for process in processes:
        with contextlib.suppress(psutil.Error):
            times = process.cpu_times()
            total += times.user + times.system
    return total
