"""A timeout that always fires: :func:`within`, the env's ``asyncio.wait_for`` for controller calls.

``asyncio.wait_for`` cancels the awaited task at its timeout and then waits, without a bound, for
the task to finish: a task that awaits something in a ``finally`` (a DevTools call to a renderer
held by a dialog, an X round trip) or swallows the cancellation holds the caller for as long as it
likes, and the env's ``step_timeout`` does not fire. :func:`within` cancels the task the same way,
waits at most ``grace`` seconds for it to go, and then leaves it behind (its outcome retrieved when
it ends) and raises :class:`asyncio.TimeoutError`. The env restarts a controller after a timeout,
which ends whatever such a task still waits on.

A call that blocks the loop thread itself (a synchronous call that does not return) cannot be
cancelled: no timer fires until it returns. Such calls must run elsewhere (X requests run on their
connection's thread, :mod:`hud_gym.controllers.x11.xthread`). Should one still get through, a
result that comes later than ``timeout`` is not taken as a success: :func:`within` raises
:class:`asyncio.TimeoutError` for it as well (a step past its ``step_timeout`` is ``timeout``,
never ``ok``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

__all__ = ["GRACE", "LATE", "within"]

T = TypeVar("T")

GRACE = 2.0
"""Seconds a cancelled task may take to finish before it is left behind."""

LATE = 0.5
"""Seconds past its deadline after which a finished task's result is a timeout all the same (the
loop was blocked: its timer could not fire)."""


def _retrieve(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


async def within(awaitable: Awaitable[T], timeout: float, *, grace: float = GRACE) -> T:
    """``await awaitable``, for at most ``timeout`` seconds (+ ``grace`` for it to be cancelled).

    Raises:
        asyncio.TimeoutError: ``timeout`` passed; the awaitable was cancelled (and left behind if
            it did not finish within ``grace`` seconds of that).
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:
        task.cancel()
        task.add_done_callback(_retrieve)
        raise
    if done:
        if loop.time() > deadline + LATE:  # the loop itself was blocked past the deadline
            task.add_done_callback(_retrieve)
            raise asyncio.TimeoutError(f"finished {loop.time() - deadline:.1f} s after its {timeout} s")
        return task.result()
    task.cancel()
    task.add_done_callback(_retrieve)
    await asyncio.wait({task}, timeout=grace)
    raise asyncio.TimeoutError(f"not finished within {timeout} s")
