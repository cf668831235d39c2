"""A reward is graded or absent, never a silent 0: every failure path of a step, against real QA
envs, vector envs, rollouts, a real job store and a real child process killed with SIGKILL.

Each failure must show as its status, ``reward=None`` in the step, ``NaN`` in a vector env's
reward row, ``None`` in the trajectory and the store, and an error (not a scored run) in the
job's analytics. ``action_error`` is the one non-failure: the episode goes on.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import pytest

import hud_gym
from hud_gym import ResponseAction, Task, TypeAction
from hud_gym.envs.qa import QAEnv
from hud_gym.evaluation.worker_pool import get_worker_pool
from hud_gym.jobs import list_jobs, load_job
from hud_gym.rewards import graded_reward
from hud_gym.spaces.layout import ActionSpaceConfig
from hud_gym.wrappers.rollout.grpo import group_advantages, rollout_group
from hud_gym.wrappers.vector import HudVectorEnv

sys.path.insert(0, str(Path(__file__).parent))
import failing_functions

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HUD_GYM_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def qa_task(evaluate: Any, task_id: str = "t", **config: Any) -> Task:
    return Task(id=task_id, prompt="Capital of France?", gym="qa", evaluate=evaluate, config=config or None)


def answer_in_a_job(task: Task, answer: str = "Paris", **env_kwargs: Any) -> tuple[Any, dict[str, Any], Any]:
    """One episode of ``task`` recorded in a new job: (reward, info, the job)."""
    job = hud_gym.create_job("failures")
    env = QAEnv(task=task, job=job, **env_kwargs)
    try:
        env.reset(seed=0)
        _, reward, terminated, truncated, info = env.step(ResponseAction(text=answer))
        assert terminated or truncated
    finally:
        env.close()
    return reward, info, job


def assert_stored_as_failed(job: Any, status: str) -> None:
    """The job's one trajectory is ``status`` with no reward, step included, and counts as an error."""
    [trajectory] = job.load_trajectories()
    assert (trajectory.status, trajectory.reward) == (status, None)
    assert [s.reward for s in trajectory.steps] == [None] and trajectory.steps[-1].status == status
    analytics = job.get_analytics()
    assert analytics.errors == 1 and analytics.error_counts == {status: 1}
    assert analytics.scored == 0 and analytics.success_rate is None and analytics.mean_reward is None


def gone(pid: int) -> bool:
    """True once ``pid`` has exited and been reaped (waits up to 10 s for it)."""
    try:
        psutil.Process(pid).wait(timeout=10)
    except psutil.NoSuchProcess:
        pass
    return not psutil.pid_exists(pid)


# ---------------------------------------------------------------------- evaluators that fail


def test_an_evaluator_that_raises_is_an_eval_error_without_a_reward() -> None:
    reward, info, job = answer_in_a_job(qa_task("failing_raises"))
    assert math.isnan(reward) and info["status"] == "eval_error"
    assert "RuntimeError: evaluator bug" in info["error"] and info["grade"].is_error
    assert_stored_as_failed(job, "eval_error")


def test_a_failed_evaluation_mid_episode_goes_on_and_an_abandoned_episode_keeps_its_failure() -> None:
    job = hud_gym.create_job("every step")
    env = QAEnv(task=qa_task("failing_raises"), evaluate_every_step=True, job=job)
    try:
        env.reset(seed=0)
        _, reward, terminated, truncated, info = env.step(TypeAction(text="Par"))
        assert (graded_reward(reward), terminated, truncated, info["status"]) == (None, False, False, "eval_error")
        env.reset(seed=1)  # abandons the episode right after its failed step
    finally:
        env.close()
    [stored] = job.load_trajectories()
    assert (stored.status, stored.reward, stored.metadata["ended_by"]) == ("eval_error", None, "reset")
    assert "evaluator bug" in (stored.error or "") and job.get_analytics().errors == 1


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, 1e300, -0.25, 1.5])
def test_a_reward_that_is_not_finite_or_outside_its_range_is_an_eval_error(value: float) -> None:
    reward, info, job = answer_in_a_job(qa_task(("failing_returns", value)))
    assert math.isnan(reward) and info["status"] == "eval_error", info
    assert info["grade"].is_error and info["grade"].info["bad_reward"] == repr(value)
    assert_stored_as_failed(job, "eval_error")


