"""Fixtures of the desktop tests: a live ``hud/Ubuntu-v0`` env (real Xvfb, openbox, apps) and the
event-log test window, read back from its log file.

``desktop`` runs its controller in this process (the tests that reach inside it use it);
``controlled_desktop`` is the same desktop with the controller where the ``controller`` parameter
says (``local``, then ``subprocess``); a module whose tests act only through the env's API
overrides ``desktop`` with it. The event-log window is started with the ``launch`` custom action
(its log file inside the env's home, found through :func:`desktop_home`), so it works with every
controller.

The whole folder is skipped, with the reason, on a machine without Xvfb or openbox.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import gymnasium
import pytest
from desktop_helpers import HOME_TASK, desktop_home

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym import CustomAction
from hud_gym.controllers.ubuntu.display import (
    DesktopNotAvailableError,
    require_programs,
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the desktop tests (with the reason) on a machine without Xvfb or openbox."""
    try:
        require_programs("openbox")
    except DesktopNotAvailableError as exc:
        skip = pytest.mark.skip(reason=str(exc))
        for item in items:
            if "tests/ubuntu" in str(item.fspath).replace("\\", "/"):
                item.add_marker(skip)


def on_loop(env: Any, coro_fn: Callable[[Any], Awaitable[Any]], timeout: float = 30) -> Any:
    """Run ``coro_fn(controller)`` on the env's loop thread and return its result."""
    env = env.unwrapped
    return env._runner.run(coro_fn(env.controller), timeout=timeout)


def make_desktop(controller: str = "local") -> gymnasium.Env:
    return gymnasium.make(
        "hud/Ubuntu-v0", max_steps=100_000, in_container=False, controller=controller, render_mode="rgb_array"
    )


@pytest.fixture(scope="module")
def desktop() -> Iterator[gymnasium.Env]:
    """One live desktop env per test module (1280x720, openbox), reset once; its controller runs here."""
    env = make_desktop()
    env.reset(seed=0)
    yield env
    env.close()


@pytest.fixture(scope="module")
def controlled_desktop(controller: str) -> Iterator[gymnasium.Env]:
    """As ``desktop``, with the controller where the ``controller`` parameter says."""
    env = make_desktop(controller)
    env.reset(seed=0)
    yield env
    env.close()


@pytest.fixture(scope="module")
def controller_gym() -> str:
    """The desktop tests' ``controller="subprocess"`` envs share one server per module."""
    return "ubuntu"


class EventLogApp:
    """The event-log test window (``apps/eventlog.py``) running on an env's display.

    Attributes:
        path: its JSON-lines log.
        pid: its process id.
    """

    def __init__(self, env: Any, log_name: str, title: str = "hud-gym event log", geometry: str = "+40+40") -> None:
        self.env = env
        self.path = desktop_home(env) / log_name
        self.title = title
        launch = {"app": "eventlog", "args": ["--log", log_name, "--title", title, "--geometry", geometry]}
        _, _, _, _, info = env.step(CustomAction(action="launch", args=launch))
        assert info["status"] == "ok" and info["window"] == title, info
        self.pid = info["pid"]
        self.wait(lambda rs: any(r["type"] == "geometry" for r in rs), what="its window")
        env.step({"type": "wait", "time": 0})  # a first observation with the window in it

    def records(self, kind: str | None = None) -> list[dict[str, Any]]:
        """The log's records (of type ``kind``)."""
        if not self.path.exists():
            return []
        lines = self.path.read_text(encoding="utf-8").splitlines()
        records = [json.loads(line) for line in lines if line.strip()]
        return [r for r in records if kind is None or r["type"] == kind]

    def wait(
        self, predicate: Callable[[list[dict[str, Any]]], Any], timeout: float = 5.0, what: str = "records"
    ) -> Any:
        """Poll the log until ``predicate(records)`` is truthy; return its value."""
        deadline = time.monotonic() + timeout
        while True:
            records = self.records()
            value = predicate(records)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"event log: no {what} after {timeout} s; last records: {records[-8:]}")
            time.sleep(0.01)

    def mark(self) -> int:
        """The number of records so far (read the records after it with :meth:`since`)."""
        return len(self.records())

    def since(self, mark: int, kind: str | None = None) -> list[dict[str, Any]]:
        """Records written after :meth:`mark` returned ``mark`` (of type ``kind``)."""
        return [r for r in self.records()[mark:] if kind is None or r["type"] == kind]

    def box(self, name: str) -> tuple[int, int, int, int]:
        """``(x, y, w, h)`` of widget ``name`` (``pad``, ``toggle``, ``entry``) in root pixels."""
        geometry = self.records("geometry")[-1]
        x, y, w, h = geometry[name]
        return x, y, w, h

    def point(self, name: str, dx: int = 10, dy: int = 10) -> tuple[int, int]:
        """A point ``(dx, dy)`` pixels into widget ``name``."""
        x, y, _, _ = self.box(name)
        return x + dx, y + dy

    def text(self) -> str:
        """The entry's current text."""
        values = self.records("text")
        return values[-1]["value"] if values else ""


@pytest.fixture
def run() -> Callable[..., Any]:
    """:func:`on_loop`: ``run(env, lambda controller: controller.some_coroutine())``."""
    return on_loop


@pytest.fixture
def open_eventlog() -> Callable[..., EventLogApp]:
    """``open_eventlog(env, title=..., geometry=...)``: start another event-log window on ``env``
    (its log in the env's home: reset the episode with :data:`HOME_TASK` for a remote controller)."""
    counter = iter(range(1, 1000))

    def factory(env: Any, title: str = "hud-gym event log", geometry: str = "+40+40") -> EventLogApp:
        return EventLogApp(env, f"events-{next(counter)}.jsonl", title, geometry)

    return factory


@pytest.fixture
def eventlog(desktop: gymnasium.Env, open_eventlog: Callable[..., EventLogApp]) -> EventLogApp:
    """A fresh episode (of :data:`HOME_TASK`) of ``desktop`` with the event-log window open and focused."""
    desktop.reset(options={"task": HOME_TASK})
    return open_eventlog(desktop)
