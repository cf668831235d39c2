"""The built-in agents against real MiniWoB++ pages."""

from __future__ import annotations

from collections.abc import Iterator

import gymnasium
import pytest

from hud_gym.actions import CLAAction
from hud_gym.agents import Agent, MiniWoBScriptedAgent, RandomAgent
from hud_gym.spaces import encode
from hud_gym.suites.miniwob import MINIWOB_TASK_AREA

pytest.importorskip("miniwob")
pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def env() -> Iterator[gymnasium.Env]:
    env = gymnasium.make("hud/Browser-v0", elements=True, observation_crop=MINIWOB_TASK_AREA, screen_size=(500, 320))
    yield env
    env.close()


@pytest.mark.parametrize("task", ["click-test-2", "click-button", "enter-text", "login-user", "click-checkboxes"])
def test_scripted_agent_solves_from_elements(env: gymnasium.Env, task: str) -> None:
    agent = MiniWoBScriptedAgent()
    assert isinstance(agent, Agent)
    for seed in (10, 11):
        observation, info = env.reset(seed=seed, options={"task": f"miniwob/{task}"})
        # Elements are in observation pixels and inside the 160x210 crop.
        assert info["elements"] and all(e["bbox"][0] < 160 and e["bbox"][1] < 210 for e in info["elements"])
        _, reward, terminated, _, info = env.step(agent.act(observation, info))
        assert terminated and reward == 1.0, (task, seed, info["grade"])


def test_scripted_agent_fails_visibly_on_unknown_instructions(env: gymnasium.Env) -> None:
    observation, info = env.reset(seed=0, options={"task": "miniwob/drag-box"})
    _, reward, terminated, _, _ = env.step(MiniWoBScriptedAgent().act(observation, info))
    assert terminated and reward == -1.0


def test_random_agent_emits_valid_actions_in_the_space(env: gymnasium.Env) -> None:
    agent = RandomAgent(env.action_space, env.unwrapped.action_space_config, seed=3)
    actions = [agent.act({}, {})[0] for _ in range(50)]
    assert all(isinstance(a, CLAAction) for a in actions)
    assert all(env.action_space.contains(encode(a, env.unwrapped.action_space_config)) for a in actions)
    assert len({a.type for a in actions}) > 5
