"""A private asyncio event loop on a daemon thread: the async core behind the sync Gymnasium API.

Every environment in a process runs its coroutines on one shared loop thread, so async resources
(one Playwright browser, one X connection) can be shared by all of them, and the sync API works
inside Jupyter, inside a running asyncio loop, or from worker threads.

Example:
    >>> runner = get_loop_thread()
    >>> async def add(a, b):
    ...     return a + b
    >>> runner.run(add(1, 2))
    3
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import os
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["EventLoopThread", "add_shutdown_hook", "get_loop_thread"]

T = TypeVar("T")


class EventLoopThread:
    """An event loop running forever on its own daemon thread."""

    def __init__(self, name: str = "hud-gym-loop") -> None:
        self.loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()
        self._started.wait()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(self._started.set)
        self.loop.run_forever()

    @property
    def alive(self) -> bool:
        """True while the loop thread runs."""
        return self._thread.is_alive() and not self.loop.is_closed()

    def in_loop_thread(self) -> bool:
        """True when called from the loop thread itself."""
        return threading.current_thread() is self._thread

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the loop and block until it finishes (or ``timeout`` seconds pass).

        Raises:
            RuntimeError: called from the loop thread (it would deadlock); use ``await`` there.
            TimeoutError: ``timeout`` passed; the coroutine is cancelled.
        """
        if self.in_loop_thread():
            coro.close()
            raise RuntimeError(
                "a sync hud-gym call was made on the hud-gym loop thread; await the async method instead"
            )
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            if future.done() and not future.cancelled():
                # The coroutine itself raised TimeoutError (the same class since Python 3.11).
                return future.result()
            future.cancel()
            raise TimeoutError(f"hud-gym call did not finish within {timeout} s") from None
        except KeyboardInterrupt:
            future.cancel()
            raise

    async def run_async(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` on the loop from any event loop (directly when already on it)."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            return await coro
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    def stop(self, timeout: float = 10.0) -> None:
        """Run the shutdown hooks, then stop the loop and join the thread."""
        if not self.alive:
            return
        try:
            self.run(_run_hooks(), timeout=timeout)
        except Exception:  # noqa: BLE001  (shutdown is best effort)
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
        if not self._thread.is_alive():
            self.loop.close()


_lock = threading.Lock()
_shared: EventLoopThread | None = None
_owner_pid: int | None = None
_hooks: list[Callable[[], Awaitable[None]]] = []


async def _run_hooks() -> None:
    for hook in reversed(_hooks):
        try:
            await hook()
        except Exception:  # noqa: BLE001
            pass


def add_shutdown_hook(hook: Callable[[], Awaitable[None]]) -> None:
    """Register a coroutine function run on the loop at interpreter exit (e.g. closing a browser)."""
    if hook not in _hooks:
        _hooks.append(hook)


def get_loop_thread() -> EventLoopThread:
    """The process-wide loop thread, started on first use (and again in a forked child)."""
    global _shared, _owner_pid
    with _lock:
        if _shared is None or _owner_pid != os.getpid() or not _shared.alive:
            if _owner_pid != os.getpid():
                _hooks.clear()
            _shared = EventLoopThread()
            _owner_pid = os.getpid()
        return _shared


@atexit.register
def _shutdown() -> None:
    if _shared is not None and _owner_pid == os.getpid():
        _shared.stop()
