"""``hud/Ubuntu-v0`` as a Gymnasium env: fresh observations, the focused window in the text,
observation scaling, Gymnasium's env checker, and ``hud_gym.make`` routing; with the controller in
this process and in a controller server (``local_only``: a test that reads the controller's settling)."""

from __future__ import annotations

import os
import re
import subprocess
from typing import Any

import gymnasium
import numpy as np
import pytest
from desktop_helpers import HOME_TASK
from gymnasium.utils.env_checker import check_env

import hud_gym
from hud_gym import Task
from hud_gym.actions import (
    ClickAction,
    MoveAction,
    PositionFetch,
    ScreenshotFetch,
    WaitAction,
)
from hud_gym.envs.ubuntu import UbuntuEnv

pytestmark = pytest.mark.timeout(90)

RED, BLUE = (255, 0, 0), (0, 0, 255)


@pytest.fixture(scope="module")
def desktop(controlled_desktop: Any) -> Any:
    """The module's desktop, with the controller where the ``controller`` parameter says."""
    return controlled_desktop


def test_observation_is_fresh_after_every_click(desktop: Any, eventlog: Any) -> None:
    x, y = eventlog.point("toggle", 75, 30)
    obs, _, _, _, info = desktop.step(WaitAction(time=0))
    assert tuple(obs["screenshot"][y, x]) == RED
    for i in range(10):
        obs, _, _, _, info = desktop.step(ClickAction(point=(x, y)))
        assert info["status"] == "ok"
        # The returned pixels already show the colour the click set: no stale frame.
        assert tuple(obs["screenshot"][y, x]) == (BLUE if i % 2 == 0 else RED), (i, info["timings"])
    assert len(eventlog.records("toggle")) == 10
    assert np.array_equal(desktop.render(), obs["screenshot"])


def test_observation_text_and_info(desktop: Any, eventlog: Any) -> None:
    obs, _, _, _, info = desktop.step(ScreenshotFetch())
    assert obs["screenshot"].shape == (720, 1280, 3) and obs["screenshot"].dtype == np.uint8
    assert obs["text"] == "Focused window: hud-gym event log"
    assert info["focused_window"] == "hud-gym event log" and info["windows"] == ["hud-gym event log"]
    assert desktop.observation_space.contains(obs)


@pytest.mark.local_only("reads the in-process controller's settling record")
def test_observation_settles_fast_without_repaint(desktop: Any, eventlog: Any) -> None:
    controller = desktop.unwrapped.controller
    desktop.step(MoveAction(point=(1000, 600)))  # over the empty root window: nothing repaints
    assert controller.state.last_settle["damage"] == 0
    desktop.step(PositionFetch())  # no input: no settling at all
    assert controller.state.last_settle["settle"] == 0.0


def test_observation_size_scales_actions_and_positions(make_controller_env: Any, open_eventlog: Any) -> None:
    env = make_controller_env("hud/Ubuntu-v0", observation_size=(640, 360))
    env.reset(options={"task": HOME_TASK})
    log = open_eventlog(env)
    x, y = log.point("pad", 100, 60)
    mark = log.mark()
    obs, _, _, _, info = env.step(ClickAction(point=(x // 2, y // 2)))
    assert obs["screenshot"].shape == (360, 640, 3)
    pressed = log.wait(lambda rs: [r for r in rs[mark:] if r["type"] == "button"])
    assert (pressed[0]["x_root"], pressed[0]["y_root"]) == (x // 2 * 2, y // 2 * 2)
    _, _, _, _, info = env.step(PositionFetch())
    assert info["position"] == (x // 2, y // 2)


def test_check_env_without_render_check(make_controller_env: Any) -> None:
    env = make_controller_env("hud/Ubuntu-v0", screen_size=(320, 240))
    check_env(env.unwrapped, skip_render_check=True)


def test_check_env_with_render_check(make_controller_env: Any) -> None:
    env = make_controller_env("hud/Ubuntu-v0", screen_size=(320, 240), render_mode="rgb_array")
    check_env(env.unwrapped)


def test_hud_gym_make_routes_desktop_tasks_lazily() -> None:
    env = hud_gym.make(Task(prompt="x", gym="hud-ubuntu"), max_episode_steps=5, allow_shell=True)
    try:
        assert isinstance(env, UbuntuEnv) and env.spec.id == "hud/Ubuntu-v0"
        assert env.controller is None and env.max_episode_steps == 5
    finally:
        env.close()
    assert gymnasium.spec("hud/Ubuntu-v0").nondeterministic


def test_info_and_env_name_the_x_display(desktop: Any, eventlog: Any) -> None:
    _, info = desktop.reset(options={"task": HOME_TASK})
    display = desktop.unwrapped.display
    assert re.fullmatch(r":\d+", display) and info["display"] == display
    _, _, _, _, info = desktop.step(ScreenshotFetch())
    assert info["display"] == display


@pytest.mark.local_only("compares with the Xvfb the in-process controller started")
def test_the_display_is_the_xvfb_the_env_started(desktop: Any, eventlog: Any) -> None:
    controller = desktop.unwrapped.controller
    xvfb = controller.state.session.xvfb
    assert desktop.unwrapped.display == f":{xvfb.number}" and xvfb.alive
    # An X client of this user, with the display's cookie, finds the env's window on that display.
    found = subprocess.run(
        ["xdotool", "search", "--name", "hud-gym event log"],
        env={**os.environ, "DISPLAY": desktop.unwrapped.display, "XAUTHORITY": str(controller.state.xauthority)},
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert found.returncode == 0 and found.stdout.split(), found.stderr
