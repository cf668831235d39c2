"""Warm MiniWoB++ pages (controllers/browser/warm.py): a reset onto a recently used task takes its
page from a parked context instead of loading it again. What must hold: nothing of one task
reaches another task's episode (globals, timers, listeners, storage, cookies, DOM), a parked
page's scripts are paused, the switched-to page is what the agent sees and acts on (both capture
paths, one tab), a crashed parked page is dropped without failing the episode, and a reset onto a
task that does not keep its page closes every parked context."""

from __future__ import annotations

import asyncio
import io
import re
from collections.abc import Iterator
from typing import Any

import gymnasium
import numpy as np
import pytest
from PIL import Image

from hud_gym import ClickAction, Task
from hud_gym.suites.miniwob import MINIWOB_TASK_AREA
from hud_gym.suites.miniwob.tasks import task_url
from tests.browser.browser_helpers import js, on_loop

pytest.importorskip("miniwob")
pytestmark = pytest.mark.timeout(120)

A, B, C = "click-test-2", "click-test", "click-button"

TASK_A_STATE_JS = """() => {
  window.leakA = "a";
  localStorage.setItem("a", "1");
  sessionStorage.setItem("a", "1");
  document.cookie = "a=1; path=/";
  const div = document.createElement("div");
  div.id = "from-a";
  document.body.appendChild(div);
  window.ticks = [];
  setInterval(() => { window.ticks.push(performance.now()); localStorage.setItem("tick", "a"); }, 5);
  addEventListener("storage", e => { window.heard = (window.heard || []).concat([e.key]); });
  new BroadcastChannel("hud").onmessage = e => { window.heard = (window.heard || []).concat([e.data]); };
}"""


def make_env(**kwargs: Any) -> gymnasium.Env:
    return gymnasium.make(
        "hud/Browser-v0", task=f"miniwob/{A}", screen_size=(500, 320), elements=True, controller="local", **kwargs
    )


@pytest.fixture(scope="module")
def env() -> Iterator[gymnasium.Env]:
    env = make_env()
    yield env
    env.close()


def controller(env: gymnasium.Env) -> Any:
    return env.unwrapped.controller  # type: ignore[attr-defined]


def reset(env: gymnasium.Env, name: str, seed: int = 0) -> dict[str, Any]:
    obs, info = env.reset(seed=seed, options={"task": f"miniwob/{name}"})
    assert [tab["url"] for tab in info["tabs"]] == [task_url(name)], info["tabs"]
    info["obs"] = obs["screenshot"]
    return info


def solve(env: gymnasium.Env, info: dict[str, Any]) -> tuple[np.ndarray, float]:
    """Click the submit button (click-test, click-test-2) or the named one (click-button)."""
    elements = info["elements"]
    label = re.search(r'"(.+)"', info["prompt"])
    target = next(
        e
        for e in elements
        if e.get("id") == "subbtn"
        or (label and e["tag"] == "button" and (e.get("text") or "").strip() == label.group(1))
    )
    x, y, w, h = target["bbox"]
    obs, reward, terminated, _, step_info = env.step(ClickAction(point={"x": round(x + w / 2), "y": round(y + h / 2)}))
    assert step_info["status"] == "ok", step_info
    return obs, float(reward)


def page_pixels(env: gymnasium.Env) -> np.ndarray:
    """The active page's task area, rendered by Chromium for the test (the oracle)."""
    x, y, w, h = MINIWOB_TASK_AREA
    clip = {"x": x, "y": y, "width": w, "height": h}
    png = on_loop(env, lambda c: c.state.page.screenshot(clip=clip))
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)


