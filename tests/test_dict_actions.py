"""Issue 28, item 13: CLA actions batched into the vector env's ``Dict`` action
(``envs.batch_actions``), stepped on the real QA gym."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym import ActionError, ClickAction, ResponseAction, Task, TypeAction
from hud_gym.spaces import decode

pytestmark = pytest.mark.timeout(120)

TASK = Task(id="sum", prompt="2+2?", target="4", gym="qa")


def test_batched_cla_actions_step_as_the_actions_themselves() -> None:
    envs = gymnasium.make_vec("hud/QA-v0", num_envs=3, task=TASK)
    try:
        envs.reset(seed=0)
        actions = [TypeAction(text="4"), {"type": "response", "text": "4"}, ResponseAction(text="5")]
        batch = envs.batch_actions(actions)
        assert envs.action_space.contains(batch)
        config = envs.get_attr("action_space_config")[0]
        rows = [decode({key: value[i] for key, value in batch.items()}, config) for i in range(3)]
        assert rows == [TypeAction(text="4"), ResponseAction(text="4"), ResponseAction(text="5")]
        _, rewards, terminations, _, infos = envs.step(batch)
        assert list(rewards) == [0.0, 1.0, 0.0] and list(terminations) == [False, True, True]
        assert set(infos["status"]) == {"ok"}
        # mixed with a sampled batch: row 0 replaced by a scripted click
        sampled = envs.action_space.sample()
        scripted = envs.batch_actions([ClickAction(point=(3, 4)), TypeAction(text="x"), TypeAction(text="y")])
        mixed = {key: np.concatenate([scripted[key][:1], sampled[key][1:]]) for key in sampled}
        assert envs.action_space.contains(mixed) and mixed["point"][0].tolist() == [3, 4]
    finally:
        envs.close()


def test_bad_batches_name_the_env() -> None:
    envs = gymnasium.make_vec("hud/QA-v0", num_envs=2, task=TASK, observation_size=(64, 32))
    try:
        with pytest.raises(ValueError, match="one CLA action per env: 2, got 1"):
            envs.batch_actions([TypeAction(text="4")])
        with pytest.raises(ActionError, match=r"env 1: point: \(100, 5\) is outside"):
            envs.batch_actions([TypeAction(text="4"), ClickAction(point=(100, 5))])
        with pytest.raises(ActionError, match="env 0: a Dict action holds one CLA action, got 2"):
            envs.batch_actions([[TypeAction(text="4"), TypeAction(text="5")], TypeAction(text="4")])
    finally:
        envs.close()