def test_a_declared_or_task_reward_range_admits_its_rewards() -> None:
    reward, info, _ = answer_in_a_job(qa_task(("failing_signed", -0.5)))
    assert (reward, info["status"]) == (-0.5, "ok")
    reward, info, _ = answer_in_a_job(qa_task(("failing_signed", 1.5)))
    assert (graded_reward(reward), info["status"]) == (None, "eval_error") and "[-1, 1]" in info["error"]
    reward, info, _ = answer_in_a_job(qa_task(("failing_returns", 7.0), reward_range=[0, 10]))
    assert (reward, info["status"]) == (7.0, "ok")
    reward, info, _ = answer_in_a_job(qa_task(("failing_returns", 0.5), reward_range="wide"))
    assert (graded_reward(reward), info["status"]) == (None, "eval_error") and "reward_range" in info["error"]


def test_an_error_grade_such_as_an_invalid_task_regex_is_an_eval_error() -> None:
    reward, info, job = answer_in_a_job(qa_task(("match_regex", "(unclosed")))
    assert math.isnan(reward) and info["status"] == "eval_error" and "invalid regex" in info["error"]
    assert_stored_as_failed(job, "eval_error")
    env = QAEnv(task=qa_task(("match_regex", "(unclosed")))
    try:
        env.reset(seed=0)
        env.step(ResponseAction(text="Paris"))
        grade = env.evaluate()  # called directly: the Grade itself, flagged
        assert grade.is_error and grade.reward == 0.0 and "invalid regex" in (grade.content or "")
    finally:
        env.close()


@pytest.mark.timeout(30)  # Python's re needs minutes for these
def test_catastrophic_task_regexes_finish() -> None:
    # Nested quantifiers: the regex engine answers at once (no match: a graded 0).
    reward, info, _ = answer_in_a_job(qa_task(("match_regex", r"^(a+)+$")), answer="a" * 29 + "!")
    assert (reward, info["status"]) == (0.0, "ok")
    # Overlapping alternatives backtrack exponentially: the match times out, an eval_error.
    reward, info, job = answer_in_a_job(qa_task(("match_regex", r"(a|aa)+$")), answer="a" * 40 + "!")
    assert math.isnan(reward) and info["status"] == "eval_error" and "did not finish matching" in info["error"]
    assert_stored_as_failed(job, "eval_error")


# ---------------------------------------------------------------------- evaluators that hang


def test_a_hanging_sync_evaluator_times_out_while_it_still_hangs() -> None:
    started, release, finished = failing_functions.events("single")
    env = QAEnv(task=qa_task(("failing_hangs", "single")), step_timeout=1.0, job=hud_gym.create_job("hang"))
    try:
        env.reset(seed=0)
        _, reward, terminated, truncated, info = env.step(ResponseAction(text="Paris"))
        # The step came back while the evaluator was still blocked: it did not run on the loop.
        assert started.is_set() and not finished.is_set()
        assert (graded_reward(reward), truncated, info["status"]) == (None, True, "timeout") and "within 1.0 s" in info[
            "error"
        ]
        release.set()
        assert finished.wait(30)
        env.reset(seed=1)  # the controller was restarted; the env goes on
        _, reward, _, _, info = env.step(ResponseAction(text="Paris"))  # released: grades 1 again
        assert (reward, info["status"]) == (1.0, "ok")
    finally:
        release.set()
        env.close()
    job = load_job(env.listeners[0].job_id)
    assert [t.status for t in job.load_trajectories()] == ["timeout", "ok"]
    assert job.get_analytics().error_counts == {"timeout": 1}


def test_a_hanging_evaluator_in_one_sub_env_does_not_block_the_others() -> None:
    started, release, finished = failing_functions.events("vector")
    hanging = qa_task(("failing_hangs", "vector"), "hangs")
    waiting = qa_task(("failing_during_hang", "vector"), "waits")
    space = ActionSpaceConfig().bounded_by(2.0)  # one action space for all (a sampled action fits the shortest step)
    envs = HudVectorEnv(
        [lambda: QAEnv(task=hanging, step_timeout=2.0, action_space_config=space)]
        + [lambda: QAEnv(task=waiting, step_timeout=60.0, action_space_config=space)] * 3
    )
    try:
        envs.reset(seed=0)
        _, rewards, terminated, truncated, infos = envs.step([ResponseAction(text="Paris")] * 4)
        # Envs 1-3 graded while env 0's evaluator was blocked (a rendezvous, not a clock).
        assert failing_functions.SEEN_DURING_HANG["vector"] == [True, True, True]
        assert np.isnan(rewards[0]) and rewards[1:].tolist() == [1.0, 1.0, 1.0]
        assert infos["status"].tolist() == ["timeout", "ok", "ok", "ok"] and truncated.tolist()[0]
        assert not finished.is_set()
    finally:
        release.set()
        envs.close()
    assert finished.wait(30)


