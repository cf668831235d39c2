"""No process left behind: every process a fault test started is gone after ``close()``.

:class:`ProcessTracker` records every descendant of this process while a test runs (by pid and
start time); :func:`check_processes` asserts that none still runs once the test closed its envs.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
import time
from typing import Self

import psutil

from hud_gym.evaluation.worker_pool import get_worker_pool

_TRACKERS: set[ProcessTracker] = set()


def sample_trackers() -> None:
    """Let every running tracker sample now (before a kill re-parents the victim's children)."""
    for tracker in list(_TRACKERS):
        tracker.sample()


_PR_SET_CHILD_SUBREAPER = 36


def _set_subreaper(on: bool) -> bool:
    """Make this process adopt the orphans of its descendants (Linux); False when it cannot."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


class ProcessTracker:
    """Every process descending from this one while the tracker runs, by (pid, start time).

    This process is a child subreaper meanwhile, so what a killed browser, server or sandbox
    leaves behind is re-parented here, not to init: a leak stays a descendant, seen by the
    samples (every ``interval`` s, before each kill, and at the end) however short its first
    life as someone's child. The orphans adopted are reaped when the tracker ends. As a subreaper
    the final sample alone would see every leak (a leak stays a descendant), so the periodic
    samples are a safety net, once a second (five times a second when this process cannot be a
    subreaper): each one walks every process of the machine, CPU the envs under test want.
    """

    def __init__(self, interval: float | None = None) -> None:
        self._interval = interval
        self.interval = 0.2 if interval is None else interval
        self.baseline = self._snapshot()
        self.seen: dict[int, tuple[float, str, int]] = {}  # pid: (start time, name, parent when first seen)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fault-process-tracker", daemon=True)
        self._subreaper = False

    @staticmethod
    def _snapshot() -> dict[int, tuple[float, str, int]]:
        found = {}
        for proc in psutil.Process().children(recursive=True):
            try:
                found[proc.pid] = (proc.create_time(), proc.name(), proc.ppid())
            except psutil.Error:
                continue
        return found

    def sample(self) -> None:
        snapshot = self._snapshot()
        with self._lock:
            for pid, record in snapshot.items():
                if self.baseline.get(pid, (None,))[0] != record[0]:
                    self.seen.setdefault(pid, record)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def __enter__(self) -> Self:
        self._subreaper = _set_subreaper(True)
        if self._interval is None:
            self.interval = 1.0 if self._subreaper else 0.2
        _TRACKERS.add(self)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        _TRACKERS.discard(self)
        self._stop.set()
        self._thread.join(10)
        if self._subreaper:
            _set_subreaper(False)
            me = os.getpid()
            for pid, (_, _, parent) in self.seen.items():
                if parent != me:  # adopted (our own children are their waiters' to reap)
                    with contextlib.suppress(ChildProcessError, OSError):
                        os.waitpid(pid, os.WNOHANG)

    def leftovers(self, grace: float = 5.0) -> list[str]:
        """The processes seen that still run ``grace`` s after the call (same pid, same start)."""
        self.sample()

        def running() -> list[str]:
            out = []
            with self._lock:
                seen = list(self.seen.items())
            for pid, (started, name, _) in seen:
                try:
                    proc = psutil.Process(pid)
                    if proc.create_time() == started and proc.status() != psutil.STATUS_ZOMBIE:
                        out.append(f"{pid} {name} {' '.join(proc.cmdline())[:120]}")
                except psutil.Error:
                    continue
            return out

        deadline = time.monotonic() + grace
        while (left := running()) and time.monotonic() < deadline:
            time.sleep(0.1)
            self.sample()
        return left


def check_processes(tracker: ProcessTracker, seed: int) -> int:
    """Every process the test started is gone (call after closing its envs); returns how many
    were tracked. The process-wide evaluation workers are stopped first (the next use starts
    new ones)."""
    get_worker_pool().shutdown()
    left = tracker.leftovers()
    assert not left, f"seed {seed}: processes left after close(): {left}"
    return len(tracker.seen)
