"""Helpers of the browser tests.

(Imported as ``browser_helpers``: pytest puts this folder on ``sys.path`` for its test modules.)

Two ways to read a page back:

- :func:`page_state` goes through the env's public API, so it works with every ``controller=``:
  an episode reset with :data:`STATE_TASK` grades with the gym's ``text_matches`` evaluator on the
  hidden ``#hud-state`` field that ``fixtures/probe.js`` adds to the fixture pages, whose value is
  the page's state as JSON, computed when read (events, pointer moves, scroll, focus, field values
  and selections, a few element boxes, drag logs, dialog results).
- :func:`js` and :func:`on_loop` reach into an in-process controller (``controller="local"`` only).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from hud_gym.actions import CustomAction
from hud_gym.task import Task

STATE_TASK = Task(
    id="page-state", prompt="Use the page.", gym="hud-browser", evaluate=("text_matches", "#hud-state", "")
)
"""The task of episodes whose page state the test reads with :func:`page_state`."""


def page_state(env: Any) -> dict[str, Any]:
    """The state of the active page (one with ``probe.js``) of an episode reset with :data:`STATE_TASK`."""
    grade = env.unwrapped.evaluate()
    assert not grade.is_error and "text" in grade.info, f"no page state (is the episode's task STATE_TASK?): {grade}"
    return json.loads(grade.info["text"])


def on_loop(env: Any, coro_fn: Callable[[Any], Awaitable[Any]], timeout: float = 30) -> Any:
    """Run ``coro_fn(controller)`` on the env's loop thread and return its result (local controllers)."""
    env = env.unwrapped
    return env._runner.run(coro_fn(env.controller), timeout=timeout)


def js(env: Any, expression: str, arg: Any = None) -> Any:
    """Evaluate ``expression`` (a JS expression or function) in the env's active page (local controllers)."""
    return on_loop(env, lambda c: c.state.page.evaluate(expression, arg))


def goto(env: Any, url: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Navigate with the ``goto`` custom action; return the step's observation and info."""
    obs, _, _, _, info = env.step(CustomAction(action="goto", args={"url": url}))
    assert info["status"] == "ok", info
    assert "navigation_error" not in info, info
    return obs, info


def open_page(browser: Any, url: str) -> tuple[Any, list[str]]:
    """A new 1400x1000 page of ``browser`` (Playwright's sync API) loaded with ``url``, and the list
    its console errors and uncaught exceptions are appended to."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(url, wait_until="load")
    return page, errors
