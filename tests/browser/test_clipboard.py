"""Each browser env has a clipboard of its own, empty at every episode (issue 23).

The envs of a process share one Chromium, whose clipboard is one per process: before, env 0's
``ctrl+c`` was env 1's ``ctrl+v``, and a copy outlived ``reset``. Real Chromium, real key presses.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import gymnasium
import pytest
from browser_helpers import goto, js

from hud_gym.actions import PressAction
from hud_gym.controllers.browser.chromium import MANAGER

pytestmark = pytest.mark.timeout(240)

PAGE = "data:text/html," + quote(
    "<textarea id=src>secret-{n}</textarea><input id=dst><div id=note contenteditable>note</div>"
)


@pytest.fixture
def envs(capture: str) -> Iterator[list[Any]]:
    made = [gymnasium.make("hud/Browser-v0", screen_size=(640, 480), capture=capture) for _ in range(2)]
    try:
        yield made
    finally:
        for env in made:
            env.close()


def _open(env: Any, n: int) -> None:
    env.reset(seed=n)
    goto(env, PAGE.replace("%7Bn%7D", str(n)))


def _keys(env: Any, *keys: str) -> None:
    _, _, _, _, info = env.step(PressAction(keys=list(keys)))
    assert info["status"] == "ok", info


def _copy_source(env: Any) -> None:
    js(env, "document.getElementById('src').select()")
    _keys(env, "ctrl", "c")


def _paste_into_field(env: Any) -> str:
    js(env, "(() => { const f = document.getElementById('dst'); f.value = ''; f.focus(); })()")
    _keys(env, "ctrl", "v")
    return str(js(env, "document.getElementById('dst').value"))


def test_envs_sharing_a_browser_do_not_share_a_clipboard(envs: list[Any], capture: str) -> None:
    first, second = envs
    _open(first, 0)
    _open(second, 1)
    if capture == "cdp":  # the headed path gives each env a browser of its own by default
        assert first.unwrapped.controller.state.lease.key == second.unwrapped.controller.state.lease.key
        assert len({MANAGER.browser_pid(first.unwrapped.controller.state.lease.key)}) == 1
    _copy_source(first)
    assert _paste_into_field(second) == ""  # env 1 never sees env 0's copy
    assert _paste_into_field(first) == "secret-0"  # env 0's own copy pastes
    _copy_source(second)
    assert _paste_into_field(first) == "secret-0"  # env 1's copy did not replace env 0's
    assert _paste_into_field(second) == "secret-1"


def test_a_copy_does_not_outlive_the_episode(envs: list[Any]) -> None:
    env = envs[0]
    _open(env, 0)
    _copy_source(env)
    assert _paste_into_field(env) == "secret-0"
    _open(env, 1)  # reset, then the same page again
    assert _paste_into_field(env) == ""
    # A cut takes the selection out of the field and into this episode's clipboard only.
    js(env, "document.getElementById('src').select()")
    _keys(env, "ctrl", "x")
    assert js(env, "document.getElementById('src').value") == ""
    assert _paste_into_field(env) == "secret-1"
    _open(env, 2)
    assert _paste_into_field(env) == ""
