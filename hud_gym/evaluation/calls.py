"""Where a setup or evaluate function runs, so that none can freeze the shared event loop.

Every env of a process runs on one event-loop thread (:mod:`hud_gym.core.loop`): a function that
blocks there blocks them all, and no timeout can fire. So:

- ``async def`` functions run on the loop (they must await, not block; the env's
  ``step_timeout``/``reset_timeout`` cancel them at their next ``await``);
- **isolated** sync functions (registered with ``isolated=True``: they use only their arguments
  and the context's ``final_response``, ``task``, ``seed``, ``gym`` and ``instruction``, such as
  the response evaluators) run in a worker process (:mod:`hud_gym.evaluation.worker_pool`), which
  is killed when the call times out (while the process's first worker is still starting, on a
  thread, so that no call waits for a start-up);
- other sync functions (they use ``ctx.controller`` or ``ctx.state``) run on a thread of a
  dedicated pool. A timeout then stops the wait, not the thread: the step reports ``timeout`` and
  the thread finishes (or hangs) on its own. :data:`THREADS` threads serve the process.

Setting ``HUD_GYM_EVAL_WORKERS=0`` runs isolated functions on the thread pool too.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import dataclasses
import functools
import inspect
import os
import threading
from collections.abc import Callable
from typing import Any

from hud_gym.evaluation.worker_pool import MAX_WORKERS, NoWorkerReady, get_worker_pool

__all__ = ["THREADS", "call_function", "isolated_context"]

THREADS = 32
"""Threads that run non-isolated sync setup/evaluate functions (per process)."""

_NOT_RUN = object()

_executor: concurrent.futures.ThreadPoolExecutor | None = None
_executor_pid: int | None = None
_executor_lock = threading.Lock()


def _threads() -> concurrent.futures.ThreadPoolExecutor:
    global _executor, _executor_pid
    with _executor_lock:
        if _executor is None or _executor_pid != os.getpid():
            _executor = concurrent.futures.ThreadPoolExecutor(THREADS, thread_name_prefix="hud-gym-task")
            _executor_pid = os.getpid()
        return _executor


def isolated_context(ctx: Any) -> Any:
    """What an isolated function sees of ``ctx`` (a
    :class:`~hud_gym.evaluation.registry.FunctionContext`): no controller, an empty ``state``."""
    return dataclasses.replace(ctx, controller=None, state={})


async def call_function(
    func: Callable[..., Any],
    ctx: Any,
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
    *,
    isolated: bool = False,
) -> Any:
    """``func(ctx, *args, **kwargs)`` where it belongs (see the module docstring); an awaitable
    it returns is awaited on the loop."""
    kwargs = kwargs or {}
    if inspect.iscoroutinefunction(func):
        result = func(ctx, *args, **kwargs)
    else:
        result = _NOT_RUN
        if isolated and MAX_WORKERS > 0:
            with contextlib.suppress(NoWorkerReady):
                result = await get_worker_pool().call(
                    func.__module__, func.__qualname__, args, kwargs, isolated_context(ctx)
                )
        if result is _NOT_RUN:
            call = functools.partial(contextvars.copy_context().run, func, ctx, *args, **kwargs)
            result = await asyncio.get_running_loop().run_in_executor(_threads(), call)
    if inspect.isawaitable(result):
        result = await result
    return result
