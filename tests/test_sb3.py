"""stable-baselines3 compatibility: flat actions, SB3 observations, SB3's own env checker, PPO."""

from __future__ import annotations

import numpy as np
import pytest

from hud_gym import ClickAction, PressAction, Task, TypeAction
from hud_gym.envs.qa import QAEnv
from hud_gym.wrappers.integrations.sb3_actions import ActionMapper, SB3ActionWrapper
from hud_gym.wrappers.integrations.sb3_observations import ObservationMapper, SB3ObservationWrapper

sb3 = pytest.importorskip("stable_baselines3")
pytestmark = pytest.mark.timeout(180)

TASK = Task(id="t", prompt="Type x", target="x")


def wrapped(mode: str = "multidiscrete", text: str = "drop") -> SB3ObservationWrapper:
    env = QAEnv(task=TASK, screen_size=(320, 240), max_steps=8)
    return SB3ObservationWrapper(
        SB3ActionWrapper(env, mode=mode, grid=(4, 3), texts=("x", "y")), size=(64, 48), text=text
    )


@pytest.mark.parametrize("mode", ["multidiscrete", "discrete", "box"])
@pytest.mark.parametrize("text", ["drop", "codes", "words"])
def test_sb3_check_env_passes(mode: str, text: str) -> None:
    from stable_baselines3.common.env_checker import check_env

    env = wrapped(mode, text)
    try:
        check_env(env, warn=True)
        observation, _ = env.reset(seed=0)
        assert env.observation_space.contains(observation)
    finally:
        env.close()


def test_action_mapper_vocabulary() -> None:
    mapper = ActionMapper((320, 240), "multidiscrete", grid=(4, 3), keys=("Enter", "Tab"), texts=("a", "b"))
    assert mapper.space.nvec.tolist() == [3, 4, 3, 2, 2]
    assert mapper.to_cla([0, 3, 2, 0, 0]) == ClickAction(point=(280, 200))
    assert mapper.to_cla([1, 0, 0, 1, 0]) == PressAction(keys=["tab"])
    assert mapper.to_cla([2, 0, 0, 0, 1]) == TypeAction(text="b")
    discrete = ActionMapper((320, 240), "discrete", grid=(4, 3), keys=("enter",), texts=("a", "b"))
    assert discrete.space.n == 12 + 1 + 2
    assert discrete.to_cla(5) == ClickAction(point=(120, 120))
    assert discrete.to_cla(12) == PressAction(keys=["enter"])
    assert discrete.to_cla(14) == TypeAction(text="b")
    box = ActionMapper((320, 240), "box", grid=(4, 3), keys=("enter",), texts=("a",))
    assert box.to_cla(np.array([-1, 1, -1, 0], np.float32)) == ClickAction(point=(280, 40))
    assert box.to_cla(np.array([1, 0, 0, 1], np.float32)) == TypeAction(text="a")


def test_observation_mapper_codes() -> None:
    mapper = ObservationMapper((8, 6), text="codes", text_length=5)
    out = mapper.map({"screenshot": np.zeros((12, 16, 3), np.uint8), "text": "héllo world"})
    assert out["image"].shape == (6, 8, 3) and out["text"].tolist() == [104, 233, 108, 108, 111]


def test_observation_mapper_words_is_the_instruction_as_a_bag_of_words() -> None:
    mapper = ObservationMapper((8, 6), text="words", text_length=512)
    assert mapper.space["text"].shape == (512,) and mapper.space["text"].dtype == np.float32
    one = mapper.words('Click on the "Ok" button.\nURL: http://127.0.0.1:4242/x.html\nTitle: Click Button Task')
    assert mapper.space["text"].contains(one)
    # The URL line (its port changes from run to run) is left out; case and punctuation are ignored.
    same = mapper.words("click on THE ok button\nURL: http://127.0.0.1:5353/y.html\nTitle: Click Button Task")
    np.testing.assert_array_equal(one, same)
    other = mapper.words('Click on the "Cancel" button.\nURL: http://127.0.0.1:4242/x.html\nTitle: Click Button Task')
    assert (one != other).sum() == 2  # "ok" out, "cancel" in
    assert one.sum() == len({"click", "on", "the", "ok", "button", "title", "task"})
    assert mapper.words("").sum() == 0
    with pytest.raises(ValueError, match="'drop', 'codes' or 'words'"):
        ObservationMapper(text="bag")  # type: ignore[arg-type]


def test_short_ppo_run_trains_and_predicts_valid_actions() -> None:
    from stable_baselines3 import PPO

    env = wrapped("discrete")
    try:
        model = PPO("CnnPolicy", env, n_steps=64, batch_size=32, n_epochs=4, seed=0, verbose=0)
        model.learn(total_timesteps=128)
        observation, _ = env.reset(seed=0)
        action, _ = model.predict(observation, deterministic=True)
        assert env.action_space.contains(np.asarray(action))
    finally:
        env.close()


def test_multi_input_ppo_on_pixels_and_instruction_words() -> None:
    """SB3's MultiInputPolicy takes the image and the instruction's words from the real VecEnv."""
    from stable_baselines3 import PPO

    from hud_gym.wrappers.integrations.sb3_vec_env import to_sb3_vec_env

    venv = to_sb3_vec_env(
        "hud/QA-v0", 2, taskset="qa-basic", max_steps=2, observation_size=(48, 48), text="words", text_length=64,
        action_mode="discrete", grid=(2, 2), keys=("enter",), texts=("Paris", "4"),
    )  # fmt: skip
    try:
        venv.seed(0)
        observations = venv.reset()
        assert observations["image"].shape == (2, 48, 48, 3) and observations["text"].shape == (2, 64)
        prompts = [info["prompt"] for info in venv.reset_infos]
        for row, prompt in zip(observations["text"], prompts, strict=True):
            words = venv.observation_mapper.words(prompt)
            assert words.sum() > 0 and np.all(row[words > 0] == 1.0)
        model = PPO("MultiInputPolicy", venv, n_steps=16, batch_size=32, n_epochs=1, seed=0, verbose=0)
        model.learn(total_timesteps=32)
        action, _ = model.predict(venv.reset(), deterministic=True)
        assert all(venv.action_space.contains(int(a)) for a in action)
    finally:
        venv.close()
