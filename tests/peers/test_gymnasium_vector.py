"""Gymnasium's own vector-env tests, adapted to hud-gym's ``HudVectorEnv``.

Source: the Gymnasium repository (Farama-Foundation/Gymnasium, the suite of the installed 1.4.0),
``tests/vector/test_sync_vector_env.py``, ``test_vector_env.py`` and ``test_vector_env_info.py``.
Each test names the one it adapts; the assertions are Gymnasium's. What had to change, and why,
is said in a comment where it changes. The common changes:

- Gymnasium's tests vectorise CartPole / FrozenLake through ``SyncVectorEnv(env_fns)``; here the
  vector env is ``gymnasium.make_vec("hud/QA-v0", ...)`` (our vector entry point) over the real
  QA gym, the fastest hud-gym env (the browser gym is covered by the last tests, with real
  Chromium). Its observation is a ``Dict`` (``screenshot`` Box + ``text``), so "the observation
  array" checks apply to ``obs["screenshot"]``, and the batched text is a tuple of str.
- Gymnasium's numeric attributes (``gravity``) become one of ours (``step_timeout``).

Tests of Gymnasium that do not apply are listed, with the reason, in ``tests/peers/README.md``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import gymnasium
import numpy as np
import pytest
from gymnasium.spaces import Box, Dict
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.wrappers import RecordEpisodeStatistics

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym import ResponseAction, Task, WaitAction
from hud_gym.envs.qa import QAEnv
from hud_gym.wrappers.vector import HudVectorEnv

pytestmark = pytest.mark.timeout(120)

TASK = Task(id="sum", prompt="2+2?", target="4", gym="qa")


# The sub-envs' own step limit: their action spaces follow it (sampled waits of at most half).
STEP_TIMEOUT = 4.0


def qa_vector(num_envs: int = 4, **kwargs) -> HudVectorEnv:
    kwargs.setdefault("step_timeout", STEP_TIMEOUT)
    return gymnasium.make_vec("hud/QA-v0", num_envs=num_envs, task=TASK, **kwargs)


def make_env(**kwargs) -> Callable[[], gymnasium.Env]:
    """Gymnasium's ``tests.vector.testing_utils.make_env``: a function making the env through
    ``gymnasium.make`` (so wrapped in its ``OrderEnforcing``, and ``RenderCollection`` when asked)."""
    kwargs.setdefault("step_timeout", STEP_TIMEOUT)
    return lambda: gymnasium.make("hud/QA-v0", task=TASK, disable_env_checker=True, **kwargs)


@pytest.fixture
def envs() -> Iterator[HudVectorEnv]:
    envs = qa_vector()
    yield envs
    envs.close()


# ----------------------------------------------------------------- test_sync_vector_env.py


def test_create_vector_env() -> None:
    """test_create_sync_vector_env."""
    env = qa_vector(8)
    env.close()
    assert env.num_envs == 8


def test_metadata_vector_env() -> None:
    """test_metadata_sync_vector_env: the vector env's metadata does not mutate the sub-env's."""
    envs_1 = qa_vector(1, autoreset_mode=AutoresetMode.NEXT_STEP)
    envs_2 = qa_vector(1, autoreset_mode=AutoresetMode.SAME_STEP)
    assert envs_1.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert envs_2.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert "autoreset_mode" not in envs_1.envs[0].metadata
    envs_1.close()
    envs_2.close()


def test_reset_vector_env(envs: HudVectorEnv) -> None:
    """test_reset_sync_vector_env (a Dict observation: the array checks are on the screenshot)."""
    observations, infos = envs.reset()
    assert isinstance(envs.observation_space, Dict)
    screenshots = observations["screenshot"]
    single = envs.single_observation_space["screenshot"]
    assert isinstance(screenshots, np.ndarray)
    assert screenshots.dtype == envs.observation_space["screenshot"].dtype
    assert screenshots.shape == (4,) + single.shape
    assert screenshots.shape == envs.observation_space["screenshot"].shape
    assert isinstance(observations["text"], tuple) and len(observations["text"]) == 4


@pytest.mark.parametrize("use_single_action_space", [True, False])
def test_step_vector_env(envs: HudVectorEnv, use_single_action_space: bool) -> None:
    """test_step_sync_vector_env (Dict action space: batched as a Dict, not a MultiDiscrete)."""
    envs.reset(seed=0)
    assert isinstance(envs.single_action_space, Dict)
    assert isinstance(envs.action_space, Dict)
    if use_single_action_space:
        actions = [envs.single_action_space.sample() for _ in range(4)]
    else:
        actions = envs.action_space.sample()
    observations, rewards, terminations, truncations, _ = envs.step(actions)

    assert isinstance(observations["screenshot"], np.ndarray)
    assert observations["screenshot"].shape == envs.observation_space["screenshot"].shape
    assert isinstance(rewards, np.ndarray)
    assert isinstance(rewards[0], (float, np.floating))
    assert rewards.ndim == 1 and rewards.size == 4
    assert isinstance(terminations, np.ndarray)
    assert terminations.dtype == np.bool_ and terminations.ndim == 1 and terminations.size == 4
    assert isinstance(truncations, np.ndarray)
    assert truncations.dtype == np.bool_ and truncations.ndim == 1 and truncations.size == 4


def test_render_vector() -> None:
    """test_render_sync_vector."""
    envs = qa_vector(3, render_mode="rgb_array")
    assert envs.render_mode == "rgb_array"
    envs.reset()
    rendered_frames = envs.render()
    assert isinstance(rendered_frames, tuple)
    assert len(rendered_frames) == envs.num_envs
    assert all(isinstance(frame, np.ndarray) for frame in rendered_frames)
    envs.close()
    envs = qa_vector(3)
    assert envs.render_mode is None
    envs.close()


def test_call_vector_env() -> None:
    """test_call_sync_vector_env (``gravity`` -> ``max_episode_steps``): the sub-envs come from
    ``gymnasium.make(..., render_mode="rgb_array_list")``, in Gymnasium's ``RenderCollection``."""
    env_fns = [make_env(render_mode="rgb_array_list") for i in range(4)]

    env = HudVectorEnv(env_fns)
    _ = env.reset()
    images = env.call("render")
    limits = env.call("max_episode_steps")

    env.close()

    assert isinstance(images, tuple)
    assert len(images) == 4
    for i in range(4):
        assert len(images[i]) == 1
        assert isinstance(images[i][0], np.ndarray)

    assert isinstance(limits, tuple)
    assert len(limits) == 4
    for i in range(4):
        assert isinstance(limits[i], int)
        assert limits[i] == 20