def test_a_hanging_isolated_evaluator_has_its_worker_process_killed() -> None:
    pool = get_worker_pool()
    pool.shutdown()
    assert pool.wait_ready(60)  # one worker, started and ready
    [worker] = pool.pids
    killed = pool.killed
    reward, info, job = answer_in_a_job(qa_task(("failing_sleeps", 3600.0)), step_timeout=1.0)
    assert (graded_reward(reward), info["status"]) == (None, "timeout")
    assert_stored_as_failed(job, "timeout")
    assert pool.killed == killed + 1 and worker not in pool.pids
    assert gone(worker)
    reward, info, _ = answer_in_a_job(qa_task(("failing_returns", 1.0)))  # a fresh worker serves the next call
    assert (reward, info["status"]) == (1.0, "ok") and pool.pids and worker not in pool.pids


def test_an_isolated_evaluator_that_kills_its_worker_is_an_eval_error() -> None:
    assert get_worker_pool().wait_ready(60)  # (on a thread, before a worker is ready, it would exit pytest)
    reward, info, job = answer_in_a_job(qa_task("failing_exits"))
    assert math.isnan(reward) and info["status"] == "eval_error"
    assert "WorkerDied" in info["error"] and "exit code 3" in info["error"]
    assert_stored_as_failed(job, "eval_error")
    reward, info, _ = answer_in_a_job(qa_task(("failing_returns", 1.0)))  # the pool goes on
    assert (reward, info["status"]) == (1.0, "ok")


# ---------------------------------------------------------------------- failures outside the env


def test_end_episode_stores_a_failure_from_outside_the_env_at_once() -> None:
    job = hud_gym.create_job("outside")
    env = QAEnv(task=qa_task(("response_includes", "Paris")), job=job)
    try:
        env.end_episode("policy_error", "nothing open yet")  # before any reset: a no-op
        env.reset(seed=0)
        env.step(TypeAction(text="Par"))
        with pytest.raises(ValueError, match="failure status"):
            env.end_episode("ok")
        env.end_episode("policy_error", "the model server is down")
        [stored] = job.load_trajectories()  # stored now, before any other reset or close
        assert (stored.status, stored.reward, stored.error) == ("policy_error", None, "the model server is down")
        with pytest.warns(UserWarning, match="episode ended"):
            _, reward, _, _, info = env.step(TypeAction(text="is"))
        assert info["status"] == "episode_over"
        env.reset(seed=1)  # the failed episode stays failed (not re-ended as truncated by this reset)
    finally:
        env.close()
    assert [t.status for t in job.load_trajectories()] == ["policy_error"]  # the empty episode is dropped


class _Listener:
    """Records the events a listener gets."""

    def __init__(self) -> None:
        self.events: list[str] = []

    async def on_reset(self, env: Any, observation: Any, info: dict[str, Any], options: dict[str, Any]) -> None:
        self.events.append("reset")

    async def on_step(self, env: Any, *args: Any) -> None:
        self.events.append("step")

    async def on_end_episode(self, env: Any, status: str, error: str | None) -> None:
        self.events.append(f"end {status}")

    async def on_close(self, env: Any) -> None:
        self.events.append("close")


def test_a_failed_reset_leaves_no_episode_to_end_or_step() -> None:
    """Found by the fault-injection suite: a pooled env whose reset failed (its browser killed
    during the setup) passed the rollout's ``end_episode("env_error")`` to its listeners, which
    took it for the end of the previous, already graded run."""
    from gymnasium.error import ResetNeeded

    job = hud_gym.create_job("failed reset")
    listener = _Listener()
    env = QAEnv(task=qa_task(("response_includes", "Paris")), job=job)
    env.listeners.insert(0, listener)
    try:
        env.reset(seed=0)
        env.step(TypeAction(text="Par"))  # an episode left open by the failed reset below
        failing = Task(
            prompt="Capital of France?", gym="qa", setup="failing_setup", evaluate=("response_includes", "Paris")
        )
        with pytest.raises(Exception, match="the task's server is gone"):
            env.reset(seed=1, options={"task": failing})
        env.end_episode("env_error", "the reset failed")
        with pytest.raises(ResetNeeded):
            env.step(TypeAction(text="is"))
        assert listener.events == ["reset", "step"]
    finally:
        env.close()
    [stored] = job.load_trajectories()  # the open episode, ended by close, not by the reset's failure
    # never graded (issue 15: an episode closed without a grade is stored ungraded, reward None)
    assert stored.status == "ungraded" and stored.reward is None and stored.metadata["ended_by"] == "close"


