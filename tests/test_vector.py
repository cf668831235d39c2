"""The batched vector env against Gymnasium's SyncVectorEnv on hud/QA-v0."""

from __future__ import annotations

import asyncio
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from vector_timeline import SCHEDULE, TASK, batched, same_infos, same_obs

import hud_gym
from hud_gym import ResponseAction, Task, TypeAction, WaitAction
from hud_gym.controllers.base import ControllerError
from hud_gym.envs.qa import QAEnv
from hud_gym.rewards import graded_reward
from hud_gym.wrappers.vector import HudVectorEnv, qa_vector_env

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_autoreset_timeline_matches_sync_vector_env(mode: AutoresetMode) -> None:
    ours = qa_vector_env(num_envs=3, task=TASK, max_episode_steps=3, autoreset_mode=mode)
    reference = SyncVectorEnv([lambda: QAEnv(task=TASK, max_steps=3)] * 3, autoreset_mode=mode)
    try:
        assert ours.metadata["autoreset_mode"] is mode
        obs_a, _ = ours.reset(seed=5)
        obs_b, _ = reference.reset(seed=5)
        same_obs(obs_a, obs_b)
        for step, actions in enumerate(SCHEDULE):
            batch = batched(ours.single_action_space, actions, ours.envs[0].action_space_config)
            # Ours takes a list of CLA actions or the batched element; alternate to test both.
            a = ours.step(actions if step % 2 else batch)
            b = reference.step(batch)
            same_obs(a[0], b[0])
            for x, y in zip(a[1:4], b[1:4], strict=True):
                np.testing.assert_array_equal(x, y)
            same_infos(a[4], b[4])
            if mode is AutoresetMode.SAME_STEP and "final_obs" in a[4]:
                for i in np.flatnonzero(a[4]["_final_obs"]):
                    same_obs(a[4]["final_obs"][i], b[4]["final_obs"][i])
    finally:
        ours.close()
        reference.close()


def test_disabled_autoreset_needs_reset_mask() -> None:
    envs = qa_vector_env(num_envs=2, task=TASK, autoreset_mode=AutoresetMode.DISABLED)
    try:
        envs.reset(seed=0)
        _, rewards, terminated, _, _ = envs.step([ResponseAction(text="Paris"), TypeAction(text="x")])
        assert terminated.tolist() == [True, False] and rewards.tolist() == [1.0, 0.0]
        with pytest.raises(RuntimeError, match="reset_mask"):
            envs.step([TypeAction(text="a"), TypeAction(text="b")])
        _, infos = envs.reset(options={"reset_mask": np.array([True, False])})
        assert infos["_task_id"].tolist() == [True, False]
        _, rewards, terminated, _, _ = envs.step([ResponseAction(text="Paris"), ResponseAction(text="Pari")])
        assert rewards.tolist() == [1.0, 0.0] and terminated.tolist() == [True, True]
    finally:
        envs.close()


def test_same_seed_group_gets_identical_first_observations() -> None:
    envs = qa_vector_env(num_envs=4, taskset="qa-basic")
    try:
        obs, infos = envs.reset(seed=[11] * 4)
        assert len(set(infos["task_id"])) == 1
        for i in range(1, 4):
            np.testing.assert_array_equal(obs["screenshot"][0], obs["screenshot"][i])
            assert obs["text"][0] == obs["text"][i]
        obs, infos = envs.reset(seed=[0, 1, 2, 3])
        assert len(set(infos["task_id"])) > 1
    finally:
        envs.close()


def test_text_observations_are_per_env_strings() -> None:
    envs = qa_vector_env(num_envs=2, task=TASK)
    try:
        envs.reset(seed=0)
        obs, *_ = envs.step([TypeAction(text="Lyon"), TypeAction(text="Nice ü")])
        assert isinstance(obs["text"], tuple) and all(isinstance(t, str) for t in obs["text"])
        assert obs["text"][0].endswith("Answer so far: Lyon") and obs["text"][1].endswith("Answer so far: Nice ü")
        assert envs.observation_space.contains(obs)
    finally:
        envs.close()


class _RendezvousQAEnv(QAEnv):
    """A QA env whose step first waits until every env of the batch is inside its step: a batch
    stepped one env after another never gets there (the wait times out into an env error)."""

    batch = 4
    inside = 0
    everyone: asyncio.Event | None = None

    async def astep(self, action: Any):  # type: ignore[override]
        cls = type(self)
        cls.everyone = cls.everyone or asyncio.Event()
        cls.inside += 1
        if cls.inside == cls.batch:
            cls.everyone.set()
        await asyncio.wait_for(cls.everyone.wait(), timeout=10)
        return await super().astep(action)


