"""A headed browser whose X server is grabbed (any client with its cookie) times out its own step
(status ``timeout``, no reward) and leaves the loop free: another env of the process steps and is
graded meanwhile. On the old code the tile's MIT-SHM grab ran on the loop thread and blocked every
env until the grab ended (then the step came back ``ok``)."""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

import gymnasium
import pytest
from Xlib import display as xdisplay

from hud_gym import ClickAction, Point, ResponseAction, Task
from hud_gym.controllers.x11.xauth import process_authority
from hud_gym.core.deadline import GRACE
from hud_gym.envs.qa import QAEnv
from hud_gym.rewards import graded_reward

pytestmark = pytest.mark.timeout(240)

STEP_TIMEOUT = 3.0
RELEASE_AFTER = 60.0
SLACK = 25.0


def test_a_grabbed_headed_display_times_out_its_step_and_stops_no_other_env() -> None:
    env = gymnasium.make("hud/Browser-v0", screen_size=(320, 240), capture="headed", step_timeout=STEP_TIMEOUT)
    qa = QAEnv(task=Task(prompt="Capital of France?", evaluate=[("response_includes", "Paris")]), screen_size=(32, 32))
    grabber: Any = None
    releaser: threading.Thread | None = None
    released = threading.Event()
    try:
        env.reset(seed=0)
        qa.reset(seed=0)
        display = env.unwrapped.controller.state.lease.display
        with process_authority().connecting():
            grabber = xdisplay.Display(display)
        grabber.grab_server()
        grabber.sync()

        def release() -> None:  # the one thread that touches the grabber after the grab (Xlib is not threaded)
            released.wait(RELEASE_AFTER)
            released.set()
            with contextlib.suppress(Exception):  # (the display may be gone)
                grabber.ungrab_server()
                grabber.sync()
            with contextlib.suppress(Exception):
                grabber.close()

        releaser = threading.Thread(target=release, daemon=True)
        releaser.start()
        result: dict[str, Any] = {}
        stepper = threading.Thread(target=lambda: result.update(out=env.step(ClickAction(point=Point(x=5, y=5)))))
        stepper.start()
        time.sleep(1.0)  # (not a bound: lets the step reach the display before the QA env steps)
        graded = []
        for seed in range(3):  # the loop is free: the QA env steps while the headed step is stuck
            qa.reset(seed=seed)
            _, reward, _, _, info = qa.step(ResponseAction(text="Paris"))
            graded.append((reward, info["status"], released.is_set()))
        assert graded == [(1.0, "ok", False)] * 3
        stepper.join(STEP_TIMEOUT * 2 + GRACE + SLACK)
        assert not stepper.is_alive() and not released.is_set()
        _, reward, _, truncated, info = result["out"]
        assert (graded_reward(reward), info["status"], truncated) == (None, "timeout", True)
    finally:
        released.set()
        if releaser is not None:
            releaser.join(SLACK)
        elif grabber is not None:
            with contextlib.suppress(Exception):  # (the display may be gone)
                grabber.close()
        qa.close()
        env.close()
