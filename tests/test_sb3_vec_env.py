"""The stable-baselines3 VecEnv over HudVectorEnv: SB3's VecEnv contract, checked against SB3's own
DummyVecEnv over the same envs (wrapped one by one), then PPO on hud/QA-v0 and on a MiniWoB++ page."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import hud_gym
from hud_gym import ClickAction, Grade, Task
from hud_gym.envs.qa import QAEnv
from hud_gym.wrappers.integrations.sb3_actions import ActionMapper, SB3ActionWrapper
from hud_gym.wrappers.integrations.sb3_observations import SB3ObservationWrapper
from hud_gym.wrappers.vector import HudVectorEnv, qa_vector_env

pytest.importorskip("stable_baselines3")
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

from hud_gym.wrappers.integrations.sb3_vec_env import HudSB3VecEnv, to_sb3_vec_env, unbatch_infos

pytestmark = pytest.mark.timeout(120)

N = 3
SIZE = (64, 48)
# Discrete actions with grid (2, 2), keys ("enter",), texts ("Paris", "4"):
# 0-3 click a cell, 4 press enter, 5 type "Paris", 6 type "4".
TASK = Task(id="sum", prompt="2+2?", target="4", gym="qa")
VOCABULARY = {"action_mode": "discrete", "grid": (2, 2), "keys": ("enter",), "texts": ("Paris", "4")}
ENTER, PARIS, FOUR = 4, 5, 6
# Per step, per env: env 0 answers in two steps (then again), env 1 mixes answers and clicks,
# env 2 never answers and is truncated by the 3-step limit.
SCHEDULE = [
    [PARIS, FOUR, 0],
    [ENTER, ENTER, 1],
    [PARIS, 2, 3],
    [ENTER, PARIS, 0],
    [FOUR, ENTER, PARIS],
    [ENTER, 3, 2],
    [ENTER, ENTER, 1],
]


def qa_single(max_steps: int = 3) -> SB3ObservationWrapper:
    """One QA env wrapped for SB3 the single-env way (SB3's DummyVecEnv is the reference)."""
    env = QAEnv(taskset="qa-basic", max_steps=max_steps, observation_size=SIZE)
    mapped = SB3ActionWrapper(
        env, mode=VOCABULARY["action_mode"], grid=VOCABULARY["grid"], keys=VOCABULARY["keys"], texts=VOCABULARY["texts"]
    )
    return SB3ObservationWrapper(mapped, size=SIZE, text="codes", text_length=64)


@pytest.fixture
def venv() -> Iterator[HudSB3VecEnv]:
    envs = to_sb3_vec_env(
        "hud/QA-v0",
        N,
        taskset="qa-basic",
        max_steps=3,
        observation_size=SIZE,
        text="codes",
        text_length=64,
        render_mode="rgb_array",
        **VOCABULARY,
    )
    yield envs
    envs.close()


def _same_observations(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key, value in a.items():
        assert value.dtype == b[key].dtype
        np.testing.assert_array_equal(value, b[key])


def _monitored() -> Monitor:
    return Monitor(qa_single())


def test_step_matches_sb3_dummy_vec_env(venv: HudSB3VecEnv) -> None:
    # The reference is SB3's own recipe: Monitor (info["episode"] at each episode end) in a DummyVecEnv.
    reference = DummyVecEnv([_monitored] * N)
    try:
        assert venv.observation_space == reference.observation_space
        assert venv.action_space == reference.action_space
        venv.seed(5)
        reference.seed(5)
        # Env 0 starts on capital-france (answered "Paris" by the schedule), the others on a seeded draw.
        options = [{"task_index": 0}, {}, {}]
        venv.set_options(options)
        reference.set_options(options)
        _same_observations(venv.reset(), reference.reset())
        assert [i["task_id"] for i in venv.reset_infos] == [i["task_id"] for i in reference.reset_infos]
        ended = {"terminated": 0, "truncated": 0}
        rewards = []
        for actions in SCHEDULE:
            obs_a, rewards_a, dones_a, infos_a = venv.step(np.array(actions))
            obs_b, rewards_b, dones_b, infos_b = reference.step(np.array(actions))
            # The next episode's first observation in the rows of done envs, as DummyVecEnv.
            _same_observations(obs_a, obs_b)
            assert rewards_a.dtype == np.float32 and rewards_a.shape == (N,)
            assert dones_a.dtype == np.bool_ and dones_a.shape == (N,)
            np.testing.assert_array_equal(rewards_a, rewards_b)
            rewards.extend(rewards_a.tolist())
            np.testing.assert_array_equal(dones_a, dones_b)
            assert isinstance(infos_a, list) and len(infos_a) == N
            for i, (a, b) in enumerate(zip(infos_a, infos_b, strict=True)):
                # A done env's info is the final step's (its grade, its step count), not the reset's.
                assert a.keys() == b.keys()
                for key in ("status", "step", "task_id", "TimeLimit.truncated", "action_error"):
                    assert a[key] == b[key], (key, a, b)
                assert (a["grade"] is None) == (b["grade"] is None)
                if a["grade"] is not None:
                    assert isinstance(a["grade"], Grade) and a["grade"].reward == b["grade"].reward
                if dones_a[i]:
                    _same_observations(a["terminal_observation"], b["terminal_observation"])
                    assert a["terminal_observation"]["image"].shape == (SIZE[1], SIZE[0], 3)
                    ended["truncated" if a["TimeLimit.truncated"] else "terminated"] += 1
                    assert venv.reset_infos[i]["step"] == 0
                    assert venv.reset_infos[i]["task_id"] == reference.reset_infos[i]["task_id"]
                    assert a["episode"]["l"] == b["episode"]["l"] and a["episode"]["r"] == pytest.approx(
                        b["episode"]["r"]
                    )
                else:
                    assert "terminal_observation" not in a
        assert ended["terminated"] >= 3 and ended["truncated"] >= 2, ended
        assert 1.0 in rewards
    finally:
        reference.close()


def test_seed_and_options_apply_at_the_next_reset_only(venv: HudSB3VecEnv) -> None:
    assert venv.seed(11) == [11, 12, 13]
    first = venv.reset()
    assert [info["seed"] for info in venv.reset_infos] == [11, 12, 13]
    venv.seed(11)
    _same_observations(venv.reset(), first)
    unseeded = venv.reset()
    assert [info["seed"] for info in venv.reset_infos] != [11, 12, 13]
    assert unseeded["text"].shape == (N, 64)

    tasks = hud_gym.load_taskset("qa-basic")
    venv.set_options({"task_index": 2})
    venv.reset()
    assert [info["task_id"] for info in venv.reset_infos] == [tasks[2].id] * N
    venv.set_options([{"task_index": 0}, {"task_index": 1}, {"task_index": 0}])
    venv.reset()
    assert [info["task_id"] for info in venv.reset_infos] == [tasks[0].id, tasks[1].id, tasks[0].id]
    assert [task.id for task in venv.get_attr("task")] == [tasks[0].id, tasks[1].id, tasks[0].id]


def test_sub_env_access_and_rendering(venv: HudSB3VecEnv) -> None:
    venv.reset()
    assert venv.get_attr("observation_size") == [SIZE] * N
    venv.set_attr("step_timeout", 7.5, indices=[1])
    assert venv.get_attr("step_timeout") == [30.0, 7.5, 30.0]
    grades = venv.env_method("evaluate", indices=[0, 2])
    assert len(grades) == 2 and all(isinstance(g, Grade) for g in grades)
    assert venv.env_is_wrapped(Monitor) == [False] * N
    images = venv.get_images()
    assert len(images) == N and all(image.shape == (SIZE[1], SIZE[0], 3) for image in images)
    tiled = venv.render()
    assert tiled.ndim == 3 and tiled.shape[2] == 3 and tiled.size >= N * images[0].size
    with pytest.raises(AttributeError):
        venv.get_attr("no_such_attribute")


def test_render_before_reset_and_one_env_given_thrice_are_refused_as_sb3_refuses_them() -> None:
    """Issue 28, item 5, checked against SB3's own DummyVecEnv over the same envs: ``render()``
    before ``reset()`` is Gymnasium's ``ResetNeeded`` (it was ``[None] * n``, on which SB3's
    ``tile_images`` failed), and the same env instance passed three times is a ``ValueError``."""
    from gymnasium.error import ResetNeeded

    reference = DummyVecEnv(
        [lambda: SB3ObservationWrapper(gymnasium.make("hud/QA-v0", task=TASK, render_mode="rgb_array"), size=SIZE)] * 2
    )
    with pytest.raises(ResetNeeded):
        reference.render()
    reference.close()
    venv = to_sb3_vec_env("hud/QA-v0", 2, task=TASK, render_mode="rgb_array", observation_size=SIZE)
    try:
        with pytest.raises(ResetNeeded, match="before calling `env.reset"):
            venv.render()
        venv.reset()
        tiled = venv.render()
        assert tiled.ndim == 3 and tiled.shape[2] == 3
    finally:
        venv.close()

    one = gymnasium.make("hud/QA-v0", task=TASK)
    with pytest.raises(ValueError, match="returned the same instance"):
        DummyVecEnv([lambda: one] * 3)
    with pytest.raises(ValueError, match="returned the same instance"):
        to_sb3_vec_env(HudVectorEnv([lambda: one] * 3))
    one.close()


def test_bad_action_is_refused_and_the_env_goes_on(venv: HudSB3VecEnv) -> None:
    venv.reset()
    with pytest.raises(ValueError, match=r"env 1: action \[7\] is not in the SB3 action space Discrete\(7\)"):
        venv.step(np.array([0, 7, 0]))
    with pytest.raises(ValueError, match="expected 3 actions"):
        venv.step(np.array([0, 0]))
    _, _, dones, infos = venv.step(np.array([PARIS, PARIS, PARIS]))
    assert [info["status"] for info in infos] == ["ok"] * N and not dones.any()


def test_reset_discards_a_step_in_flight(venv: HudSB3VecEnv) -> None:
    venv.seed(0)
    first = venv.reset()
    venv.step_async(np.array([PARIS, PARIS, PARIS]))
    venv.seed(0)
    _same_observations(venv.reset(), first)
    _, _, _, infos = venv.step(np.array([FOUR, FOUR, FOUR]))
    assert [info["step"] for info in infos] == [1, 1, 1]


def test_existing_vector_env_is_switched_to_same_step_or_refused() -> None:
    vector_env = qa_vector_env(num_envs=2, task=Task(id="t", prompt="2+2?", target="4"), max_episode_steps=2)
    try:
        vector_env.reset(seed=0)
        vector_env.send([hud_gym.WaitAction(time=1)] * 2)
        with pytest.raises(ValueError, match="step in flight"):
            to_sb3_vec_env(vector_env, observation_size=SIZE)
        vector_env.recv()
        with pytest.raises(ValueError, match="num_envs=3 but the HudVectorEnv has 2 envs"):
            to_sb3_vec_env(vector_env, 3)
        with pytest.raises(TypeError, match="apply to a gym id"):
            to_sb3_vec_env(vector_env, max_steps=4)
        with pytest.raises(ValueError, match="SAME_STEP"):
            HudSB3VecEnv(vector_env)
        venv = to_sb3_vec_env(vector_env, observation_size=SIZE, **VOCABULARY)
        assert vector_env.metadata["autoreset_mode"] is vector_env.autoreset_mode
        venv.reset()
        _, _, dones, infos = venv.step(np.array([FOUR, 0]))
        assert not dones.any()
        obs, rewards, dones, infos = venv.step(np.array([ENTER, 0]))
        assert dones.tolist() == [True, True] and rewards.tolist() == [1.0, 0.0]
        assert [i["TimeLimit.truncated"] for i in infos] == [False, True]
        # Same-step autoreset: the rows already show new episodes (an empty answer box).
        assert obs.shape == (2, SIZE[1], SIZE[0], 3)
        assert all(info["terminal_observation"].shape == obs.shape[1:] for info in infos)
        assert [info["step"] for info in venv.reset_infos] == [0, 0]
    finally:
        vector_env.close()
    with pytest.raises(TypeError, match="not a hud-gym env id"):
        to_sb3_vec_env("CartPole-v1")


def test_an_absent_reward_reaches_sb3_as_failed_reward_marked_counted_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    import failing_functions  # noqa: F401  (registers failing_raises)

    good = Task(id="good", prompt="2+2?", gym="qa", target="4")
    broken = Task(id="broken", prompt="2+2?", gym="qa", evaluate="failing_raises")
    vector_env = HudVectorEnv(
        [lambda: QAEnv(task=good, observation_size=SIZE), lambda: QAEnv(task=broken, observation_size=SIZE)],
        autoreset_mode=AutoresetMode.SAME_STEP,
    )
    with pytest.raises(ValueError, match="failed_reward"):
        HudSB3VecEnv(vector_env, failed_reward=float("nan"), **VOCABULARY)
    venv = HudSB3VecEnv(vector_env, failed_reward=-1.0, observation_size=SIZE, **VOCABULARY)
    try:
        venv.reset()
        venv.step(np.array([FOUR, FOUR]))
        with caplog.at_level("WARNING", logger="hud_gym.wrappers.integrations.sb3_vec_env"):
            _, rewards, dones, infos = venv.step(np.array([ENTER, ENTER]))
        assert dones.tolist() == [True, True] and rewards.tolist() == [1.0, -1.0] and rewards.dtype == np.float32
        assert "reward_absent" not in infos[0] and infos[1]["reward_absent"] is True
        assert infos[1]["status"] == "eval_error" and "evaluator bug" in infos[1]["error"]
        assert venv.absent_rewards == 1
        [record] = caplog.records
        assert "env 1" in record.getMessage() and "eval_error" in record.getMessage()
    finally:
        venv.close()


def test_clicks_only_vocabulary_passes_sb3_check_env() -> None:
    from stable_baselines3.common.env_checker import check_env

    for mode, expected in (("multidiscrete", [1, 5, 5, 1, 1]), ("discrete", 25)):
        mapper = ActionMapper((160, 160), mode, grid=(5, 5), keys=(), texts=())
        assert (mapper.space.nvec.tolist() if mode == "multidiscrete" else mapper.space.n) == expected
    assert ActionMapper((160, 160), "multidiscrete", (5, 5), (), ()).to_cla([0, 4, 0, 0, 0]) == ClickAction(
        point=(144, 16)
    )
    assert ActionMapper((160, 160), "discrete", (5, 5), (), ()).to_cla(24) == ClickAction(point=(144, 144))
    assert isinstance(ActionMapper((160, 160), "box", (5, 5), (), ()).to_cla(np.ones(4, np.float32)), ClickAction)
    with pytest.raises(ValueError, match=r"action \[1, 0, 0, 0, 0\] is not in the SB3 action space"):
        ActionMapper((160, 160), "multidiscrete", (5, 5), (), ()).to_cla([1, 0, 0, 0, 0])
    env = SB3ObservationWrapper(
        SB3ActionWrapper(
            QAEnv(task=Task(prompt="?", target="x")), mode="multidiscrete", grid=(5, 5), keys=(), texts=()
        ),
        size=(64, 48),
    )
    try:
        check_env(env, warn=True)
    finally:
        env.close()


def test_importing_the_wrappers_does_not_import_sb3_or_torch() -> None:
    code = (
        "import sys, hud_gym, hud_gym.wrappers, hud_gym.wrappers.integrations.sb3_actions, hud_gym.wrappers.integrations.sb3_observations, "
        "hud_gym.wrappers.vector; print(sorted(m for m in ('stable_baselines3', 'torch') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "[]"


def test_unbatch_infos_inverts_add_info() -> None:
    envs = HudVectorEnv([lambda: QAEnv(task=Task(prompt="?", target="x"))] * 3)
    try:
        per_env = [{"a": 1, "nested": {"b": "x"}}, {}, {"a": 2.5, "final_obs": {"screenshot": np.zeros(2)}}]
        batched: dict = {}
        for i, info in enumerate(per_env):
            batched = envs._add_info(batched, info, i)
        out = unbatch_infos(batched, 3)
        assert out[0] == {"a": 1, "nested": {"b": "x"}} and type(out[0]["a"]) is int
        assert out[1] == {}
        assert out[2]["a"] == 2 and out[2]["final_obs"]["screenshot"].shape == (2,)  # int array: Gymnasium's own cast
    finally:
        envs.close()


def test_ppo_multi_input_learns_on_qa_under_vec_monitor(venv: HudSB3VecEnv) -> None:
    from stable_baselines3 import PPO

    monitored = VecMonitor(venv)
    model = PPO("MultiInputPolicy", monitored, n_steps=32, batch_size=48, n_epochs=2, seed=0, verbose=0)
    model.learn(total_timesteps=192)
    assert model.num_timesteps >= 192
    # Every 3-step episode ends within the run: VecMonitor saw them through the done infos.
    assert len(model.ep_info_buffer) >= 192 // (3 * N)
    assert all(set(e) >= {"r", "l", "t"} and 1 <= e["l"] <= 3 for e in model.ep_info_buffer)
    observation = monitored.reset()
    actions, _ = model.predict(observation, deterministic=True)
    assert actions.shape == (N,) and all(venv.action_space.contains(int(a)) for a in actions)


@pytest.mark.timeout(180)
def test_ppo_cnn_on_a_miniwob_page_with_two_browser_envs() -> None:
    pytest.importorskip("miniwob")
    from stable_baselines3 import PPO

    from hud_gym.controllers.browser.chromium import (
        ChromiumNotFoundError,
        find_chromium,
    )

    try:
        find_chromium()
    except ChromiumNotFoundError as exc:
        pytest.skip(str(exc))
    venv = to_sb3_vec_env(
        "hud/Browser-v0",
        2,
        task="miniwob/click-test",
        observation_crop=(0, 50, 160, 160),
        screen_size=(500, 320),
        max_steps=2,
        action_mode="multidiscrete",
        grid=(5, 5),
        keys=(),
        texts=(),
        observation_size=(64, 64),
    )
    try:
        assert venv.action_space.nvec.tolist() == [1, 5, 5, 1, 1]
        model = PPO("CnnPolicy", VecMonitor(venv), n_steps=32, batch_size=32, n_epochs=1, seed=0, verbose=0)
        model.learn(total_timesteps=64)
        assert model.num_timesteps >= 64 and len(model.ep_info_buffer) >= 64 // (2 * 2)
        # A click on every cell: the button covers at least one cell centre, so some click ends
        # its episode with MiniWoB's reward 1, and the rows then show the next instance.
        venv.seed(3)
        venv.reset()
        rewards = []
        for cell in range(25):
            _, reward, dones, infos = venv.step(np.array([[0, cell % 5, cell // 5, 0, 0]] * 2))
            rewards.extend(reward[dones].tolist())
            for info in (i for i, done in zip(infos, dones, strict=True) if done):
                assert info["terminal_observation"].shape == (64, 64, 3)
                assert info["TimeLimit.truncated"] == (info["grade"].reward == 0)
        assert 1.0 in rewards
    finally:
        venv.close()
