"""The stored reward is the graded reward (issue 15): whatever grade was last obtained for an
episode (``env.evaluate()``, its final step, ``evaluate()`` after that step) is what the job's
SQLite store keeps as the trajectory's reward and status; an episode closed without any grade is
stored ``ungraded`` with ``reward=None``, never 0. Single, vector and pooled envs and ``run_job``,
on the counter gym (``tests/counter_gym.py``) with a real store in a temporary HUD_GYM_HOME."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

import counter_gym  # noqa: F401  (registers test/Counter-v0 and its functions)
import failing_functions  # noqa: F401  (registers failing_raises)
import pytest

import hud_gym
from hud_gym import ClickAction, ResponseAction, Task
from hud_gym.jobs import load_job, run_job
from hud_gym.trajectory import Trajectory
from hud_gym.wrappers.rollout.pool import EnvPool
from hud_gym.wrappers.vector import HudVectorEnv

CLICK = ClickAction(point={"x": 1, "y": 1})
TWO = Task(id="two", prompt="Click twice.", gym="counter", evaluate=[("count_is", 2)])
THREE = Task(id="three", prompt="Click three times.", gym="counter", evaluate=[("count_is", 3)])


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HUD_GYM_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def stored(job_id: str) -> list[Trajectory]:
    """The job's trajectories as a fresh load from the store reads them."""
    return load_job(job_id).load_trajectories()


def test_evaluate_then_close_stores_the_grade_not_a_truncated_zero() -> None:
    job = hud_gym.create_job("evaluate-then-close")
    env = hud_gym.make(TWO, job=job)
    env.reset(seed=0)
    env.step(CLICK)
    env.step(CLICK)
    grade = env.evaluate()
    env.close()
    [trajectory] = stored(job.id)
    assert grade.reward == 1.0 and not grade.is_error
    assert (trajectory.status, trajectory.reward) == ("ok", 1.0)
    assert trajectory.grade is not None and trajectory.grade["reward"] == 1.0
    assert trajectory.metadata["ended_by"] == "close" and len(trajectory.steps) == 2


def test_the_last_grade_wins_and_a_zero_grade_is_a_real_zero() -> None:
    job = hud_gym.create_job("last-grade")
    env = hud_gym.make(TWO, job=job)
    env.reset(seed=0)
    env.step(CLICK)
    env.step(CLICK)
    assert env.evaluate().reward == 1.0
    env.step(CLICK)  # three now: an ungraded step does not replace the grade
    env.reset(seed=1)  # the first episode ends graded 1.0
    env.step(CLICK)
    assert env.evaluate().reward == 0.0  # graded 0: stored as 0, not as ungraded
    env.close()
    first, second = sorted(stored(job.id), key=lambda t: t.seed or 0)
    assert (first.status, first.reward, first.metadata["ended_by"]) == ("ok", 1.0, "reset")
    assert (second.status, second.reward, second.grade is not None) == ("ok", 0.0, True)


def test_closed_without_any_grade_is_ungraded_with_no_reward() -> None:
    job = hud_gym.create_job("ungraded")
    env = hud_gym.make(TWO, job=job)
    env.reset(seed=0)
    _, reward, terminated, truncated, _ = env.step(CLICK)
    assert (reward, terminated, truncated) == (0.0, False, False)  # the step itself is not graded
    env.close()
    [trajectory] = stored(job.id)
    assert (trajectory.status, trajectory.reward, trajectory.grade) == ("ungraded", None, None)
    assert "before any grade" in (trajectory.error or "")
    analytics = job.get_analytics()
    assert analytics.mean_reward is None and analytics.error_counts == {"ungraded": 1}


def test_a_graded_episode_with_no_step_is_kept_and_an_ungraded_one_is_dropped() -> None:
    job = hud_gym.create_job("no-step")
    env = hud_gym.make(Task(prompt="Nothing to do.", gym="counter", evaluate=[("count_is", 0)]), job=job)
    env.reset(seed=0)
    assert env.evaluate().reward == 1.0  # HUD's make, evaluate, close with no step
    env.reset(seed=1)  # no step, no grade: dropped
    env.close()
    [trajectory] = stored(job.id)
    assert (trajectory.seed, trajectory.status, trajectory.reward, trajectory.steps) == (0, "ok", 1.0, [])


