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
- other sync functions (they use ``ctx.controller`` or ``ctx.state``) run on a daemon thread of
  their own (:mod:`hud_gym.evaluation.threads`). A timeout then stops the wait, not the thread: the
  step reports ``timeout`` and the thread finishes (or hangs) on its own, in nobody's way: later
  calls get threads of their own, and the process exits without waiting for it.

Setting ``HUD_GYM_EVAL_WORKERS=0`` runs isolated functions on the thread pool too.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
from collections.abc import Callable
from typing import Any

from hud_gym.evaluation.threads import run_on_thread
from hud_gym.evaluation.worker_pool import MAX_WORKERS, NoWorkerReady, get_worker_pool

__all__ = ["call_function", "isolated_context"]

_NOT_RUN = object()


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
            result = await run_on_thread(functools.partial(func, ctx, *args, **kwargs))
    if inspect.isawaitable(result):
        result = await result
    return result
