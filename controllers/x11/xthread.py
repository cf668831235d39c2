"""A thread of its own for one X connection's blocking work: no X server can stop the env loop.

An X request that waits for a reply (``XSync``, a property read, a pointer query, an MIT-SHM grab)
blocks its thread for as long as the server does not answer, and a server answers nobody while a
client holds it grabbed (``XGrabServer``: any client with the display's cookie, such as an agent's
script in the desktop's xterm) or while it is stopped (``SIGSTOP``). On the hud-gym loop thread,
that would stop every env of the process, and no ``step_timeout`` could fire. So each
:class:`~.connection.XConnection` (and the screen grabber that goes with it) works on an
:class:`XThread`: a daemon thread running an event loop of its own, to which the env's loop hands
coroutines (:meth:`XThread.run`). The env's loop waits for them with its deadline
(:func:`hud_gym.core.deadline.within`); a call stuck in a frozen server is left behind, and ends
when the controller is restarted (its X server killed, or the connection's socket shut down by
:meth:`~.connection.XConnection.close`: the blocked read returns).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from hud_gym.controllers.base import ControllerError

__all__ = ["XThread"]

T = TypeVar("T")


async def _call(func: Callable[[], T]) -> T:
    return func()


class XThread:
    """A daemon thread with an event loop, serving one X connection; see the module docstring.

    Args:
        name: the display name, for the thread's name.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name=f"hud-gym-x{name}", daemon=True)
        self._thread.start()

    @property
    def ident(self) -> int | None:
        """The thread's identifier (for tests)."""
        return self._thread.ident

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_forever()
        finally:
            tasks = asyncio.all_tasks(self._loop)
            for task in tasks:
                task.cancel()
            with contextlib.suppress(BaseException):
                self._loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            self._loop.close()

    async def run(self, work: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """``await work()`` on this thread; its result or exception. Cancelling the caller cancels
        the work at its next ``await`` on this thread and returns at once, even while the work is
        blocked in an X call.

        Raises:
            ControllerError: the thread was stopped.
        """
        coro = work()
        try:
            future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        except RuntimeError as exc:  # the loop is closed
            coro.close()
            raise ControllerError(f"the X connection to {self.name} is closed") from exc
        return await asyncio.wrap_future(future)

    async def call(self, func: Callable[[], T]) -> T:
        """``func()`` on this thread (as :meth:`run`, for a plain function)."""
        return await self.run(lambda: _call(func))

    def call_soon(self, work: Callable[[], Any]) -> None:
        """Run ``work()`` on this thread after what it runs now, without waiting for it."""
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(work)

    def stop(self) -> None:
        """End the thread once what it runs now returns (idempotent; never blocks)."""
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._loop.stop)

    def is_alive(self) -> bool:
        """True while the thread runs."""
        return self._thread.is_alive()
