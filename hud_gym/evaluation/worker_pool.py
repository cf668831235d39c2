"""Killable worker processes for isolated evaluate functions (see :mod:`hud_gym.evaluation.calls`).

A thread cannot be stopped, so an evaluate function that needs only its arguments and the
agent's response (the response evaluators, GAIA's scorer, ...) runs in a worker process: if the
call outlives its timeout (the env's ``step_timeout``), the caller is cancelled and the worker is
SIGKILLed on the spot; the next call starts a fresh one.

Workers are persistent: started on first use, or ahead of it (:meth:`WorkerPool.prestart`: an env
whose task is graded by an isolated function starts one at reset, and a killed worker's
replacement starts at once), reused call after call, at most :data:`MAX_WORKERS` per process
(``$HUD_GYM_EVAL_WORKERS``); a call that finds them all busy waits for one. A worker's start-up
costs ~0.5 s of CPU (``python -m hud_gym.evaluation.worker`` imports hud_gym); no call waits for
it: while every worker is still starting, :meth:`WorkerPool.call` raises :class:`NoWorkerReady`
and the caller runs the function on a thread instead (timed out like any thread, not killed). The pool serves any event loop (it talks to a worker through a
non-blocking socket with the caller's loop) and is per process: a forked child starts its own.
Every worker is killed at interpreter exit, and dies with its parent. Each runs in a process group
of its own, killed as a whole with it: what a function started (``sleep`` in a subprocess) goes
with its worker, not to init.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from typing import Any

from hud_gym.errors import HudGymError
from hud_gym.evaluation.frames import HEADER, READY, frame

__all__ = ["MAX_WORKERS", "NoWorkerReady", "WorkerDied", "WorkerPool", "get_worker_pool"]

MAX_WORKERS = max(0, int(os.environ.get("HUD_GYM_EVAL_WORKERS", "4")))
"""Worker processes one process may run at once (``0``: isolated functions run on threads)."""


class WorkerDied(HudGymError, RuntimeError):
    """The worker process running a call died (killed, crashed, out of memory)."""


class NoWorkerReady(HudGymError, RuntimeError):
    """Every worker is still starting; the caller runs the function elsewhere meanwhile."""


class _Worker:
    """One worker process and the parent's end of its socket."""

    def __init__(self) -> None:
        parent, child = socket.socketpair()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "hud_gym.evaluation.worker", str(child.fileno())],
                pass_fds=(child.fileno(),),
                stdin=subprocess.DEVNULL,
                close_fds=True,
                start_new_session=True,  # its own process group: killed with whatever it started
            )
        except BaseException:
            parent.close()
            raise
        finally:
            child.close()
        parent.setblocking(False)
        self.sock = parent
        self.sock.sendall(frame({"sys_path": list(sys.path)}))  # small: fits the socket buffer
        self.ready = False
        self.dead = False

    @property
    def pid(self) -> int:
        """The worker's process id."""
        return self.process.pid

    def poll_ready(self) -> bool:
        """True once the worker has said it is ready (its imports done); never blocks."""
        if self.ready or self.dead:
            return self.ready
        try:
            data = self.sock.recv(1)
        except BlockingIOError:
            return False
        except OSError:
            data = b""
        self.ready, self.dead = data == READY, data != READY
        return self.ready

    async def call(self, request: Any) -> Any:
        """Send ``request`` and await the answer (see :mod:`hud_gym.evaluation.worker`).

        Raises:
            WorkerDied: the worker ended before answering.
        """
        loop = asyncio.get_running_loop()
        await loop.sock_sendall(self.sock, frame(request))
        header = await self._read(loop, HEADER.size)
        return pickle.loads(await self._read(loop, HEADER.unpack(header)[0]))

    async def _read(self, loop: asyncio.AbstractEventLoop, size: int) -> bytes:
        data = bytearray()
        while len(data) < size:
            chunk = await loop.sock_recv(self.sock, min(size - len(data), 1 << 20))
            if not chunk:
                try:  # its socket ended: it is exiting; give its exit code a moment to arrive
                    code: int | None = await asyncio.to_thread(self.process.wait, 2.0)
                except subprocess.TimeoutExpired:
                    code = None
                raise WorkerDied(
                    f"the evaluation worker process (pid {self.pid}) died"
                    + (f" with exit code {code}" if code is not None else "")
                )
            data += chunk
        return bytes(data)

    def kill(self) -> None:
        """SIGKILL the worker and every process it started (its process group: a function's
        children that did not leave it), and reap it in the background."""
        with contextlib.suppress(OSError):
            self.sock.close()
        with contextlib.suppress(OSError):  # the group is the worker's pid while any member lives
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self.process.kill()
        threading.Thread(target=self.process.wait, name="hud-gym-worker-reaper", daemon=True).start()

    def alive(self) -> bool:
        """True while the process runs."""
        return self.process.poll() is None