def test_steps_run_concurrently() -> None:
    envs = HudVectorEnv([lambda: _RendezvousQAEnv(task=TASK)] * _RendezvousQAEnv.batch)
    try:
        envs.reset(seed=0)
        _, _, _, _, infos = envs.step([TypeAction(text="x")] * 4)
        assert infos["status"].tolist() == ["ok"] * 4, infos.get("error")
    finally:
        envs.close()


class _HangingQAEnv(QAEnv):
    """A QA env whose step never ends on the answer 'hang' (a wedged page or evaluator)."""

    async def astep(self, action: Any):  # type: ignore[override]
        if isinstance(action, ResponseAction) and action.text == "hang":
            await asyncio.Event().wait()
        return await super().astep(action)


def _warm_evaluation_worker() -> None:
    """Grade one answer, so that the evaluation worker process has started (its start-up, ~0.5 s
    of CPU, would otherwise count against a tight step timeout on a loaded machine)."""
    env = QAEnv(task=TASK)
    try:
        env.reset(seed=0)
        assert env.step(ResponseAction(text="Paris"))[1] == 1.0
    finally:
        env.close()


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_a_sub_env_that_outlives_the_step_timeout_is_replaced(mode: AutoresetMode) -> None:
    _warm_evaluation_worker()
    envs = HudVectorEnv([lambda: _HangingQAEnv(task=TASK)] * 3, autoreset_mode=mode, step_timeout=0.5)
    try:
        envs.reset(seed=0)
        hung = envs.envs[1]
        _, rewards, terminated, truncated, infos = envs.step(
            [TypeAction(text="P"), ResponseAction(text="hang"), ResponseAction(text="Paris")]
        )
        assert truncated.tolist() == [False, True, False] and terminated.tolist() == [False, False, True]
        assert rewards[0] == 0.0 and np.isnan(rewards[1]) and rewards[2] == 1.0  # a timed-out row has no reward
        assert envs.envs[1] is not hung
        if mode is AutoresetMode.SAME_STEP:
            # The ended episodes' infos ride in final_info; the top level is the new episode's.
            assert infos["final_info"]["status"][1:].tolist() == ["timeout", "ok"]
            assert "within 0.5 s" in infos["final_info"]["error"][1] and infos["step"][1] == 0
        else:
            assert infos["status"].tolist() == ["ok", "timeout", "ok"] and "within 0.5 s" in infos["error"][1]
            # The replacement starts a fresh episode at the next step (its action discarded).
            _, _, _, _, infos = envs.step([TypeAction(text="a"), TypeAction(text="x"), TypeAction(text="y")])
            assert infos["step"].tolist() == [2, 0, 0]
        _, rewards, _, _, infos = envs.step([ResponseAction(text="Paris")] * 3)
        assert rewards[1] == 1.0 and infos["status"][1] == "ok"
    finally:
        envs.close()


def test_a_hung_evaluator_is_a_timeout_not_a_hang() -> None:
    from hud_gym.evaluation import evaluate_function

    @evaluate_function("qa", name="test_vector_never_answers")
    async def never_answers(ctx) -> float:
        await asyncio.Event().wait()
        return 1.0

    env = QAEnv(task=Task(prompt="?", evaluate="test_vector_never_answers", gym="qa"), step_timeout=0.3)
    try:
        env.reset(seed=0)
        _, reward, terminated, truncated, info = env.step(ResponseAction(text="x"))
        assert (graded_reward(reward), terminated, truncated, info["status"]) == (None, True, True, "timeout")
        assert info["grade"].is_error and "0.3 s" in info["error"]
        env.reset(seed=1)  # the controller was restarted
    finally:
        env.close()


def test_send_recv_returns_fast_envs_first() -> None:
    envs = qa_vector_env(num_envs=3, task=TASK)
    try:
        envs.reset(seed=0)
        envs.send([WaitAction(time=1500), ResponseAction(text="Paris"), TypeAction(text="x")])
        _, rewards, terminated, _, infos = envs.recv(min_batch=2)
        assert sorted(infos["env_id"].tolist()) == [1, 2]
        reward_of = dict(zip(infos["env_id"].tolist(), rewards.tolist(), strict=True))
        assert reward_of == {1: 1.0, 2: 0.0}
        with pytest.raises(RuntimeError, match="in flight"):
            envs.send([TypeAction(text="y")], env_ids=[0])
        envs.send([TypeAction(text="y")], env_ids=[2])
        _, _, _, _, infos = envs.recv(min_batch=1)
        assert infos["env_id"].tolist() == [2]
        _, _, _, _, infos = envs.recv(timeout=10)
        assert infos["env_id"].tolist() == [0]
        with pytest.raises(RuntimeError, match="send"):
            envs.recv()
    finally:
        envs.close()


