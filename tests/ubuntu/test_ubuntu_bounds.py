"""Amplification on the desktop (issue 23, item 11): a window title and the clipboard are read
bounded (:mod:`hud_gym.bounds`), never whole."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gymnasium
import pytest
from Xlib import X

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym import Task, WaitAction
from hud_gym.bounds import CLIPBOARD_BYTES, TITLE_CHARS


@pytest.fixture(scope="module")
def host() -> Iterator[gymnasium.Env]:
    env = gymnasium.make("hud/Ubuntu-v0", in_container=False, max_steps=1000)
    yield env
    env.close()


def _huge_title_window(env: gymnasium.Env, size: int) -> None:
    """A window whose _NET_WM_NAME holds ``size`` bytes, as an agent's program would make it."""

    async def make(controller: Any) -> None:
        conn, _ = controller.state.x
        window = conn.root.create_window(10, 10, 200, 100, 0, X.CopyFromParent, background_pixel=0)
        utf8, name = conn.atom("UTF8_STRING"), conn.atom("_NET_WM_NAME")
        chunk = b"T" * 65536
        for i in range(size // len(chunk)):
            window.change_property(name, utf8, 8, chunk, mode=X.PropModeReplace if i == 0 else X.PropModeAppend)
        window.map()
        conn.sync()

    env.unwrapped._runner.run(make(env.unwrapped.controller), timeout=60)


@pytest.mark.timeout(300)
def test_an_8_mb_window_title_is_read_cut(host: gymnasium.Env) -> None:
    host.reset(options={"task": Task(prompt="titles", gym="hud-ubuntu")})
    _huge_title_window(host, 8 * 1024 * 1024)
    titles: list[str] = []
    for _ in range(50):  # until the window manager lists it
        _, _, _, _, info = host.step(WaitAction(time=200))
        titles = [title for title in info["windows"] if title.startswith("TTT")]
        if titles:
            break
    assert titles, info["windows"]
    assert all(len(title) < TITLE_CHARS + 20 and title.endswith("[cut]") for title in titles)


@pytest.mark.timeout(300)
def test_a_huge_clipboard_is_read_at_most_its_cap(host: gymnasium.Env) -> None:
    text = "head " + "c" * (3 * CLIPBOARD_BYTES) + " tail"
    task = Task(
        prompt="clipboard",
        gym="hud-ubuntu",
        setup=[("set_clipboard", text)],
        evaluate=[("clipboard_contains", "tail")],
    )
    host.reset(options={"task": task})
    grade = host.unwrapped.evaluate()
    assert not grade.is_error and grade.reward == 0.0  # past the cap: not read
    assert grade.info["clipboard_truncated"] is True
    assert len(grade.info["clipboard"]) < 3000
    head = host.unwrapped.controller
    read = host.unwrapped._runner.run(head.desktop.clipboard_read(), timeout=60)
    assert read.truncated and read.text.startswith("head ccc") and len(read.text) < CLIPBOARD_BYTES + 40
