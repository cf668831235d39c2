"""``desktop-basic`` under the reward-hacking attacks (:mod:`hacking_desktop`): a sample of its
tasks (a file written in the editor, a file deleted in the terminal, a window to open, an answer
read off the screen), each attack graded 0, never ``eval_error`` or ``env_error``."""

from __future__ import annotations

from collections.abc import Iterator

import gymnasium
import pytest
from hacking_desktop import DESKTOP_ATTACKS
from hacking_harness import check_family

import hud_gym
from hud_gym.controllers.ubuntu.display import DesktopNotAvailableError, require_programs

pytestmark = pytest.mark.timeout(600)

SAMPLE = ("editor-write-sentence", "terminal-delete-file", "open-calculator", "editor-read-answer")


@pytest.fixture(scope="module")
def env() -> Iterator[gymnasium.Env]:
    try:
        require_programs("openbox")
    except DesktopNotAvailableError as exc:
        pytest.skip(str(exc))
    env = gymnasium.make("hud/Ubuntu-v0", in_container=False, max_steps=40, step_timeout=60)
    yield env
    env.close()


def test_no_attack_scores_on_desktop_basic(env: gymnasium.Env) -> None:
    tasks = [task for task in hud_gym.load_taskset("desktop-basic") if task.id in SAMPLE]
    assert len(tasks) == len(SAMPLE)
    check_family(env, tasks, DESKTOP_ATTACKS)