# ---------------------------------------------------------------------- vector rows, rollouts


def test_a_failed_row_of_a_vector_env_is_nan_and_the_env_goes_on() -> None:
    good = qa_task(("response_includes", "Paris"), "good")
    envs = HudVectorEnv([lambda: QAEnv(task=good), lambda: QAEnv(task=qa_task("failing_raises", "bad"))])
    try:
        envs.reset(seed=0)
        _, rewards, terminated, _, infos = envs.step([ResponseAction(text="Paris")] * 2)
        assert rewards[0] == 1.0 and np.isnan(rewards[1]) and terminated.all()
        assert infos["status"].tolist() == ["ok", "eval_error"] and "evaluator bug" in infos["error"][1]
        assert "replaced" not in infos  # an evaluator's failure is not the env's: nothing was replaced
        _, rewards, _, _, infos = envs.step([TypeAction(text="x")] * 2)  # NEXT_STEP: both reset
        assert rewards.tolist() == [0.0, 0.0] and infos["status"].tolist() == ["ok", "ok"]
    finally:
        envs.close()


def test_a_rollout_whose_evaluator_fails_has_no_reward_and_no_advantage() -> None:
    import asyncio

    async def policy(observation: dict[str, Any], history: Any, task: Task) -> Any:
        return ResponseAction(text="Paris")

    group = asyncio.run(rollout_group(qa_task(("failing_returns", math.nan)), policy, 2, seed=3))
    assert [(t.status, t.reward) for t in group.trajectories] == [("eval_error", None)] * 2
    assert all(t.failed and t.steps[-1].reward is None for t in group.trajectories)
    assert group_advantages(group.rewards()).tolist() == [0.0, 0.0]


# ---------------------------------------------------------------------- malformed actions


@pytest.mark.parametrize(
    "action",
    [
        {"type": "press", "keys": 5},
        {"type": "press", "keys": True},
        {"type": "press", "keys": 1.5},
        {"type": "keydown", "keys": False},
        {"type": "keyup", "keys": None},
        {"type": "press", "keys": {"a": 1}},
        {"type": "click", "hold_keys": 3},
        {"type": "scroll", "hold_keys": 2.5},
        {"type": "drag", "path": 7},
    ],
)
def test_a_malformed_key_field_is_an_action_error_and_the_episode_goes_on(action: dict[str, Any]) -> None:
    env = QAEnv(task=qa_task(("response_includes", "Paris")))
    try:
        env.reset(seed=0)
        _, reward, terminated, _, info = env.step(action)
        assert (reward, terminated, info["status"]) == (0.0, False, "action_error") and info["action_error"]
        _, reward, _, _, info = env.step(ResponseAction(text="Paris"))
        assert (reward, info["status"]) == (1.0, "ok")
    finally:
        env.close()
    envs = HudVectorEnv([lambda: QAEnv(task=qa_task(("response_includes", "Paris")))] * 2)
    try:
        envs.reset(seed=0)
        first = envs.envs[0]
        _, rewards, _, _, infos = envs.step([action, TypeAction(text="x")])
        assert infos["status"].tolist() == ["action_error", "ok"] and envs.envs[0] is first  # not replaced
    finally:
        envs.close()


# ---------------------------------------------------------------------- SIGKILL after a policy error


@pytest.mark.timeout(120)
def test_a_policy_error_is_stored_before_a_sigkill_can_leave_a_scored_zero(home: Path) -> None:
    script = Path(__file__).parent / "jobs_child_process.py"
    proc = psutil.Popen(
        [sys.executable, str(script), "policy-error"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "HUD_GYM_HOME": str(home)},
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line and json.loads(line) == {"blocked": True}, f"the child exited early with code {proc.poll()}"
        # The second run of the group has reset the pooled env and is mid-episode; the group has not ended.
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
    [job] = list_jobs()
    by_status = {t.status: t for t in job.load_trajectories()}
    assert sorted(by_status) == ["interrupted", "policy_error"]
    failed = by_status["policy_error"]
    assert failed.reward is None and "model server down" in (failed.error or "")
    assert "ended_by" not in failed.metadata and failed.group_id == by_status["interrupted"].group_id
    analytics = job.get_analytics()
    assert analytics.error_counts == {"policy_error": 1, "interrupted": 1} and analytics.scored == 0
    assert analytics.success_rate is None and analytics.per_group[0].rewards == [None, None]
