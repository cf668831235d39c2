"""Jobs: register_job, create_job, make(job=...), load_job, list_jobs, analytics and run_job,
against real QA envs (and one browser job), with the store in a temporary HUD_GYM_HOME."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from PIL import Image
from private_mounts import REASON, can_mount, run_on_tmpfs

import hud_gym
from hud_gym import ResponseAction, Task, TypeAction
from hud_gym.envs.qa import QAEnv
from hud_gym.jobs import Job, JobAnalytics, arun_job, current_job, list_jobs, load_job
from hud_gym.trajectory import Trajectory, TrajectoryStep
from hud_gym.wrappers.vector import HudVectorEnv


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HUD_GYM_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def _answer(env: gymnasium.Env, answer: str, seed: int = 0) -> float:
    env.reset(seed=seed)
    return env.step(ResponseAction(text=answer))[1]


class _CrashingQAEnv(QAEnv):
    """A QA env whose step raises on the answer 'crash' (the vector env then replaces it)."""

    async def astep(self, action: Any):  # type: ignore[override]
        if isinstance(action, ResponseAction) and action.text == "crash":
            raise RuntimeError("injected crash")
        return await super().astep(action)


def test_a_replaced_sub_env_stays_linked_to_the_job(home: Path) -> None:
    france = Task(id="france", prompt="Capital of France?", target="Paris", gym="qa")

    @hud_gym.register_job("vector-crash")
    def play() -> Job:
        envs = HudVectorEnv([lambda: _CrashingQAEnv(task=france)] * 2)
        try:
            envs.reset(seed=0)
            envs.step([ResponseAction(text="crash"), ResponseAction(text="Paris")])
            assert envs.envs[0].listeners, "the replacement env is not linked to the job"
            envs.step([TypeAction(text="a"), TypeAction(text="b")])  # both autoreset (NEXT_STEP)
            envs.step([ResponseAction(text="Paris"), ResponseAction(text="Paris")])
        finally:
            envs.close()
        job = current_job()
        assert job is not None
        return job

    job = play()
    # The crashed episode had no step to keep; the replacement's episode and env 1's two are stored.
    assert sorted(t.reward for t in job.load_trajectories()) == [1.0, 1.0, 1.0]


# ---------------------------------------------------------------------- register_job


def test_register_job_makes_a_job_per_call_and_links_envs(home: Path) -> None:
    @hud_gym.register_job("sync-eval", metadata={"agent_version": "1.1"})
    def evaluate(answer: str) -> Job:
        job = current_job()
        assert job is not None
        made = hud_gym.make("qa-basic/capital-france")
        _answer(made, answer)
        made.close()
        gym_env = gymnasium.make("hud/QA-v0", task="qa-basic/capital-france")
        _answer(gym_env, answer, seed=1)
        gym_env.close()
        return job

    first, second = evaluate("Paris"), evaluate("Lyon")
    assert current_job() is None
    assert first.id != second.id and first.name == second.name == "sync-eval"
    assert first.metadata == {"agent_version": "1.1"} and first.created_at <= second.created_at
    assert first.status == second.status == "completed"
    assert [t.reward for t in first.load_trajectories()] == [1.0, 1.0]
    assert [t.reward for t in second.load_trajectories()] == [0.0, 0.0]
    assert all(t.job_id == first.id and t.task_id == "capital-france" for t in first.load_trajectories())


def test_register_job_on_an_async_function(home: Path) -> None:
    @hud_gym.register_job("async-eval")
    async def evaluate() -> Job:
        env = hud_gym.make("qa-basic/capital-france")
        await env.unwrapped.areset(seed=0)
        await env.unwrapped.astep(TypeAction(text="P"))
        await env.unwrapped.astep(ResponseAction(text="Paris"))
        await env.unwrapped.aclose()
        job = current_job()
        assert job is not None
        return job

    job = asyncio.run(evaluate())
    assert job.status == "completed"
    [trajectory] = job.load_trajectories()
    assert trajectory.status == "ok" and trajectory.reward == 1.0 and trajectory.final_response == "Paris"
    assert [s.actions for s in trajectory.steps] == [
        [{"type": "type", "text": "P", "enter_after": False}],
        [{"type": "response", "text": "Paris"}],
    ]


def test_a_raising_job_function_fails_the_job_and_keeps_its_runs(home: Path) -> None:
    @hud_gym.register_job("crashing")
    def evaluate() -> None:
        env = hud_gym.make("qa-basic/capital-france")
        _answer(env, "Paris")
        env.close()
        raise RuntimeError("agent exploded")

    with pytest.raises(RuntimeError, match="agent exploded"):
        evaluate()
    [job] = list_jobs()
    assert job.status == "failed" and job.error == "RuntimeError: agent exploded"
    assert [t.reward for t in job.load_trajectories()] == [1.0]


def test_envs_made_outside_a_job_record_nothing(home: Path) -> None:
    env = hud_gym.make("qa-basic/capital-france")
    assert env.unwrapped.listeners == []
    _answer(env, "Paris")
    env.close()
    assert list_jobs() == []


# ---------------------------------------------------------------------- create_job / load_job


def test_create_job_and_make_with_job_record_every_step(home: Path) -> None:
    job = hud_gym.create_job("manual-job", {"k": [1, 2]})
    env = hud_gym.make("qa-basic/capital-france", job=job)
    env.reset(seed=3)
    env.step(TypeAction(text="Pa"))
    env.step({"type": "press", "keys": ["Shift"]})
    env.step(ResponseAction(text="Paris"))
    env.close()

    loaded = load_job(job.id[:8])
    assert (loaded.id, loaded.name, loaded.metadata, loaded.created_at) == (
        job.id,
        "manual-job",
        {"k": [1, 2]},
        job.created_at,
    )
    assert loaded.status == "running"  # a created job runs until finished (or its process exits)
    [trajectory] = loaded.load_trajectories()
    assert trajectory.seed == 3 and trajectory.prompt == "What is the capital of France?"
    assert trajectory.task is not None and trajectory.task.id == "capital-france"
    assert [s.index for s in trajectory.steps] == [0, 1, 2]
    assert trajectory.steps[1].actions == [{"type": "press", "keys": ["shift"]}]
    assert [s.reward for s in trajectory.steps] == [0.0, 0.0, 1.0] and trajectory.steps[2].terminated
    assert all(s.ended_at and s.started_at <= s.ended_at and s.timings["total"] > 0 for s in trajectory.steps)
    assert trajectory.duration_s is not None and trajectory.duration_s > 0
    initial = np.asarray(Image.open(trajectory.metadata["initial_observation_ref"]))
    assert initial.shape == (720, 1280, 3)
    assert all(Path(s.observation_ref).suffix == ".jpg" for s in trajectory.steps)
    loaded.finish()
    assert loaded.status == "completed" and loaded.ended_at is not None


def test_job_as_a_context_manager_links_envs_and_finishes(home: Path) -> None:
    with hud_gym.create_job("block") as job:
        env = gymnasium.make("hud/QA-v0", task="qa-basic/capital-france")
        _answer(env, "Paris")
        env.close()
    assert job.status == "completed" and len(job.load_trajectories()) == 1
    with pytest.raises(ValueError, match="boom"), hud_gym.create_job("block-2") as failing:
        raise ValueError("boom")
    assert failing.status == "failed" and failing.error == "ValueError: boom"


def test_a_job_id_string_links_an_env_and_bad_jobs_are_refused(home: Path) -> None:
    job = hud_gym.create_job("by-id")
    env = gymnasium.make("hud/QA-v0", task="qa-basic/capital-france", job=job.id)
    _answer(env, "Paris")
    env.close()
    assert len(job.load_trajectories()) == 1
    with pytest.raises(KeyError, match="no job with id 'nope'"):
        gymnasium.make("hud/QA-v0", job="nope")
    with pytest.raises(TypeError, match="job must be a hud_gym Job or a job id"):
        gymnasium.make("hud/QA-v0", job=3)
    with pytest.raises(ValueError, match="non-empty name"):
        hud_gym.create_job("  ")


def test_an_abandoned_ungraded_episode_is_stored_ungraded_and_an_empty_one_is_dropped(home: Path) -> None:
    job = hud_gym.create_job("abandon")
    env = hud_gym.make("qa-basic/capital-france", job=job)
    env.reset(seed=0)
    env.step(TypeAction(text="x"))
    env.reset(seed=1)  # ends the first episode
    env.reset(seed=2)  # the second had no step: dropped
    env.close()
    [trajectory] = job.load_trajectories()
    assert (trajectory.status, trajectory.reward, trajectory.metadata["ended_by"]) == ("ungraded", None, "reset")
    assert trajectory.seed == 0 and len(trajectory.steps) == 1


def test_list_jobs_newest_first_with_a_limit(home: Path) -> None:
    jobs = [hud_gym.create_job(f"job-{i}") for i in range(3)]
    assert [j.id for j in list_jobs()] == [j.id for j in reversed(jobs)]
    assert [j.name for j in list_jobs(limit=2)] == ["job-2", "job-1"]


def test_async_variants(home: Path) -> None:
    async def main() -> tuple[Job, list[Trajectory], JobAnalytics]:
        job = await hud_gym.jobs.acreate_job("async-api")
        again = await hud_gym.jobs.aload_job(job.id)
        return again, await again.aload_trajectories(), await again.aget_analytics()

    job, trajectories, analytics = asyncio.run(main())
    assert job.name == "async-api" and trajectories == [] and analytics.trajectories == 0
    assert analytics.success_rate is None and analytics.mean_reward is None


# ---------------------------------------------------------------------- vector envs


def test_a_vector_env_inside_a_job_records_every_sub_env(home: Path) -> None:
    @hud_gym.register_job("vector")
    def evaluate() -> Job:
        envs = gymnasium.make_vec("hud/QA-v0", num_envs=4, task="qa-basic/capital-france")
        envs.reset(seed=[7, 7, 8, 8])
        answers = [ResponseAction(text=a) for a in ("Paris", "Rome", "Paris", "Paris")]
        for _ in range(3):  # answer, autoreset, answer
            envs.step(answers)
        envs.close()
        job = current_job()
        assert job is not None
        return job

    job = evaluate()
    trajectories = job.load_trajectories()
    assert len(trajectories) == 8 and len({t.trajectory_id for t in trajectories}) == 8
    assert sorted(t.reward for t in trajectories) == [0.0, 0.0] + [1.0] * 6
    assert all(len(t.steps) == 1 and Path(t.steps[0].observation_ref).is_file() for t in trajectories)
    assert job.get_analytics().success_rate == 0.75


# ---------------------------------------------------------------------- analytics


def test_analytics_figures(home: Path) -> None:
    job = hud_gym.create_job("figures")
    outcomes: list[tuple[str, str, float | None, int, str | None]] = [
        ("a", "ok", 1.0, 2, "g1"),
        ("a", "ok", 0.0, 4, "g1"),
        ("a", "policy_error", None, 1, "g1"),
        ("b", "truncated", 0.5, 6, None),
        ("b", "env_error", None, 3, None),
        ("b", "ok", 1.0, 1, None),
    ]
    for index, (task_id, status, reward, steps, group) in enumerate(outcomes):
        trajectory = Trajectory(task_id=task_id, status=status, reward=reward, group_id=group, rollout_index=index)
        trajectory.steps = [TrajectoryStep(index=i) for i in range(steps)]
        trajectory.ended_at = trajectory.started_at + (index + 1) * (
            trajectory.started_at - trajectory.started_at + _seconds(1)
        )
        job.add_trajectory(trajectory)
    analytics = job.get_analytics()
    assert analytics.model_dump()["job_id"] == job.id
    assert (analytics.trajectories, analytics.finished, analytics.scored, analytics.errors) == (6, 6, 4, 2)
    assert analytics.successes == 2 and analytics.success_rate == 0.5
    assert analytics.mean_reward == pytest.approx(2.5 / 4)
    assert analytics.error_counts == {"policy_error": 1, "env_error": 1}
    assert analytics.status_counts == {"ok": 3, "truncated": 1, "policy_error": 1, "env_error": 1}
    assert analytics.steps_total == 17 and analytics.steps_mean == pytest.approx(17 / 6)
    assert analytics.duration.count == 6 and analytics.duration.mean_s == pytest.approx(3.5)
    assert analytics.duration.p50_s == pytest.approx(3.5) and analytics.duration.p95_s == pytest.approx(5.75)
    per_task = {t.task_id: t for t in analytics.per_task}
    assert (per_task["a"].runs, per_task["a"].errors, per_task["a"].success_rate) == (3, 1, 0.5)
    assert per_task["a"].mean_reward == 0.5 and per_task["a"].mean_steps == pytest.approx(7 / 3)
    assert per_task["b"].mean_reward == pytest.approx(0.75) and per_task["b"].success_rate == 0.5
    [group] = analytics.per_group
    assert group.group_id == "g1" and group.task_id == "a" and group.rewards == [1.0, 0.0, None]
    assert group.mean == 0.5 and group.std == 0.5 and group.successes == 1
    assert job.get_analytics(success_threshold=0.5).successes == 3


def _seconds(n: float) -> Any:
    from datetime import timedelta

    return timedelta(seconds=n)


# ---------------------------------------------------------------------- run_job

ANSWERS = {"capital-france": "Paris", "capital-japan": "Tokyo", "largest-planet": "Saturn"}
TASKS = [f"qa-basic/{task_id}" for task_id in ANSWERS]


def _policy(observation: dict[str, Any], history: list[TrajectoryStep], task: Task) -> Any:
    if task.id == "capital-japan" and not history:
        return TypeAction(text="thinking")
    return ResponseAction(text=ANSWERS[task.id or ""])


def test_run_job_runs_every_task_in_groups(home: Path) -> None:
    seen: list[Trajectory] = []
    job = hud_gym.run_job(
        _policy,
        [hud_gym.get_task(t) for t in TASKS],
        "qa-run",
        group_size=3,
        max_concurrent=4,
        seed=10,
        metadata={"agent": "scripted"},
        on_trajectory=seen.append,
    )
    assert job.status == "completed" and job.name == "qa-run"
    assert job.metadata["agent"] == "scripted" and job.metadata["run"]["group_size"] == 3
    trajectories = job.load_trajectories()
    assert len(trajectories) == len(seen) == 9
    assert {t.trajectory_id for t in trajectories} == {t.trajectory_id for t in seen}
    by_group: dict[str, list[Trajectory]] = {}
    for trajectory in trajectories:
        assert trajectory.group_id is not None
        by_group.setdefault(trajectory.group_id, []).append(trajectory)
    assert len(by_group) == 3
    for group in by_group.values():
        assert len({t.task_id for t in group}) == 1 and len({t.seed for t in group}) == 1
        assert sorted(t.rollout_index for t in group) == [0, 1, 2]
    japan = [t for t in trajectories if t.task_id == "capital-japan"]
    assert all(len(t.steps) == 2 and t.reward == 1.0 for t in japan)
    analytics = job.get_analytics()
    assert analytics.success_rate == pytest.approx(6 / 9) and analytics.errors == 0
    assert {g.task_id: g.rewards for g in analytics.per_group}["largest-planet"] == [0.0, 0.0, 0.0]
    assert {t.task_id: t.seed for t in trajectories} == {
        "capital-france": 10,
        "capital-japan": 11,
        "largest-planet": 12,
    }


def test_run_job_stores_crashed_runs_and_keeps_going(home: Path) -> None:
    def flaky(observation: dict[str, Any], history: list[TrajectoryStep], task: Task) -> Any:
        if task.id == "capital-japan":
            raise RuntimeError("model server down")
        return ResponseAction(text=ANSWERS[task.id or ""])

    job = hud_gym.run_job(flaky, TASKS, "flaky", group_size=2, max_concurrent=2, max_steps=3)
    assert job.status == "completed"
    failed = job.load_trajectories(status="policy_error")
    assert len(failed) == 2 and all("model server down" in (t.error or "") and t.reward is None for t in failed)
    analytics = job.get_analytics()
    assert analytics.errors == 2 and analytics.error_counts == {"policy_error": 2}
    assert analytics.scored == 4 and analytics.success_rate == 0.5 and analytics.mean_reward == 0.5


class _QAAgent:
    """An agent in the ``hud_gym.agents`` form: ``reset()`` and ``act(observation, info)``."""

    def __init__(self) -> None:
        self.resets = 0

    def reset(self) -> None:
        self.resets += 1

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> list[Any]:
        prompt = info.get("prompt") or ""
        return [ResponseAction(text="Paris" if "France" in prompt else "no idea")]


def test_arun_job_with_an_agent_object_and_an_async_progress_callback(home: Path) -> None:
    agent = _QAAgent()
    progress: list[str] = []

    async def on_trajectory(trajectory: Trajectory) -> None:
        progress.append(trajectory.trajectory_id)

    async def main() -> Job:
        return await arun_job(agent, TASKS[:2], "agent-run", group_size=2, on_trajectory=on_trajectory)

    job = asyncio.run(main())
    assert agent.resets == 4 and len(progress) == 4
    assert sorted(t.reward for t in job.load_trajectories()) == [0.0, 0.0, 1.0, 1.0]


def test_run_job_refuses_bad_arguments(home: Path) -> None:
    with pytest.raises(TypeError, match="policy callable"):
        hud_gym.run_job(42, TASKS, "bad")
    with pytest.raises(ValueError, match="group_size"):
        hud_gym.run_job(_policy, TASKS, "bad", group_size=0)
    with pytest.raises(ValueError, match="env_kwargs must not contain 'job'"):
        hud_gym.run_job(_policy, TASKS, "bad", env_kwargs={"job": "x"})
    with pytest.raises(ValueError, match="empty task set"):
        hud_gym.run_job(_policy, [], "bad")
    assert list_jobs() == []


# ---------------------------------------------------------------------- a browser job


@pytest.mark.e2e
@pytest.mark.timeout(120)
def test_a_browser_job_stores_screenshots_as_files(home: Path) -> None:
    pytest.importorskip("miniwob")
    from hud_gym.agents import MiniWoBScriptedAgent
    from hud_gym.controllers.browser.chromium import ChromiumNotFoundError, find_chromium
    from hud_gym.suites.miniwob import MINIWOB_TASK_AREA

    try:
        find_chromium()
    except ChromiumNotFoundError as exc:
        pytest.skip(str(exc))
    job = hud_gym.run_job(
        MiniWoBScriptedAgent(),
        ["miniwob/click-test-2", "miniwob/enter-text"],
        "miniwob",
        group_size=2,
        max_concurrent=2,
        seed=0,
        max_steps=3,
        env_kwargs={"elements": True, "observation_crop": MINIWOB_TASK_AREA, "screen_size": (500, 320)},
    )
    trajectories = job.load_trajectories()
    assert len(trajectories) == 4 and all(t.status == "ok" and t.reward == 1.0 for t in trajectories)
    for trajectory in trajectories:
        assert trajectory.metadata["gym"] == "browser"
        for ref in [trajectory.metadata["initial_observation_ref"], *(s.observation_ref for s in trajectory.steps)]:
            path = Path(ref)
            assert path.is_file() and path.is_relative_to(home / "images" / job.id)
            image = np.asarray(Image.open(path))
            assert image.shape == (210, 160, 3) and image.std() > 0  # a rendered page, not a blank frame
        assert trajectory.steps[-1].actions[0]["type"] == "click"


@pytest.mark.skipif(not can_mount(), reason=REASON)
@pytest.mark.timeout(180)
def test_a_full_disk_leaves_no_run_running_and_no_reward(tmp_path: Path) -> None:
    """A real job on a 2 MiB tmpfs fills it with screenshots; read while its writer is alive, and
    from another process: no row is left ``running``, the runs that could not be recorded are
    ``record_error`` with no reward (counted as errors), and the job has a final status."""
    mount = tmp_path / "disk"
    mount.mkdir()
    child = Path(__file__).with_name("full_disk_child.py")
    process = run_on_tmpfs(
        mount, "2m", [sys.executable, str(child), "write"], timeout=150, env={**os.environ, "HUD_GYM_HOME": str(mount)}
    )
    assert process.returncode == 0, process.stderr[-3000:]
    written, read = (json.loads(line) for line in process.stdout.strip().splitlines()[-2:])
    statuses = [row["status"] for row in written["rows"]]
    assert "running" not in statuses, statuses
    failed = [row for row in written["rows"] if row["status"] == "record_error"]
    assert failed and all(row["reward"] is None and "No space left" in row["error"] for row in failed)
    assert written["job"]["status"] in ("completed", "failed")
    assert "could not be recorded whole (status record_error)" in written["job"]["error"]
    assert read["status"] == written["job"]["status"] and "running" not in read["status_counts"]
    assert read["error_counts"]["record_error"] == len(failed) and read["errors"] >= len(failed)