def test_every_batch_is_the_callers_own() -> None:
    envs = qa_vector_env(num_envs=2, task=TASK, render_mode="rgb_array")
    try:
        first, _ = envs.reset(seed=0)
        kept = first["screenshot"].copy()
        first["screenshot"][:] = 0  # a caller that writes into its batch
        second, *_ = envs.step([TypeAction(text="P"), TypeAction(text="P")])
        assert not np.shares_memory(first["screenshot"], second["screenshot"])
        np.testing.assert_array_equal(envs.render()[0][:40], kept[0][:40])  # the prompt band is unchanged
    finally:
        envs.close()


def test_a_bad_send_starts_nothing() -> None:
    envs = qa_vector_env(num_envs=2, task=TASK)
    try:
        envs.reset(seed=0)
        with pytest.raises(IndexError, match=r"env ids \[2\] are not in \[0, 1\]"):
            envs.send([TypeAction(text="a"), TypeAction(text="b")], env_ids=[0, 2])
        with pytest.raises(ValueError, match="name an env twice"):
            envs.send([TypeAction(text="a"), TypeAction(text="b")], env_ids=[1, 1])
        assert envs.in_flight == []
        envs.send([ResponseAction(text="Paris")], env_ids=[0])
        _, rewards, _, _, infos = envs.recv()
        assert infos["env_id"].tolist() == [0] and rewards.tolist() == [1.0]
    finally:
        envs.close()


def test_recv_timeout_with_nothing_finished() -> None:
    envs = qa_vector_env(num_envs=1, task=TASK)
    try:
        envs.reset(seed=0)
        envs.send([WaitAction(time=800)])
        with pytest.raises(TimeoutError):
            envs.recv(timeout=0.1)
        _, _, _, _, infos = envs.recv()
        assert infos["status"].tolist() == ["ok"]
    finally:
        envs.close()


class _CrashOnceQAEnv(QAEnv):
    """A QA env whose step raises once on the answer 'crash' (a fault injected into a sub-env)."""

    crashed = 0

    async def astep(self, action: Any):  # type: ignore[override]
        if isinstance(action, ResponseAction) and action.text == "crash":
            type(self).crashed += 1
            raise RuntimeError("injected crash")
        return await super().astep(action)


def test_a_crashed_sub_env_is_replaced_and_reported_failed() -> None:
    envs = HudVectorEnv([lambda: _CrashOnceQAEnv(task=TASK)] * 2)
    try:
        envs.reset(seed=0)
        first = envs.envs[0]
        _, rewards, terminated, _, infos = envs.step([ResponseAction(text="crash"), TypeAction(text="x")])
        assert terminated.tolist() == [True, False] and np.isnan(rewards[0]) and rewards[1] == 0.0
        assert infos["status"].tolist() == ["env_error", "ok"]
        assert "injected crash" in infos["error"][0]
        assert envs.envs[0] is not first
        # NEXT_STEP: the replaced env starts a fresh episode and plays on.
        _, rewards, terminated, _, infos = envs.step([TypeAction(text="a"), ResponseAction(text="Paris")])
        assert infos["step"].tolist() == [0, 2] and rewards.tolist() == [0.0, 1.0]
        _, rewards, terminated, _, _ = envs.step([ResponseAction(text="Paris"), TypeAction(text="b")])
        assert rewards.tolist() == [1.0, 0.0]
    finally:
        envs.close()


class _FlakyResetQAEnv(QAEnv):
    """A QA env whose reset fails while ``down`` (its controller server keeps dying)."""

    down = False

    async def areset(self, *args: Any, **kwargs: Any):  # type: ignore[override]
        if type(self).down:
            raise ControllerError("reset failed after a controller restart: the server is down")
        return await super().areset(*args, **kwargs)


def test_an_autoreset_that_keeps_failing_is_a_failed_row_not_an_exception() -> None:
    """Found by the fault-injection suite: a controller server killed again while the vector env
    autoreset an env (and the fresh env it tried next) made ``recv`` raise."""
    envs = HudVectorEnv([lambda: _FlakyResetQAEnv(task=TASK)] * 2)
    try:
        envs.reset(seed=0)
        _, rewards, terminated, _, _ = envs.step([ResponseAction(text="Paris"), TypeAction(text="x")])
        assert terminated.tolist() == [True, False] and rewards.tolist() == [1.0, 0.0]
        _FlakyResetQAEnv.down = True
        for _ in range(2):  # env 0 is due for a reset that fails; env 1 plays on
            _, rewards, terminated, _, infos = envs.step([TypeAction(text="a"), TypeAction(text="b")])
            assert infos["status"].tolist() == ["env_error", "ok"] and np.isnan(rewards[0]) and rewards[1] == 0.0
            assert terminated.tolist() == [True, False] and "could not be reset" in infos["error"][0]
        _FlakyResetQAEnv.down = False
        _, rewards, terminated, _, infos = envs.step([TypeAction(text="a"), ResponseAction(text="Paris")])
        assert infos["status"].tolist() == ["ok", "ok"] and rewards.tolist() == [0.0, 1.0]
        assert infos["step"].tolist() == [0, 4]  # env 0: the reset row of its new episode
    finally:
        _FlakyResetQAEnv.down = False
        envs.close()