def test_nothing_of_one_task_reaches_another_and_a_parked_page_is_paused(env: gymnasium.Env) -> None:
    reset(env, A)
    page_a = controller(env).state.page
    js(env, TASK_A_STATE_JS)
    env.reset(seed=1, options={"task": f"miniwob/{B}"})
    assert controller(env).state.page is not page_a and controller(env).state.pages == [controller(env).state.page]

    async def paused(c: Any) -> None:
        await c.state.parked[task_url(A)].pausing  # the pause has landed

    on_loop(env, paused)
    seen = js(
        env,
        """async () => {
          await new Promise(r => setTimeout(r, 600));
          const seen = {global: typeof window.leakA, local: localStorage.length, session: sessionStorage.length,
                        cookie: document.cookie, dom: !!document.getElementById("from-a"),
                        tick: localStorage.getItem("tick")};
          localStorage.setItem("b", "1");
          new BroadcastChannel("hud").postMessage("b");
          await new Promise(r => setTimeout(r, 100));
          return seen;
        }""",
    )
    assert seen == {"global": "undefined", "local": 0, "session": 0, "cookie": "", "dom": False, "tick": None}

    reset(env, A, seed=2)
    assert controller(env).state.page is page_a  # the warm page, not a reload
    back = js(
        env,
        """() => {
          const gaps = window.ticks.slice(1).map((t, i) => t - window.ticks[i]);
          return {heard: window.heard || [], local: localStorage.getItem("a"), cookie: document.cookie,
                  gap: Math.max(...gaps), global: window.leakA};
        }""",
    )
    # B's storage writes and messages never reached A (another context): A heard only the resets
    # clearing its own storage (key null). Its storage and cookies were cleared by the reset, its
    # document (a global) kept, as in a same-task reset.
    assert back["heard"] and all(key is None for key in back["heard"]), back["heard"]
    assert back["local"] is None and back["cookie"] == ""
    assert back["global"] == "a"
    assert back["gap"] >= 550, f"A's timer ran while it was parked (longest gap {back['gap']:.0f} ms)"


def test_a_crashed_parked_page_is_dropped_and_the_episode_goes_on(env: gymnasium.Env) -> None:
    reset(env, A)
    page_a = controller(env).state.page
    info = reset(env, B, seed=3)

    async def crash_parked(c: Any) -> None:
        session = c.state.sessions[page_a]
        crashed = asyncio.ensure_future(page_a.wait_for_event("crash"))
        command = asyncio.ensure_future(session.send("Page.crash"))
        await crashed
        command.cancel()

    on_loop(env, crash_parked)
    _, reward = solve(env, info)
    assert reward == 1.0 and controller(env).state.crashes == []
    assert task_url(A) not in controller(env).state.parked
    info = reset(env, A, seed=4)
    assert controller(env).state.page is not page_a
    assert solve(env, info)[1] == 1.0


def test_misses_reuse_the_lru_parked_context_and_a_task_without_keep_page_closes_them() -> None:
    env = make_env(warm_pages=1)
    try:
        reset(env, A)
        page_a = controller(env).state.page
        reset(env, B)
        page_b = controller(env).state.page
        reset(env, C)  # parks B; C is loaded in A's context, the least recently used
        assert controller(env).state.page is page_a and list(controller(env).state.parked) == [task_url(B)]
        reset(env, A)  # parks C; A is loaded in B's context
        assert controller(env).state.page is page_b and list(controller(env).state.parked) == [task_url(C)]
        blank = Task(id="blank", prompt="Nothing.", gym="hud-browser")
        _, info = env.reset(seed=0, options={"task": blank})
        assert page_a.is_closed() and not controller(env).state.parked
        assert [tab["url"] for tab in info["tabs"]] == ["about:blank"]
    finally:
        env.close()


def test_warm_pages_is_checked() -> None:
    with pytest.raises(ValueError, match="warm_pages"):
        make_env(warm_pages=-1)


@pytest.mark.timeout(180)
def test_a_switch_shows_and_drives_the_new_task_on_both_capture_paths(capture: str) -> None:
    env = make_env(capture=capture)
    try:
        oracle: dict[str, np.ndarray] = {}
        pages: dict[str, Any] = {}
        for round_ in range(2):
            for name in (A, C):
                info = reset(env, name, seed=round_)
                if round_:
                    assert controller(env).state.page is pages[name]  # warm
                pages[name] = controller(env).state.page
                frame = np.asarray(info["obs"], dtype=np.int16)
                oracle[name] = page_pixels(env)
                other = C if name == A else A
                own = np.abs(frame - oracle[name]).mean()
                if other in oracle:
                    assert own < np.abs(frame - oracle[other]).mean() / 2, (name, own)
                assert own < 8, f"the observation is not the {name} page ({own:.1f})"
                _, reward = solve(env, info)
                assert reward == 1.0
    finally:
        env.close()
