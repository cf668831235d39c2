"""Observations: fresh pixels, the page's text and info, elements, scaling, dialogs, tabs; with the
controller in this process and in a controller server (except where a test reads the in-process
controller: ``local_only``)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from browser_helpers import STATE_TASK, goto, on_loop, page_state

from hud_gym.actions import ClickAction, MoveAction, WaitAction

pytestmark = pytest.mark.timeout(60)

TOGGLE = (170, 28)  # the input fixture's toggle button (off its label): blue, red after a click, ...


@pytest.fixture(scope="module")
def env(controller: str, capture: str) -> Iterator[gymnasium.Env]:
    env = gymnasium.make(
        "hud/Browser-v0",
        screen_size=(1024, 768),
        elements=True,
        max_steps=10_000,
        controller=controller,
        capture=capture,
    )
    env.reset(seed=0)
    yield env
    env.close()


def step(env: gymnasium.Env, action: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    obs, _, _, _, info = env.step(action)
    assert info["status"] == "ok", info
    return obs, info


def colour(obs: dict[str, Any], point: tuple[int, int]) -> str:
    r, g, b = (int(v) for v in obs["screenshot"][point[1], point[0]])
    if r > 200 and g < 60 and b < 60:
        return "red"
    if b > 200 and r < 60 and g < 60:
        return "blue"
    return f"rgb({r}, {g}, {b})"


def test_every_step_returns_the_frame_after_the_click(env: gymnasium.Env, site: str) -> None:
    env.reset(seed=0)
    obs, _ = goto(env, f"{site}/input.html")
    assert colour(obs, TOGGLE) == "blue"
    for i in range(20):
        obs, _ = step(env, ClickAction(point=TOGGLE))
        assert colour(obs, TOGGLE) == ("red" if i % 2 == 0 else "blue"), f"stale frame at click {i}"


def test_observation_text_and_info(env: gymnasium.Env, site: str) -> None:
    env.reset(seed=0)
    obs, info = goto(env, f"{site}/input.html")
    assert obs["text"].endswith(f"URL: {site}/input.html\nTitle: Input fixture")
    assert info["url"] == f"{site}/input.html" and info["title"] == "Input fixture"
    assert info["tabs"] == [{"index": 0, "url": f"{site}/input.html", "title": "Input fixture", "active": True}]
    assert info["dialogs"] == [] and info["downloads"] == []
    assert obs["screenshot"].shape == (768, 1024, 3) and obs["screenshot"].dtype == np.uint8
    assert info["timings"]["observe"] > 0


def test_elements_report_a_known_button_bbox(env: gymnasium.Env, site: str) -> None:
    env.reset(seed=0)
    _, info = goto(env, f"{site}/elements.html")
    by_id = {e["id"]: e for e in info["elements"] if e["id"]}
    button = by_id["known"]
    assert button["tag"] == "button" and button["text"] == "Known button" and button["interactive"]
    assert button["bbox"] == [100, 200, 150, 50]
    assert by_id["field"]["value"] == "prefilled"
    assert by_id["para"]["text"] == "Some paragraph text" and not by_id["para"]["interactive"]
    assert "hidden" not in by_id and "offscreen" not in by_id


def test_link_click_observes_the_new_page(env: gymnasium.Env, site: str) -> None:
    env.reset(seed=0)
    goto(env, f"{site}/tabs.html")
    obs, info = step(env, ClickAction(point=(80, 130)))
    assert info["url"] == f"{site}/page2.html" and info["title"] == "Page two"
    assert np.abs(obs["screenshot"][600, 500].astype(int) - (0, 128, 0)).max() < 8


def test_navigation_scheduled_by_the_click_is_waited_for(env: gymnasium.Env, site: str) -> None:
    env.reset(seed=0)
    goto(env, f"{site}/tabs.html")
    _, info = step(env, ClickAction(point=(80, 280)))  # setTimeout(0) then location.href = ...
    assert info["title"] == "Page two"


def test_fragment_link_does_not_wait(env: gymnasium.Env, site: str) -> None:
    env.reset(seed=0)
    goto(env, f"{site}/tabs.html")
    _, info = step(env, ClickAction(point=(80, 180)))
    assert info["url"] == f"{site}/tabs.html#section"
    assert info["timings"]["observe"] < 2


@pytest.mark.parametrize("point", [(80, 30), (80, 80)], ids=["window.open", "target=_blank"])
def test_popup_becomes_the_active_tab(env: gymnasium.Env, site: str, point: tuple[int, int]) -> None:
    env.reset(seed=0)
    goto(env, f"{site}/tabs.html")
    obs, info = step(env, ClickAction(point=point))
    tabs = [(t["url"], t["active"]) for t in info["tabs"]]
    assert tabs == [(f"{site}/tabs.html", False), (f"{site}/page2.html", True)]
    assert info["title"] == "Page two" and info["tabs"][0]["title"] == "Tabs fixture"
    assert np.abs(obs["screenshot"][600, 500].astype(int) - (0, 128, 0)).max() < 8
    # The next episode starts with one tab again.
    _, info = env.reset(seed=0)
    assert [t["url"] for t in info["tabs"]] == ["about:blank"]


def test_dialogs_are_handled_and_reported(env: gymnasium.Env, site: str) -> None:
    env.reset(seed=0, options={"task": STATE_TASK})
    goto(env, f"{site}/dialogs.html")
    _, info = step(env, ClickAction(point=(70, 30)))
    assert [(d["type"], d["message"], d["handled"]) for d in info["dialogs"]] == [("alert", "hello alert", "accepted")]
    assert page_state(env)["globals"].get("afterAlert") is True
    _, info = step(env, ClickAction(point=(70, 80)))
    assert [(d["type"], d["message"], d["handled"]) for d in info["dialogs"]] == [("confirm", "sure?", "dismissed")]
    assert page_state(env)["globals"].get("confirmed") is False
    _, info = step(env, ClickAction(point=(70, 130)))
    assert [(d["type"], d["default_value"]) for d in info["dialogs"]] == [("prompt", "bob")]
    assert page_state(env)["globals"].get("prompted") is None
    _, info = step(env, MoveAction(point=(500, 500)))
    assert info["dialogs"] == []


@pytest.mark.local_only("reads the in-process controller's dialog list")
def test_the_controller_keeps_the_episodes_dialogs(site: str) -> None:
    env = gymnasium.make("hud/Browser-v0", screen_size=(1024, 768))
    try:
        env.reset(seed=0)
        goto(env, f"{site}/dialogs.html")
        for point in ((70, 30), (70, 80), (70, 130), (500, 500)):
            step(env, ClickAction(point=point))
        assert [d["type"] for d in env.unwrapped.controller.state.dialogs.records] == ["alert", "confirm", "prompt"]
    finally:
        env.close()


@pytest.mark.local_only("waits for the in-process controller's downloads and reads its download folder")
def test_download_is_saved_in_the_env_folder(site: str) -> None:
    env = gymnasium.make("hud/Browser-v0", screen_size=(1024, 768), max_steps=10_000)
    try:
        env.reset(seed=0)
        goto(env, f"{site}/tabs.html")
        _, info = step(env, ClickAction(point=(80, 230)))
        assert info["url"] == f"{site}/tabs.html"
        # The download starts after the click's step may have returned: wait until it has begun and is saved.
        deadline = time.monotonic() + 10
        while not (paths := on_loop(env, lambda c: c.downloads.wait())) and time.monotonic() < deadline:
            step(env, WaitAction(time=50))
        assert [Path(p).name for p in paths] == ["hello.txt"]
        assert Path(paths[0]).read_text() == "hello download\n"
        folder = env.unwrapped.controller.state.download_dir
        assert Path(paths[0]).parent == folder
        env.reset(seed=0)
        assert env.unwrapped.controller.state.downloads == [] and list(folder.iterdir()) == []
    finally:
        env.close()


def test_observation_size_scales_clicks_and_element_boxes(site: str, controller: str) -> None:
    env = gymnasium.make(
        "hud/Browser-v0", screen_size=(1024, 768), observation_size=(512, 384), elements=True, controller=controller
    )
    try:
        env.reset(seed=0, options={"task": STATE_TASK})
        obs, info = goto(env, f"{site}/elements.html")
        assert obs["screenshot"].shape == (384, 512, 3)
        button = next(e for e in info["elements"] if e["id"] == "known")
        assert button["bbox"] == [50, 100, 75, 25]
        x, y, w, h = button["bbox"]
        _, _, _, _, info = env.step(ClickAction(point=(round(x + w / 2), round(y + h / 2))))
        assert info["status"] == "ok"
        assert page_state(env)["clicks"] == ["known"]
    finally:
        env.close()


def test_a_cropped_observation_is_framed_as_just_that_region(env: gymnasium.Env, site: str, controller: str) -> None:
    """With ``observation_crop`` the controller's frames hold only the region (``Frame.region``,
    all a remote env is sent): the pixels match the same region of a full-screen observation,
    and clicks land in crop pixels."""
    env.reset(seed=0)
    full, _ = goto(env, f"{site}/input.html")
    crop = (100, 8, 300, 200)
    cropped_env = gymnasium.make(
        "hud/Browser-v0", screen_size=(1024, 768), observation_crop=crop, max_steps=10_000, controller=controller
    )
    try:
        cropped_env.reset(seed=0)
        obs, _ = goto(cropped_env, f"{site}/input.html")
        assert cropped_env.unwrapped.controller.capture_region == crop
        assert obs["screenshot"].shape == (200, 300, 3)
        expected = full["screenshot"][8:208, 100:400].astype(int)
        # Both are JPEG frames of the same pixels; only the compression blocks differ.
        assert np.abs(obs["screenshot"].astype(int) - expected).mean() < 3
        toggle = (TOGGLE[0] - crop[0], TOGGLE[1] - crop[1])
        assert colour(obs, toggle) == "blue"
        obs, _ = step(cropped_env, ClickAction(point=toggle))
        assert colour(obs, toggle) == "red"
    finally:
        cropped_env.close()
