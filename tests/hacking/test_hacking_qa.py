"""``qa-basic`` under the reward-hacking attacks (:mod:`hacking_qa`): every task, each attack
graded 0 (a QA episode is cheap)."""

from __future__ import annotations

from collections.abc import Iterator

import gymnasium
import pytest
from hacking_harness import check_family
from hacking_qa import QA_ATTACKS

import hud_gym

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def env() -> Iterator[gymnasium.Env]:
    env = gymnasium.make("hud/QA-v0")
    yield env
    env.close()


def test_no_attack_scores_on_qa_basic(env: gymnasium.Env) -> None:
    check_family(env, list(hud_gym.load_taskset("qa-basic")), QA_ATTACKS)
