"""Helpers of the browser tests: drive a live env's page on the hud-gym loop thread.

(Imported as ``browser_helpers``: pytest puts this folder on ``sys.path`` for its test modules.)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from hud_gym.actions import CustomAction


def on_loop(env: Any, coro_fn: Callable[[Any], Awaitable[Any]], timeout: float = 30) -> Any:
    """Run ``coro_fn(controller)`` on the env's loop thread and return its result."""
    env = env.unwrapped
    return env._runner.run(coro_fn(env.controller), timeout=timeout)


def js(env: Any, expression: str, arg: Any = None) -> Any:
    """Evaluate ``expression`` (a JS expression or function) in the env's active page."""
    return on_loop(env, lambda c: c.page.evaluate(expression, arg))


def goto(env: Any, url: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Navigate with the ``goto`` custom action; return the step's observation and info."""
    obs, _, _, _, info = env.step(CustomAction(action="goto", args={"url": url}))
    assert info["status"] == "ok", info
    assert "navigation_error" not in info, info
    return obs, info