def test_evaluate_after_the_final_step_updates_the_stored_outcome() -> None:
    job = hud_gym.create_job("after-final")
    env = hud_gym.make(TWO, job=job)
    env.reset(seed=0)
    env.step(CLICK)
    _, reward, terminated, _, _ = env.step(ResponseAction(text="done"))  # graded: count 1, not 2
    assert (reward, terminated) == (0.0, True)
    assert stored(job.id)[0].reward == 0.0
    env.controller.count = 2  # type: ignore[union-attr]  (the state the next grade reads)
    assert env.evaluate().reward == 1.0
    env.close()
    [trajectory] = stored(job.id)
    assert (trajectory.status, trajectory.reward, trajectory.final_response) == ("ok", 1.0, "done")


def test_an_error_grade_from_evaluate_is_stored_as_eval_error_with_no_reward() -> None:
    job = hud_gym.create_job("error-grade")
    env = hud_gym.make(Task(prompt="p", gym="counter", evaluate=["failing_raises"]), job=job)
    env.reset(seed=0)
    env.step(CLICK)
    grade = env.evaluate()
    env.close()
    [trajectory] = stored(job.id)
    assert grade.is_error and "evaluator bug" in (grade.content or "")
    assert (trajectory.status, trajectory.reward) == ("eval_error", None)
    assert "evaluator bug" in (trajectory.error or "")


def test_vector_env_evaluate_then_close() -> None:
    job = hud_gym.create_job("vector")
    envs = HudVectorEnv([lambda: hud_gym.make(TWO, job=job).unwrapped] * 2)
    try:
        envs.reset(seed=0)
        envs.step([CLICK, CLICK])
        envs.step([CLICK, CLICK])
        grades = envs.call("evaluate")
    finally:
        envs.close()
    assert [g.reward for g in grades] == [1.0, 1.0]
    trajectories = stored(job.id)
    assert sorted((t.status, t.reward) for t in trajectories) == [("ok", 1.0), ("ok", 1.0)]


def test_vector_env_closed_mid_episode_is_ungraded_never_zero() -> None:
    job = hud_gym.create_job("vector-ungraded")
    envs = HudVectorEnv([lambda: hud_gym.make(TWO, job=job).unwrapped] * 2)
    try:
        envs.reset(seed=0)
        _, rewards, _, _, _ = envs.step([CLICK, CLICK])
        assert list(rewards) == [0.0, 0.0]  # per-step rewards stay Gymnasium's
    finally:
        envs.close()
    rows = stored(job.id)
    assert [(t.status, t.reward) for t in rows] == [("ungraded", None)] * 2


def test_pooled_env_evaluate_then_release() -> None:
    job = hud_gym.create_job("pooled")

    async def main() -> list[float]:
        rewards = []
        async with EnvPool(1, job=job) as pool:
            for task in (TWO, THREE):
                async with pool.lease(task) as env:
                    await env.areset(seed=0, options={"task": task})
                    await env.astep(CLICK)
                    await env.astep(CLICK)
                    rewards.append((await env.aevaluate()).reward)
        return rewards

    assert asyncio.run(main()) == [1.0, 0.0]
    rows = {t.task_id: t for t in stored(job.id)}
    assert (rows["two"].status, rows["two"].reward) == ("ok", 1.0)
    assert (rows["three"].status, rows["three"].reward) == ("ok", 0.0)
    assert rows["three"].grade is not None


def test_run_job_stores_each_runs_grade() -> None:
    def click(observation: Any, history: Any, task: Task) -> Any:
        return CLICK

    job = run_job(click, [TWO, THREE], "graded", max_steps=2, group_size=2, seed=0)
    rows = stored(job.id)
    by_task = {(t.task_id, t.rollout_index): t for t in rows}
    assert len(by_task) == 4
    for index in (0, 1):
        two, three = by_task[("two", index)], by_task[("three", index)]
        assert (two.status, two.reward, two.grade and two.grade["reward"]) == ("truncated", 1.0, 1.0)
        assert (three.status, three.reward, three.grade is not None) == ("truncated", 0.0, True)
    assert not any(t.reward is not None and math.isnan(t.reward) for t in rows)
