"""The flat form of the vector entry point (what RLlib's ``vector_entry_point`` mode gets): its
spaces, its actions, and a failed step's absent reward given as ``failed_reward`` never silently."""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym import Task
from hud_gym.wrappers.vector import HudVectorEnv
from hud_gym.wrappers.vector.flat import FlatVectorEnv

sys.path.insert(0, str(Path(__file__).parent))
import failing_functions  # noqa: F401  (registers failing_raises)

pytestmark = pytest.mark.timeout(90)


def test_flat_spaces_and_a_typed_answer() -> None:
    envs = gymnasium.make_vec(
        "hud/QA-v0", 2, task=Task(prompt="2+2?", target="4"), observation="image", observation_size=(42, 42),
        action_mode="discrete", grid=(2, 2), keys=(), texts=("4", "5"), max_steps=1,
    )  # fmt: skip
    try:
        assert isinstance(envs, FlatVectorEnv) and isinstance(envs.env, HudVectorEnv)
        assert envs.single_observation_space == gymnasium.spaces.Box(0, 255, (42, 42, 3), np.uint8)
        assert envs.single_action_space == gymnasium.spaces.Discrete(6)
        observations, _ = envs.reset(seed=0)
        assert observations.shape == (2, 42, 42, 3) and observations.dtype == np.uint8
        observations, rewards, terminated, truncated, infos = envs.step(np.array([4, 5]))  # type "4", type "5"
        assert observations.shape == (2, 42, 42, 3) and list(truncated | terminated) == [True, True]
        assert "reward_absent" not in infos and envs.absent_rewards == 0
        with pytest.raises(ValueError, match="env 1: action"):
            envs.step(np.array([0, 9]))
    finally:
        envs.close()


def test_normalized_codes_observations() -> None:
    envs = gymnasium.make_vec(
        "hud/QA-v0", 1, taskset="qa-basic", observation="codes", normalize=True, observation_size=(42, 42),
        text_length=16, keys=(), texts=("x",),
    )  # fmt: skip
    try:
        space = envs.single_observation_space
        assert space["image"] == gymnasium.spaces.Box(0.0, 1.0, (42, 42, 3), np.float32)
        assert space["text"].shape == (16,)
        observations, _ = envs.reset(seed=0)
        assert observations["image"].dtype == np.float32 and observations["image"].min() >= 0.0
        assert observations["image"].max() <= 1.0 and observations["text"].shape == (1, 16)
    finally:
        envs.close()


def test_a_failed_step_is_failed_reward_and_marked(caplog: pytest.LogCaptureFixture) -> None:
    task = Task(id="broken", prompt="2+2?", gym="qa", evaluate="failing_raises")
    envs = gymnasium.make_vec(
        "hud/QA-v0", 2, task=task, observation="image", observation_size=(42, 42), action_mode="discrete",
        grid=(1, 1), keys=(), texts=("4",), max_steps=1, failed_reward=-1.0,
    )  # fmt: skip
    try:
        envs.reset(seed=0)
        _, rewards, _, _, infos = envs.step(np.array([1, 1]))
        assert rewards.tolist() == [-1.0, -1.0]
        assert infos["reward_absent"].tolist() == [True, True]
        assert list(infos["status"]) == ["eval_error", "eval_error"]
        assert envs.absent_rewards == 2
        assert "failed_reward=-1" in caplog.text and "eval_error" in caplog.text
    finally:
        envs.close()
    with pytest.raises(ValueError, match="failed_reward must be a finite number"):
        gymnasium.make_vec("hud/QA-v0", 1, taskset="qa-basic", failed_reward=float("nan"))


def test_same_step_autoreset_maps_the_final_observation() -> None:
    from gymnasium.vector import AutoresetMode

    envs = gymnasium.make_vec(
        "hud/QA-v0", 2, taskset="qa-basic", observation="image", observation_size=(42, 42), action_mode="discrete",
        grid=(1, 1), keys=(), texts=("x",), max_steps=1, autoreset_mode=AutoresetMode.SAME_STEP,
    )  # fmt: skip
    try:
        envs.reset(seed=0)
        _, _, terminated, truncated, infos = envs.step(np.array([0, 1]))
        assert list(terminated | truncated) == [True, True]
        assert [o.shape for o in infos["final_obs"]] == [(42, 42, 3), (42, 42, 3)]
    finally:
        envs.close()
