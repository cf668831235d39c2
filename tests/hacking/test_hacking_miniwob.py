"""MiniWoB++ under the reward-hacking attacks (:mod:`hacking_browser`): a sample of the bundled
task pages, each attack graded MiniWoB's failure (raw -1) or unfinished (0), never ``eval_error``,
never a success from another page or another instance."""

from __future__ import annotations

from collections.abc import Iterator

import gymnasium
import pytest
from hacking_browser import BROWSER_ATTACKS
from hacking_harness import check_family

import hud_gym
from hud_gym.suites.miniwob import MINIWOB_TASK_AREA

pytest.importorskip("miniwob")
pytestmark = pytest.mark.timeout(600)

SAMPLE = ("click-test", "click-button", "enter-text", "login-user")
"""A representative sample: one button, one of several buttons, a text field, a form."""


@pytest.fixture(scope="module")
def env() -> Iterator[gymnasium.Env]:
    env = gymnasium.make(
        "hud/Browser-v0",
        observation_crop=MINIWOB_TASK_AREA,
        screen_size=(500, 320),
        elements=True,
        max_steps=80,
        step_timeout=60,
    )
    yield env
    env.close()


def test_no_attack_scores_on_miniwob(env: gymnasium.Env) -> None:
    tasks = [task for task in hud_gym.load_taskset("miniwob") if task.id in SAMPLE]
    assert len(tasks) == len(SAMPLE)
    check_family(env, tasks, BROWSER_ATTACKS, failure_values=(-1.0, 0.0))
