"""The web-app families in a real Chromium: every family's oracle solves a seed through clicks and
typing, doing nothing scores 0, and two envs' episodes of the same task do not share state."""

from __future__ import annotations

from collections.abc import Iterator

import gymnasium
import pytest

from hud_gym import ResponseAction
from hud_gym.agents.family_check import run_agent
from hud_gym.core.family import generate_task, make_oracle
from hud_gym.suites.webapps.families import ENV_OPTIONS, FAMILIES

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1800)]


@pytest.fixture(scope="module")
def env() -> Iterator[gymnasium.Env]:
    env = gymnasium.make("hud/Browser-v0", **ENV_OPTIONS, step_timeout=90)
    yield env
    env.close()


@pytest.mark.parametrize("name", [f.name for f in FAMILIES])
def test_the_oracle_solves_the_family(env: gymnasium.Env, name: str) -> None:
    task = generate_task(name, 1, 1)
    reward, steps, bad = run_agent(env, task, make_oracle(task).act, max_steps=500)
    assert (reward, bad) == (1.0, []), (name, steps)


def test_two_envs_do_not_share_an_episode_and_a_reset_restores_it(env: gymnasium.Env) -> None:
    task = generate_task("admin-settings", 2, 1)
    other = gymnasium.make("hud/Browser-v0", **ENV_OPTIONS, step_timeout=90)
    try:
        other.reset(options={"task": task})
        assert run_agent(env, task, make_oracle(task).act, max_steps=100)[0] == 1.0
        # The other env's episode of the same task is untouched: answering now is its failure.
        _, reward, terminated, _, info = other.step(ResponseAction(text="done"))
        assert (reward, terminated, info["status"]) == (0.0, True, "ok")
        # The solved env's next episode starts from the seed's state again.
        env.reset(options={"task": task})
        _, reward, _, _, info = env.step(ResponseAction(text="done"))
        assert (reward, info["status"]) == (0.0, "ok")
    finally:
        other.close()