def test_set_attr_vector_env(envs: HudVectorEnv) -> None:
    """test_set_attr_sync_vector_env (``gravity`` -> ``step_timeout``)."""
    envs.set_attr("step_timeout", [9.81, 3.72, 8.87, 1.62])
    assert envs.get_attr("step_timeout") == (9.81, 3.72, 8.87, 1.62)
    envs.set_attr("step_timeout", 30.0)  # one value for every env
    assert envs.get_attr("step_timeout") == (30.0,) * 4
    with pytest.raises(ValueError, match="Values must be a list or tuple with length equal to the number"):
        envs.set_attr("step_timeout", [1.0, 2.0])


def test_check_spaces_vector_env() -> None:
    """test_check_spaces_sync_vector_env; ours: the message is SyncVectorEnv's own, for the
    observation space and for the action space."""
    env_fns = [make_env() for _ in range(3)]
    env_fns[1] = make_env(observation_size=(64, 32))
    with pytest.raises(RuntimeError):
        env = HudVectorEnv(env_fns)
        env.close()
    for odd in (make_env(observation_size=(64, 32)), make_env(step_timeout=1.0)):
        env_fns = [make_env(), odd]
        with pytest.raises(RuntimeError) as theirs:
            SyncVectorEnv(env_fns)
        with pytest.raises(RuntimeError) as ours:
            HudVectorEnv(env_fns)
        # SyncVectorEnv's message, less its name and its observation_mode advice
        assert str(theirs.value).split(" however ")[-1].split(" If this is intentional")[0] in str(ours.value)


def test_wrapped_sub_envs_and_one_instance_twice() -> None:
    """Ours (issue 28, items 4 and 5): sub-envs in Gymnasium's own wrappers step through them
    (``RecordEpisodeStatistics`` counts every step the vector env makes); one env instance
    given for several sub-envs is refused, as SB3's ``DummyVecEnv`` refuses it."""
    envs = HudVectorEnv([lambda: RecordEpisodeStatistics(make_env()()) for _ in range(2)])
    try:
        envs.reset(seed=0)
        envs.step([WaitAction(time=0)] * 2)
        _, rewards, terminations, _, infos = envs.step([ResponseAction(text="4"), ResponseAction(text="5")])
        assert list(rewards) == [1.0, 0.0] and terminations.all()
        assert list(infos["episode"]["l"]) == [2, 2] and list(infos["episode"]["r"]) == [1.0, 0.0]
    finally:
        envs.close()
    one = QAEnv(task=TASK)
    with pytest.raises(ValueError, match="returned the same instance"):
        HudVectorEnv([lambda: one] * 3)
    one.close()


