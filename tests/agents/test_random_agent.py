"""The random baseline: seeded, inside the observation, only the actions a task can use."""

from __future__ import annotations

import numpy as np
import pytest

from hud_gym.actions import ClickAction, ScrollAction, TypeAction
from hud_gym.agents import RandomAgent

pytestmark = pytest.mark.timeout(30)

OBSERVATION = {"screenshot": np.zeros((210, 160, 3), np.uint8)}


def episode(agent: RandomAgent, seed: int, steps: int = 40, task: str = "t") -> list[dict[str, object]]:
    actions = []
    for step in range(steps):
        info = {
            "step": step,
            "task_id": task,
            **({"seed": seed, "prompt": "Click the Submit button"} if not step else {}),
        }
        actions.extend(a.model_dump() for a in agent.act(OBSERVATION, info))
    return actions


def test_same_seeds_same_actions_other_seeds_other_actions() -> None:
    first = episode(RandomAgent(seed=5), seed=1)
    assert first == episode(RandomAgent(seed=5), seed=1)
    assert first != episode(RandomAgent(seed=6), seed=1)
    assert first != episode(RandomAgent(seed=5), seed=2)


def test_interleaved_episodes_get_the_actions_they_get_alone() -> None:
    """Concurrent runs share an act-style agent: each episode's actions depend on its own seeds."""
    agent = RandomAgent(seed=5)
    alone = [a.model_dump() for a in agent.act(OBSERVATION, {"step": 0, "task_id": "a", "seed": 1})]
    agent.act(OBSERVATION, {"step": 0, "task_id": "b", "seed": 9})
    again = [a.model_dump() for a in agent.act(OBSERVATION, {"step": 0, "task_id": "a", "seed": 1})]
    assert alone == again


def test_actions_stay_inside_the_observation_and_use_task_actions() -> None:
    agent = RandomAgent(seed=0)
    actions = [
        a
        for seed in range(5)
        for a in (
            agent.act(OBSERVATION, {"step": s, "task_id": "t", "seed": seed, "prompt": "Type hello"}) for s in range(60)
        )
    ]
    flat = [a for group in actions for a in group]
    assert {a.type for a in flat} == {"click", "type", "press", "scroll"}
    points = [a.point for a in flat if isinstance(a, (ClickAction, ScrollAction))]
    assert all(0 <= p.x < 160 and 0 <= p.y < 210 for p in points)
    assert max(p.x for p in points) > 120 and max(p.y for p in points) > 160  # the whole observation, not a corner
    texts = {a.text for a in flat if isinstance(a, TypeAction)}
    assert texts and all(0 < len(t) <= 8 and t.isascii() for t in texts)
    assert texts & {"Type", "hello"}  # words of the prompt


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="weights"):
        RandomAgent(weights={"custom": 1.0})
    with pytest.raises(ValueError, match="max_text_length"):
        RandomAgent(max_text_length=0)
