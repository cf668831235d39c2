"""Watching and ending processes by pid, for controllers that start browsers, displays and apps.

The processes are often not our children (a browser's renderers, a task's grandchildren), so
they cannot be waited for: these helpers poll their state through ``psutil``.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import time
from collections.abc import Callable, Iterable

import psutil

__all__ = ["alive", "await_gone", "die_with_parent", "kill_process_tree", "process_tree", "stop_process", "wait_gone"]

POLL_S = 0.01


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie counts as gone). Cheap enough to call on every step
    (one read of ``/proc/<pid>/stat`` on Linux, ~10 us)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            data = stat.read()
    except FileNotFoundError:
        return False
    except OSError:  # no procfs: ask psutil
        try:
            return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False
    end = data.rfind(b")")  # the state follows the command name, which may hold spaces and parentheses
    return end != -1 and data[end + 2 : end + 3] not in (b"Z", b"X", b"x")


def process_tree(pid: int) -> set[int]:
    """``pid`` and its live descendants (empty when ``pid`` is gone)."""
    try:
        proc = psutil.Process(pid)
        return {pid, *(c.pid for c in proc.children(recursive=True))}
    except psutil.Error:
        return set()


def wait_gone(pids: Iterable[int], timeout: float) -> set[int]:
    """Block until every pid has exited or ``timeout`` s pass; return the pids still running."""
    remaining = {pid for pid in pids if alive(pid)}
    deadline = time.monotonic() + timeout
    while remaining and time.monotonic() < deadline:
        time.sleep(POLL_S)
        remaining = {pid for pid in remaining if alive(pid)}
    return remaining


async def await_gone(pids: Iterable[int], timeout: float) -> set[int]:
    """:func:`wait_gone` for coroutines: polls without blocking the event loop."""
    remaining = {pid for pid in pids if alive(pid)}
    deadline = time.monotonic() + timeout
    while remaining and time.monotonic() < deadline:
        await asyncio.sleep(POLL_S)
        remaining = {pid for pid in remaining if alive(pid)}
    return remaining


def kill_process_tree(pids: Iterable[int], timeout: float = 5.0) -> None:
    """SIGKILL ``pids`` and all their descendants, then wait up to ``timeout`` s for them to go."""
    procs: dict[int, psutil.Process] = {}
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            procs[pid] = proc
            for child in proc.children(recursive=True):
                procs[child.pid] = child
        except psutil.Error:
            continue
    for proc in procs.values():
        with contextlib.suppress(psutil.Error):
            proc.send_signal(signal.SIGKILL)
    wait_gone(procs, timeout)


_PR_SET_PDEATHSIG = 1
try:
    _prctl: Callable[..., int] | None = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # not Linux
    _prctl = None


def die_with_parent() -> None:
    """``preexec_fn``: the child gets SIGKILL when the thread that started it ends (Linux)."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


async def stop_process(process: asyncio.subprocess.Process | None, timeout: float = 3.0) -> None:
    """SIGTERM ``process`` (its whole session), wait up to ``timeout``, then SIGKILL; reap it, and
    wait (up to 5 s) until its descendants of the moment are gone too (a sandbox's processes end
    after the sandbox's launcher)."""
    if process is None or process.returncode is not None:
        return
    descendants = process_tree(process.pid) - {process.pid}
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(process.pid, sig)  # leader of its own session: its children go too
        except (ProcessLookupError, PermissionError):
            # Not a group leader. (Popen.send_signal polls first: after a killpg that could reap
            # the process under asyncio's child watcher, which then reports it as unknown.)
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(sig)
        try:
            await asyncio.wait_for(process.wait(), wait)
            break
        except asyncio.TimeoutError:
            continue
    await await_gone(descendants, 5.0)