# ----------------------------------------------------------------- test_vector_env.py


def test_random_seeding_basics(envs: HudVectorEnv) -> None:
    """test_random_seeding_basics."""
    seed = 42
    envs.reset(seed=seed)
    assert envs.np_random_seed == tuple(seed + i for i in range(envs.num_envs))
    # resetting with seed=None means seed remains the same
    envs.reset(seed=None)
    assert envs.np_random_seed == tuple(seed + i for i in range(envs.num_envs))


def test_partial_reset() -> None:
    """test_partial_reset (QA episodes do not move on their own: a step types into the answer,
    which the text observation shows, so "the step's observation" is the typed answer)."""
    envs = qa_vector(3, autoreset_mode=AutoresetMode.DISABLED)
    reset_obs, _ = envs.reset(seed=[0, 1, 2])
    envs.step([{"type": "type", "text": "a"}] * 3)
    envs.step([{"type": "type", "text": "b"}] * 3)
    step_obs, *_ = envs.step([{"type": "type", "text": "c"}] * 3)

    reset_mask_obs, _ = envs.reset(seed=[0, 1, 0], options={"reset_mask": np.array([True, True, False])})
    assert reset_mask_obs["text"][:2] == reset_obs["text"][:2]
    assert reset_mask_obs["text"][2] == step_obs["text"][2]
    assert np.all(reset_mask_obs["screenshot"][2] == step_obs["screenshot"][2])
    envs.close()


def test_partial_reset_failure() -> None:
    """test_partial_reset_failure: the same errors and messages as SyncVectorEnv."""
    envs = qa_vector(3, autoreset_mode=AutoresetMode.DISABLED)
    envs.reset(options={"reset_mask": np.array([True, True, True])})
    with pytest.raises(ValueError, match=re.escape("`options['reset_mask']` must have shape `(3,)`, got (1,)")):
        envs.reset(options={"reset_mask": np.array([True])})
    with pytest.raises(ValueError, match=re.escape("`options['reset_mask']` must have shape `(3,)`, got (4,)")):
        envs.reset(options={"reset_mask": np.array([True, True, False, False])})
    with pytest.raises(ValueError, match=re.escape("`options['reset_mask']` must have shape `(3,)`, got (1, 3)")):
        envs.reset(options={"reset_mask": np.array([[True, True, True]])})
    with pytest.raises(
        ValueError,
        match=re.escape(
            "`options['reset_mask']` must contain a boolean array with at least one True value, "
            "got reset_mask=[False False False]"
        ),
    ):
        envs.reset(options={"reset_mask": np.array([False, False, False])})
    with pytest.raises(TypeError, match=re.escape("`options['reset_mask']` must have `dtype=np.bool_`, got int64")):
        envs.reset(options={"reset_mask": np.array([1, 1, 0])})
    with pytest.raises(TypeError, match=re.escape("`options['reset_mask']` must have `dtype=np.bool_`, got float64")):
        envs.reset(options={"reset_mask": np.array([1.0, 1.0, 0.0])})
    # Not in Gymnasium's test, in its code: a mask that is not an array is a TypeError.
    with pytest.raises(TypeError, match=re.escape("`options['reset_mask']` must be a numpy array")):
        envs.reset(options={"reset_mask": 1})
    envs.close()


def test_action_count_compatibility() -> None:
    """test_action_count_compatibility (a batched Dict action is sliced per key; a list of
    actions stands for the array Gymnasium slices)."""
    num_envs = 4
    envs = qa_vector(num_envs, autoreset_mode=AutoresetMode.DISABLED)
    envs.reset()
    correct_actions = [WaitAction(time=0)] * num_envs
    obs, rewards, terminations, truncations, infos = envs.step(correct_actions)
    assert len(obs["text"]) == num_envs
    assert len(rewards) == num_envs
    assert len(terminations) == num_envs
    assert len(truncations) == num_envs
    with pytest.raises(ValueError):
        envs.step(correct_actions[: num_envs - 1])
    with pytest.raises(ValueError):
        envs.step(correct_actions + correct_actions[:1])
    with pytest.raises(TypeError):
        envs.step(0)
    envs.close()


