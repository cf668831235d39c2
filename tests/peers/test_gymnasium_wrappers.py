"""Gymnasium's own wrappers and env checker on hud-gym's envs (issue 28, item 4).

Source: the Gymnasium repository (the suite of the installed 1.4.0):
``tests/wrappers/test_record_episode_statistics.py`` (``test_record_episode_statistics``),
``tests/wrappers/test_render_collection.py`` and ``tests/utils/test_env_checker.py`` (``check_env``
on the env as made, render check included). The wrappers and the checker are the real
``gymnasium`` package's; the env is the real QA gym. Assertions are Gymnasium's; the env changes
(a QA task instead of CartPole) and what is ours is said where it is.
"""

from __future__ import annotations

import math
import warnings

import failing_functions  # noqa: F401  (registers failing_raises)
import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.wrappers import RecordEpisodeStatistics, RenderCollection

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym import ResponseAction, Task, TypeAction, WaitAction

pytestmark = pytest.mark.timeout(180)

TASK = Task(id="sum", prompt="2+2?", target="4", gym="qa")
BROKEN = Task(id="broken", prompt="2+2?", gym="qa", evaluate="failing_raises")
# The env's own step limit: the action space follows it (waits of at most half of it).
STEP_TIMEOUT = 4.0


@pytest.mark.parametrize("deque_size", [2, 5])
def test_record_episode_statistics(deque_size: int) -> None:
    """test_record_episode_statistics (CartPole -> a QA task with a 3-step limit; the sampled
    actions are the env's own action space's, bounded by its step_timeout)."""
    env = gymnasium.make("hud/QA-v0", task=TASK, max_episode_steps=3, step_timeout=STEP_TIMEOUT)
    env = RecordEpisodeStatistics(env, deque_size)
    assert env.spec is not None
    for _ in range(5):
        env.reset()
        assert env.episode_returns == 0.0
        assert env.episode_lengths == 0
        for _ in range(env.spec.max_episode_steps):
            _, _, terminated, truncated, info = env.step(env.action_space.sample())
            if terminated or truncated:
                assert "episode" in info
                assert all(item in info["episode"] for item in ["r", "l", "t"])
                break
    assert len(env.return_queue) == deque_size
    assert len(env.length_queue) == deque_size
    env.close()


def test_a_failed_step_is_a_float_nan_gymnasium_can_add_up() -> None:
    """Ours: a failed step's reward is the float NaN (it was ``None``, and RecordEpisodeStatistics
    raised ``TypeError: unsupported operand type(s) for +=: 'float' and 'NoneType'``); the status
    says why, the episode's return is NaN (absent), never 0; the passive env checker of
    ``gymnasium.make`` (it checks the first step's reward type) does not warn."""
    env = RecordEpisodeStatistics(gymnasium.make("hud/QA-v0", task=BROKEN))
    env.reset(seed=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, reward, terminated, _, info = env.step(ResponseAction(text="4"))
    assert isinstance(reward, float) and math.isnan(reward)
    assert terminated and info["status"] == "eval_error" and info["error"]
    assert math.isnan(info["episode"]["r"]) and info["episode"]["l"] == 1
    assert not [w for w in caught if "reward" in str(w.message).lower()], [str(w.message) for w in caught]
    env.close()


def test_sampled_actions_fit_in_the_step_timeout() -> None:
    """Ours: the action space is bounded by the env's limits: a ``wait`` at most half of
    ``step_timeout`` (it reached 60,000 ms with a 30 s step_timeout), a click's delays together
    at most as long; the longest wait the space holds steps ``ok``."""
    env = gymnasium.make("hud/QA-v0", task=TASK, step_timeout=STEP_TIMEOUT)
    space = env.action_space
    config = env.unwrapped.action_space_config
    assert int(space["time"].high[0]) == config.max_wait_ms == 2000
    assert int(space["pattern"].high.max()) * config.max_pattern <= 2000
    assert int(gymnasium.make("hud/QA-v0", task=TASK).action_space["time"].high[0]) == 15_000  # 30 s by default
    env.reset(seed=0)
    _, reward, _, _, info = env.step(WaitAction(time=config.max_wait_ms))
    assert info["status"] == "ok" and reward == 0.0
    env.close()


def test_render_mode_defaults_to_none() -> None:
    """Gymnasium's envs render nothing unless asked (``render_mode=None``); ``"rgb_array"`` gives
    the last frame; ``"rgb_array_list"`` gets Gymnasium's ``RenderCollection`` from ``make``
    (tests/wrappers/test_render_collection.py: one frame per reset and step)."""
    env = gymnasium.make("hud/QA-v0", task=TASK)
    assert env.render_mode is None
    env.reset(seed=0)
    assert env.render() is None
    env.close()

    env = gymnasium.make("hud/QA-v0", task=TASK, render_mode="rgb_array")
    obs, _ = env.reset(seed=0)
    assert np.array_equal(env.render(), obs["screenshot"])
    env.close()

    env = gymnasium.make("hud/QA-v0", task=TASK, render_mode="rgb_array_list")
    assert any(isinstance(wrapper, RenderCollection) for wrapper in _wrappers(env))
    env.reset(seed=0)
    env.step(TypeAction(text="4"))
    frames = env.render()
    assert isinstance(frames, list) and len(frames) == 2
    assert all(isinstance(frame, np.ndarray) for frame in frames)
    env.close()


@pytest.mark.parametrize("render_mode", [None, "rgb_array"])
def test_check_env(render_mode: str | None) -> None:
    """check_env on the env as made (render check included; it steps sampled actions, which
    the env's step_timeout bounds)."""
    env = gymnasium.make("hud/QA-v0", task=TASK, render_mode=render_mode, step_timeout=STEP_TIMEOUT)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    assert not [w for w in caught if "reward" in str(w.message).lower() or "render" in str(w.message).lower()], [
        str(w.message) for w in caught
    ]
    env.close()


def _wrappers(env: gymnasium.Env) -> list[gymnasium.Env]:
    chain = []
    while isinstance(env, gymnasium.Wrapper):
        chain.append(env)
        env = env.env
    return chain
