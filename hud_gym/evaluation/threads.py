"""Threads for sync setup and evaluate functions: a hung one never takes a later one's place.

A thread cannot be stopped. A fixed pool whose threads hang (an evaluator blocked for good on a
read: a FIFO an agent swapped in under a checked file, a dead server) runs out, and every later
function of the process then waits behind the hung ones and times out, however fast it is; and
``concurrent.futures`` joins its threads at interpreter exit, so one hung evaluator kept the
process from exiting after ``env.close()``.

So each call gets a daemon thread of its own (:func:`run_on_thread`; starting one costs ~0.1 ms,
nothing beside a grade). A call whose caller gives up (the env's ``step_timeout`` cancelled it) is
*abandoned*: its thread goes on or hangs on its own, counted by :func:`hung_threads` until it
ends, and takes nobody's place; the interpreter exits without waiting for it. The calls running at
once are as many as the envs evaluating at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["hung_threads", "run_on_thread"]

T = TypeVar("T")

_lock = threading.Lock()
_abandoned: set[threading.Thread] = set()


def hung_threads() -> int:
    """Threads still running a call whose caller gave up on it (timed out, cancelled)."""
    with _lock:
        return len(_abandoned)


def _deliver(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.done():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


async def run_on_thread(func: Callable[[], T]) -> T:
    """``func()`` on a new daemon thread (in a copy of the caller's context); its result or
    exception. Cancelling the caller returns at once and abandons the thread (see the module
    docstring)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    call = contextvars.copy_context().run
    finished = threading.Event()

    def target() -> None:
        value: Any
        try:
            ok, value = True, call(func)
        except BaseException as exc:  # noqa: BLE001  (the function's failure is the caller's to report)
            ok, value = False, exc
        with contextlib.suppress(RuntimeError):  # the caller's loop is closed: nobody to tell
            loop.call_soon_threadsafe(_deliver, future, ok, value)
        with _lock:
            finished.set()
            _abandoned.discard(thread)

    thread = threading.Thread(target=target, name="hud-gym-task", daemon=True)
    thread.start()
    try:
        return await future
    except asyncio.CancelledError:
        with _lock:
            if not finished.is_set():
                _abandoned.add(thread)
        raise