def test_final_obs_info() -> None:
    """test_final_obs_info (SAME_STEP): the ended step's observation and info in ``final_obs`` /
    ``final_info``, the reset's at the top level (a response ends a QA episode; its reset info has
    ``step == 0``, the ended step's ``step == 1``)."""
    envs = qa_vector(1, autoreset_mode=AutoresetMode.SAME_STEP)
    obs, info = envs.reset(seed=0)
    assert info["step"][0] == 0
    _, reward, terminated, _, info = envs.step([ResponseAction(text="4")])
    assert terminated[0] and reward[0] == 1.0
    assert info["_final_obs"][0] and info["_final_info"][0]
    assert info["final_info"]["step"][0] == 1 and info["step"][0] == 0
    assert "Answer so far: 4" not in obs["text"][0]
    assert isinstance(info["final_obs"][0]["screenshot"], np.ndarray)
    envs.close()


# ----------------------------------------------------------------- test_vector_env_info.py


def test_vector_return_info(envs: HudVectorEnv) -> None:
    """test_vector_return_info: one array per info key plus its ``_key`` mask (our infos have
    more keys than ReturnInfoEnv's; the layout is what is checked)."""
    _, reset_info = envs.reset(seed=0)
    assert reset_info["step"].dtype.kind == "i" and list(reset_info["step"]) == [0] * 4
    assert reset_info["_step"].dtype == np.bool_ and reset_info["_step"].all()
    envs.send([WaitAction(time=0), ResponseAction(text="4")], env_ids=[0, 1])
    _, _, _, _, step_info = envs.recv(min_batch=2)
    order = list(step_info["env_id"])
    assert sorted(order) == [0, 1]
    assert step_info["status"].dtype == object and set(step_info["status"]) == {"ok"}


# ----------------------------------------------------------------- info_mode="numeric" (issue 17, item 7)


def test_numeric_infos_go_through_numpy_to_torch() -> None:
    """Gymnasium's ``NumpyToTorch`` vector wrapper cannot take object info arrays (strings, grades):
    ``info_mode="numeric"`` keeps only what it can convert."""
    torch = pytest.importorskip("torch")
    from gymnasium.wrappers.vector import NumpyToTorch

    with pytest.raises((TypeError, BufferError)):  # torch refuses an object array (the strings)
        everything = NumpyToTorch(qa_vector(2))
        try:
            everything.reset(seed=0)
        finally:
            everything.close()
    envs = NumpyToTorch(qa_vector(2, info_mode="numeric"))
    obs, info = envs.reset(seed=0)
    assert isinstance(obs["screenshot"], torch.Tensor)
    assert {"step", "seed", "timings"} <= set(info) and "status" not in info and "prompt" not in info
    assert info["step"].tolist() == [0, 0] and info["seed"].tolist() == [0, 1]
    actions = {
        k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in envs.action_space.sample().items()
    }
    _, rewards, *_, info = envs.step(actions)
    assert (
        isinstance(rewards, torch.Tensor) and "grade" not in info and isinstance(info["timings"]["total"], torch.Tensor)
    )
    envs.close()


# ----------------------------------------------------------------- the browser gym (real Chromium)


@pytest.mark.timeout(180)
def test_browser_vector_env_api() -> None:
    """The checks above that depend on the env, on hud/Browser-v0 (real Chromium): reset and
    step shapes, per-env seeds, get_attr / set_attr, reset_mask errors, step(0)."""
    envs = gymnasium.make_vec("hud/Browser-v0", num_envs=2, screen_size=(320, 240))
    try:
        observations, _ = envs.reset(seed=7)
        assert isinstance(envs.single_observation_space["screenshot"], Box)
        assert observations["screenshot"].shape == (2, 240, 320, 3) == envs.observation_space["screenshot"].shape
        assert envs.np_random_seed == (7, 8)
        envs.set_attr("navigation_timeout", [3.0, 4.0])
        assert envs.get_attr("navigation_timeout") == (3.0, 4.0)
        _, rewards, terminations, truncations, _ = envs.step([WaitAction(time=0)] * 2)
        assert rewards.shape == terminations.shape == truncations.shape == (2,)
        with pytest.raises(TypeError):
            envs.step(0)
        with pytest.raises(ValueError, match="at least one True value"):
            envs.reset(options={"reset_mask": np.zeros(2, dtype=bool)})
    finally:
        envs.close()
