"""Limits on the renderer processes of a shared Chromium: what a page's JavaScript can take.

A page runs in a renderer process of the browser every env shares (:mod:`.chromium`); different
browser contexts never share one, so a renderer is one env's. :class:`RendererGuard` watches the
browser's renderers (every :data:`POLL_S` seconds, on the loop thread through a worker thread)
and puts each new one under :data:`RENDERER_LIMITS` (the browser env's ``limits`` option):

- in a cgroup of its own where this process can make them (:mod:`~hud_gym.controllers.sandbox.cgroups`):
  its threads (``pids``: a page's workers), a CPU quota (``cpu_cores``) and its memory, read at
  every poll (a renderer past ``memory_mb`` is stopped; the kernel's limit, a backstop, is
  :data:`~hud_gym.controllers.sandbox.cgroups.BACKSTOP` times it: Chromium's browser process
  crashes when a renderer fails for memory);
- else ``RLIMIT_DATA`` at ``memory_mb`` (set on the running renderer with ``prlimit``);
- in both, a renderer busy for ``cpu_seconds`` in a row (a spinning loop) is stopped: busy over
  a poll when one of its threads was on a CPU or waiting for one (``/proc/<pid>/task/*/schedstat``)
  for :data:`BUSY` of the poll or more. A spinning thread is runnable all the time whatever the
  machine's load; a page that works hard while its env steps fast (a frame, an input, a frame)
  still sleeps between them.

Stopped (``SIGSTOP``), not killed: Chromium's browser process (Debian's 156) crashes with
``SIGSEGV`` when a renderer that hung is killed, and takes every env's pages with it. A stopped
renderer uses no CPU and no more memory and draws no frame: its env's observation fails, the
episode ends as ``env_error``, and the env's next reset restarts its controller, whose browser
context (and the renderer with it) the browser then disposes of.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from hud_gym.controllers.sandbox.cgroups import Cgroup
from hud_gym.controllers.sandbox.limits import MIB, ResourceLimits, cgroup_support

__all__ = ["POLL_S", "RENDERER_LIMITS", "RendererGuard"]

RENDERER_LIMITS = ResourceLimits(memory_mb=1024, pids=256, cpu_cores=1.0, cpu_seconds=10.0)
"""A renderer's defaults: 1 GiB, 256 threads, one core; stopped after 10 s busy in a row."""
POLL_S = 0.25
BUSY = 0.9
"""A renderer is busy over a poll when one of its threads was running or runnable this share of
the poll or more."""


@dataclass
class _Renderer:
    cgroup: Cgroup | None
    runnable: dict[int, int]  # thread id -> nanoseconds on a CPU or waiting for one, at the last poll
    busy_for: float = 0.0
    stopped_at: float | None = None


class RendererGuard:
    """The renderers of one browser under ``limits``; see the module docstring."""

    def __init__(self, browser_pid: int, limits: ResourceLimits) -> None:
        self.browser_pid = browser_pid
        self.limits = limits
        self.support = cgroup_support()
        self.renderers: dict[int, _Renderer] = {}
        self.killed: list[tuple[int, str]] = []
        self._others: set[int] = set()  # the browser's processes that are not renderers
        self._last = time.monotonic()

    @property
    def mode(self) -> str:
        return f"cgroup{self.support.version}" if self.support is not None else "rlimit"

    def _renderer_pids(self) -> set[int]:
        try:
            children = psutil.Process(self.browser_pid).children(recursive=True)
        except psutil.Error:
            return set()
        found = set()
        self._others &= {child.pid for child in children}
        for child in children:
            if child.pid in self.renderers:
                found.add(child.pid)
            elif child.pid not in self._others:
                with contextlib.suppress(psutil.Error):
                    cmdline = child.cmdline()
                    if "--type=renderer" in cmdline and "--top-chrome-webui" not in cmdline:  # not the browser's own UI
                        found.add(child.pid)
                    else:
                        self._others.add(child.pid)
        return found

    def _confine(self, pid: int) -> _Renderer:
        limits, group = self.limits, None
        if self.support is not None:
            memory = limits.memory_mb * MIB if limits.memory_mb is not None else None
            with contextlib.suppress(OSError):
                group = Cgroup.create(
                    self.support, memory=memory, pids=limits.pids, cpu=limits.cpu_cores, kernel_oom_kill=False
                )
                try:
                    group.add(pid)
                except OSError:
                    group.remove()
                    group = None
        if group is None and limits.memory_mb is not None:
            with contextlib.suppress(psutil.Error, OSError, ValueError):
                psutil.Process(pid).rlimit(resource.RLIMIT_DATA, (limits.memory_mb * MIB,) * 2)
        return _Renderer(group, _runnable_ns(pid))

    def poll(self) -> None:
        """Confine new renderers, stop a spinning or swollen one, forget (and remove the groups of) gone ones."""
        now = time.monotonic()
        elapsed, self._last = max(now - self._last, 1e-3), now
        live = self._renderer_pids()
        for pid in set(self.renderers) - live:
            gone = self.renderers.pop(pid)
            if gone.cgroup is not None:
                gone.cgroup.remove(timeout=1.0)
        for pid in live:
            if pid not in self.renderers:
                self.renderers[pid] = self._confine(pid)
                continue
            self._check(pid, self.renderers[pid], elapsed)

    def _check(self, pid: int, renderer: _Renderer, elapsed: float) -> None:
        """Stop the renderer past its memory limit, or busy ``cpu_seconds`` in a row."""
        if renderer.stopped_at is not None:
            return
        budget = self.limits.cpu_seconds
        runnable = _runnable_ns(pid)
        most = max((ns - renderer.runnable.get(tid, ns) for tid, ns in runnable.items()), default=0)
        renderer.runnable = runnable
        busy = most >= BUSY * elapsed * 1e9
        renderer.busy_for = renderer.busy_for + elapsed if busy else 0.0
        reason = None
        if renderer.cgroup is not None and renderer.cgroup.at_memory_limit():
            reason = f"memory: past its limit of {self.limits.memory_mb} MiB"
        elif budget is not None and renderer.busy_for >= budget:
            reason = f"busy for {renderer.busy_for:.1f} s in a row"
        if reason is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGSTOP)
            renderer.stopped_at = time.monotonic()
            self.killed.append((pid, reason))

    def close(self) -> None:
        """Remove the renderers' groups (the browser is gone or going)."""
        for renderer in self.renderers.values():
            if renderer.cgroup is not None:
                renderer.cgroup.remove(timeout=1.0)
        self.renderers.clear()


def _runnable_ns(pid: int) -> dict[int, int]:
    """Each thread of ``pid``: nanoseconds spent on a CPU plus waiting for one (its ``schedstat``)."""
    found: dict[int, int] = {}
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                on_cpu, waiting = Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[:2]
                found[int(tid)] = int(on_cpu) + int(waiting)
    return found