class WorkerPool:
    """At most ``max_workers`` worker processes, lent to one call at a time."""

    def __init__(self, max_workers: int = MAX_WORKERS) -> None:
        self.max_workers = max_workers
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._live: set[_Worker] = set()
        self._count = 0
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()
        self.started = 0
        """Workers started so far (a restart after a timeout counts)."""
        self.killed = 0
        """Workers killed so far because a call was cancelled or timed out."""

    @property
    def pids(self) -> list[int]:
        """The process ids of the workers, idle or busy, ready or starting."""
        with self._lock:
            return sorted(w.pid for w in self._live)

    async def call(
        self, module: str, qualname: str, args: tuple[Any, ...], kwargs: dict[str, Any], context: Any
    ) -> Any:
        """Run ``module.qualname(context, *args, **kwargs)`` in a worker; return its result or
        raise its exception. Cancelling the caller (a timeout) kills the worker.

        Raises:
            NoWorkerReady: every worker is still starting (one is started if there is room): run
                the call elsewhere rather than wait for a start-up.
        """
        worker = await self._acquire()
        try:
            status, value = await worker.call((module, qualname, args, kwargs, context))
        except BaseException:
            self._discard(worker, killed=True)
            raise
        self._release(worker)
        if status == "error":
            raise value
        return value

    async def _acquire(self) -> _Worker:
        while True:
            with self._lock:
                starting = self._take_ready()
                if isinstance(starting, _Worker):
                    return starting
                room = self._count < self.max_workers
                if not starting and not room:  # every worker busy: wait for one
                    loop = asyncio.get_running_loop()
                    waiter: asyncio.Future[None] = loop.create_future()
                    self._waiters.append((loop, waiter))
            if starting or room:
                if not starting:
                    self.prestart(force=True)
                raise NoWorkerReady("the evaluation worker processes are still starting")
            try:
                await waiter
            except BaseException:
                with self._lock, contextlib.suppress(ValueError):
                    self._waiters.remove((loop, waiter))
                raise

    def _take_ready(self) -> _Worker | bool:
        """An idle ready worker (removed from the idle list), else whether one is still starting
        (called with the lock held; dead idle workers are dropped)."""
        starting = False
        for worker in list(self._idle):
            if worker.poll_ready():
                self._idle.remove(worker)
                return worker
            if worker.dead or not worker.alive():
                self._idle.remove(worker)
                self._live.discard(worker)
                self._count -= 1
                worker.kill()
            else:
                starting = True
        return starting

    def prestart(self, *, force: bool = False) -> None:
        """Start a worker now, in the background: when none runs yet, or with ``force`` when
        there is room. An env whose task is graded by an isolated function calls it at reset, so
        that its first graded step does not wait for the start-up."""
        with self._lock:
            if self.max_workers < 1 or self._count >= self.max_workers or (self._count > 0 and not force):
                return
            self._count += 1
        try:
            worker = _Worker()
        except BaseException:
            self._discard(None, killed=False)
            raise
        with self._lock:
            self._live.add(worker)
            self.started += 1
            self._idle.append(worker)

    def wait_ready(self, timeout: float = 30.0) -> bool:
        """Block until a worker is idle and ready (starting one if none runs); False after
        ``timeout`` seconds. For benchmarks and tests that need a warm worker."""
        self.prestart()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if any(w.poll_ready() for w in self._idle):
                    return True
            time.sleep(0.01)
        return False

    def _wake_one(self) -> None:
        """Wake the oldest waiter (called with the lock held)."""
        while self._waiters:
            loop, waiter = self._waiters.popleft()
            if not loop.is_closed():
                loop.call_soon_threadsafe(_set_result, waiter)
                return

    def _release(self, worker: _Worker) -> None:
        with self._lock:
            self._idle.append(worker)
            self._wake_one()

    def _discard(self, worker: _Worker | None, *, killed: bool) -> None:
        if worker is not None:
            worker.kill()
        with self._lock:
            if worker is not None:
                self._live.discard(worker)
            self._count -= 1
            self.killed += int(killed)
            self._wake_one()
        if killed:
            with contextlib.suppress(Exception):  # a replacement starts now, not at the next call
                self.prestart()

    def shutdown(self) -> None:
        """Kill every idle worker (busy ones are killed when their call ends or is cancelled)."""
        with self._lock:
            idle, self._idle = self._idle, []
            self._count -= len(idle)
            self._live.difference_update(idle)
        for worker in idle:
            worker.kill()


def _set_result(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


_pool: WorkerPool | None = None
_pool_pid: int | None = None
_pool_lock = threading.Lock()


def get_worker_pool() -> WorkerPool:
    """This process's worker pool (a forked child gets a new one)."""
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():
            _pool, _pool_pid = WorkerPool(), os.getpid()
        return _pool


@atexit.register
def _shutdown() -> None:
    if _pool is not None and _pool_pid == os.getpid():
        _pool.shutdown()