def test_a_same_step_autoreset_that_fails_keeps_the_final_row_and_resets_next_step() -> None:
    envs = HudVectorEnv([lambda: _FlakyResetQAEnv(task=TASK)], autoreset_mode=AutoresetMode.SAME_STEP)
    try:
        envs.reset(seed=0)
        _FlakyResetQAEnv.down = True
        _, rewards, terminated, _, infos = envs.step([ResponseAction(text="Paris")])
        assert rewards.tolist() == [1.0] and terminated.tolist() == [True] and infos["status"].tolist() == ["ok"]
        assert "could not be reset" in infos["reset_error"][0] and "final_obs" not in infos
        _FlakyResetQAEnv.down = False
        _, rewards, terminated, _, infos = envs.step([ResponseAction(text="Paris")])  # the reset, in its place
        assert rewards.tolist() == [0.0] and terminated.tolist() == [False] and infos["step"].tolist() == [0]
        _, rewards, terminated, _, infos = envs.step([ResponseAction(text="Paris")])
        assert rewards.tolist() == [1.0] and infos["final_info"]["step"].tolist() == [1]
    finally:
        _FlakyResetQAEnv.down = False
        envs.close()


def test_batched_action_space_samples_step() -> None:
    # Short waits and click patterns, so random actions do not spend the test sleeping.
    config = hud_gym.ActionSpaceConfig(max_wait_ms=50, max_delay_ms=50)
    envs = qa_vector_env(num_envs=3, task=TASK, action_space_config=config)
    try:
        envs.reset(seed=0)
        envs.action_space.seed(1)
        for _ in range(3):
            obs, *_ = envs.step(envs.action_space.sample())
            assert envs.observation_space.contains(obs)
    finally:
        envs.close()


def test_close_twice_and_use_after_close() -> None:
    envs = qa_vector_env(num_envs=2, task=TASK)
    envs.reset(seed=0)
    envs.close()
    envs.close()
    with pytest.raises(RuntimeError, match="closed"):
        envs.reset()


def test_gymnasium_vector_env_type() -> None:
    envs = qa_vector_env(num_envs=2, task=TASK)
    try:
        assert isinstance(envs, gymnasium.vector.VectorEnv)
        assert envs.single_observation_space == envs.envs[0].observation_space
    finally:
        envs.close()


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("copy", [True, False])
def test_make_vec_sync_and_async_return_correct_texts(mode: str, copy: bool) -> None:
    # Regression: AsyncVectorEnv(shared_memory=True) reads Text observations once at construction
    # (Gymnasium #1164); hud-gym's UnicodeText registers a live reader.
    envs = gymnasium.make_vec("hud/QA-v0", num_envs=2, vectorization_mode=mode, task=TASK, vector_kwargs={"copy": copy})
    try:
        obs, _ = envs.reset(seed=0)
        assert [t.endswith("Answer so far: ") for t in obs["text"]] == [True, True]
        obs, *_ = envs.step(batched(envs.single_action_space, [TypeAction(text="Lyon"), TypeAction(text="Nice ü")]))
        assert obs["text"][0].endswith("Answer so far: Lyon") and obs["text"][1].endswith("Answer so far: Nice ü")
        assert envs.observation_space.contains(obs)
        obs, *_ = envs.step(batched(envs.single_action_space, [TypeAction(text="!"), TypeAction(text="?")]))
        assert list(obs["text"])[1].endswith("Nice ü?")
    finally:
        envs.close()


def test_make_vec_uses_the_vector_entry_point() -> None:
    envs = gymnasium.make_vec("hud/QA-v0", num_envs=2, task=TASK, max_episode_steps=2)
    try:
        assert isinstance(envs, HudVectorEnv)
        assert envs.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
        envs.reset(seed=0)
        envs.step([TypeAction(text="a"), TypeAction(text="b")])
        _, rewards, terminated, truncated, infos = envs.step([TypeAction(text="c"), ResponseAction(text="Paris")])
        assert truncated.tolist() == [True, False] and terminated.tolist() == [False, True]
        assert rewards.tolist() == [0.0, 1.0]
        assert infos["_grade"].tolist() == [True, True]  # the truncated step was graded too
    finally:
        envs.close()
