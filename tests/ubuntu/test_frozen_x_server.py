"""A desktop whose X server is grabbed (``XGrabServer``, as an agent's script in the xterm can) or
stopped (``SIGSTOP``) times out its own step and stops no other env of the process.

Two desktops in one vector env (one loop thread): the frozen one's step is ``timeout`` with no
reward, within ``step_timeout`` plus the cancellation grace and a generous slack; the other one's
step in the same call is ``ok`` with its observation. The frozen server is released (or resumed)
by a watchdog only long after: on the old code (X requests on the loop thread) the step blocked
until then and came back ``ok``.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from desktop_helpers import open_display

from hud_gym import PressAction, Task
from hud_gym.core.deadline import GRACE
from hud_gym.envs.ubuntu import UbuntuEnv
from hud_gym.wrappers.vector import HudVectorEnv

pytestmark = pytest.mark.timeout(240)

STEP_TIMEOUT = 3.0
RELEASE_AFTER = 60.0
"""The watchdog lets the frozen server go after this long (a bound for the old code's step)."""
SLACK = 25.0
"""Generous: a loaded machine; still far below :data:`RELEASE_AFTER`."""

TASK = Task(id="frozen", prompt="", gym="hud-ubuntu", evaluate=("file_exists", "."))


@pytest.fixture()
def two_desktops() -> Iterator[HudVectorEnv]:
    envs = HudVectorEnv(
        [lambda: UbuntuEnv(task=TASK, step_timeout=STEP_TIMEOUT, in_container=False, screen_size=(640, 480))] * 2
    )
    try:
        envs.reset(seed=0)
        yield envs
    finally:
        envs.close()


def _watchdog(release: Callable[[], None]) -> threading.Event:
    """Run ``release`` after :data:`RELEASE_AFTER` s, or at once when the returned event is set."""
    done = threading.Event()

    def run() -> None:
        done.wait(RELEASE_AFTER)
        release()

    threading.Thread(target=run, daemon=True).start()
    return done


def _assert_frozen_one_times_out(envs: HudVectorEnv) -> None:
    started = time.monotonic()
    observations, rewards, _terminated, truncated, infos = envs.step([PressAction(keys=["shift"])] * 2)
    elapsed = time.monotonic() - started
    assert infos["status"].tolist() == ["timeout", "ok"], infos.get("error")
    assert np.isnan(rewards[0]) and truncated[0]
    assert elapsed < STEP_TIMEOUT * 2 + GRACE + SLACK, elapsed  # (steps and observes: two deadlines)
    assert observations["screenshot"][1].shape == (480, 640, 3)  # the other desktop observed its screen


def test_a_grabbed_x_server_times_out_its_env_and_not_the_other(two_desktops: HudVectorEnv) -> None:
    frozen = two_desktops.envs[0].unwrapped.controller
    grabber = open_display(frozen.state.display)  # a client with the cookie, as the agent's xterm is
    grabber.grab_server()
    grabber.sync()

    def release() -> None:
        grabber.ungrab_server()
        grabber.sync()

    done = _watchdog(release)
    try:
        _assert_frozen_one_times_out(two_desktops)
    finally:
        done.set()
    time.sleep(0.5)
    grabber.close()
    two_desktops.reset(seed=1)  # the timed-out env restarts its controller and goes on
    _, _, _, _, infos = two_desktops.step([PressAction(keys=["shift"])] * 2)
    assert infos["status"].tolist() == ["ok", "ok"]


def test_a_stopped_x_server_times_out_its_env_and_not_the_other(two_desktops: HudVectorEnv) -> None:
    frozen = two_desktops.envs[0].unwrapped.controller
    xvfb = frozen.state.session._xvfb_pid  # the Xvfb process itself (inside its sandbox's launcher)
    assert xvfb is not None
    os.kill(xvfb, signal.SIGSTOP)
    done = _watchdog(lambda: os.kill(xvfb, signal.SIGCONT))
    try:
        _assert_frozen_one_times_out(two_desktops)
    finally:
        done.set()
    two_desktops.reset(seed=1)
    _, _, _, _, infos = two_desktops.step([PressAction(keys=["shift"])] * 2)
    assert infos["status"].tolist() == ["ok", "ok"]
