"""A timeout that always fires: :func:`within`, the env's ``asyncio.wait_for`` for controller calls.

``asyncio.wait_for`` cancels the awaited task at its timeout and then waits, without a bound, for
the task to finish: a task that awaits something in a ``finally`` (a DevTools call to a renderer
held by a dialog, an X round trip) or swallows the cancellation holds the caller for as long as it
likes, and the env's ``step_timeout`` does not fire. :func:`within` cancels the task the same way,
waits at most ``grace`` seconds for it to go, and then leaves it behind (its outcome retrieved when
it ends) and raises :class:`asyncio.TimeoutError`. The env restarts a controller after a timeout,
which ends whatever such a task still waits on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

__all__ = ["GRACE", "within"]

T = TypeVar("T")

GRACE = 2.0
"""Seconds a cancelled task may take to finish before it is left behind."""


def _retrieve(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


async def within(awaitable: Awaitable[T], timeout: float, *, grace: float = GRACE) -> T:
    """``await awaitable``, for at most ``timeout`` seconds (+ ``grace`` for it to be cancelled).

    Raises:
        asyncio.TimeoutError: ``timeout`` passed; the awaitable was cancelled (and left behind if
            it did not finish within ``grace`` seconds of that).
    """
    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:
        task.cancel()
        task.add_done_callback(_retrieve)
        raise
    if done:
        return task.result()
    task.cancel()
    task.add_done_callback(_retrieve)
    await asyncio.wait({task}, timeout=grace)
    raise asyncio.TimeoutError(f"not finished within {timeout} s")
