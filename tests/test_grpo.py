"""GRPO rollouts and advantages on hud/QA-v0."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

from hud_gym import ResponseAction, Task, TypeAction, WaitAction
from hud_gym.trajectory import Trajectory, TrajectoryGroup
from hud_gym.wrappers.rollout.grpo import PolicyOutput, group_advantages, rollout, rollout_group, rollout_groups

pytestmark = pytest.mark.timeout(60)

FRANCE = Task(id="france", prompt="Capital of France?", target="Paris", gym="qa")


def answer(text: str):
    def policy(observation: dict, history: list, task: Task) -> Any:
        return [TypeAction(text=text[: len(history) + 1])] if len(history) < 2 else ResponseAction(text=text)

    return policy


def test_rollout_records_a_trajectory() -> None:
    trajectory = asyncio.run(rollout(FRANCE, answer("Paris"), seed=3))
    assert isinstance(trajectory, Trajectory)
    assert (trajectory.status, trajectory.reward, trajectory.seed, trajectory.task_id) == ("ok", 1.0, 3, "france")
    assert [s.index for s in trajectory.steps] == [0, 1, 2]
    assert trajectory.steps[0].actions == [{"type": "type", "text": "P", "enter_after": False}]
    assert trajectory.step_rewards == [0.0, 0.0, 1.0]
    assert trajectory.final_response == "Paris" and trajectory.grade["reward"] == 1.0
    assert trajectory.steps[1].text.endswith("Answer so far: PPa")
    assert trajectory.duration_s is not None and trajectory.duration_s > 0
    dumped = trajectory.model_dump(mode="json")
    assert "observation" not in dumped["steps"][0]


def test_to_messages_has_image_parts() -> None:
    trajectory = asyncio.run(rollout(FRANCE, answer("Paris"), seed=0))
    messages = trajectory.to_messages()
    assert [m["role"] for m in messages] == ["user"] + ["assistant", "user"] * 3
    assert messages[0]["content"][0] == {"type": "text", "text": "Capital of France?"}
    assert messages[0]["content"][1]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert '"type": "response"' in messages[-2]["content"]
    assert len(trajectory.to_messages(images=False)[0]["content"]) == 1


def test_async_policy_and_policy_trace() -> None:
    async def policy(observation: dict, history: list, task: Task) -> PolicyOutput:
        await asyncio.sleep(0)
        return PolicyOutput(actions=ResponseAction(text="Lyon"), trace={"token_ids": [1, 2, 3], "logprobs": [-0.1]})

    trajectory = asyncio.run(rollout(FRANCE, policy))
    assert (trajectory.status, trajectory.reward) == ("ok", 0.0)
    assert trajectory.steps[0].policy_trace == {"token_ids": [1, 2, 3], "logprobs": [-0.1]}


def test_failures_have_no_reward() -> None:
    def broken(observation: dict, history: list, task: Task) -> Any:
        raise ValueError("model server down")

    failed = asyncio.run(rollout(FRANCE, broken))
    assert (failed.status, failed.reward, failed.failed) == ("policy_error", None, True)
    assert "model server down" in failed.error

    def slow(observation: dict, history: list, task: Task) -> Any:
        return WaitAction(time=400)

    timed_out = asyncio.run(rollout(FRANCE, slow, timeout_s=0.5))
    assert (timed_out.status, timed_out.reward) == ("timeout", None)

    bad_task = Task(prompt="x", gym="qa", evaluate=("no_such_evaluator",))
    env_failed = asyncio.run(rollout(bad_task, answer("x")))
    assert (env_failed.status, env_failed.reward) == ("env_error", None)
    assert "no_such_evaluator" in env_failed.error


def test_truncated_run_is_graded() -> None:
    def never_answers(observation: dict, history: list, task: Task) -> Any:
        return TypeAction(text="Paris"[len(history)] if len(history) < 5 else "")

    trajectory = asyncio.run(rollout(FRANCE, never_answers, max_steps=5))
    assert trajectory.status == "truncated" and len(trajectory.steps) == 5
    assert trajectory.reward == 0.0  # graded on the final step: no response was submitted


def test_rollout_group_shares_seed_and_state_and_runs_concurrently() -> None:
    taskset_task = "qa-basic/mc-ocean"

    # A rendezvous: each rollout's first decision waits until all six rollouts are deciding at
    # once, which a loop of rollouts never reaches (the barrier then times out).
    deciding = 0
    everyone: asyncio.Event | None = None

    async def policy(observation: dict, history: list, task: Task) -> Any:
        nonlocal deciding, everyone
        if history:
            return ResponseAction(text="D")
        everyone = everyone or asyncio.Event()
        deciding += 1
        if deciding == 6:
            everyone.set()
        await asyncio.wait_for(everyone.wait(), timeout=20)
        return WaitAction(time=10)

    group = asyncio.run(rollout_group(taskset_task, policy, group_size=6, seed=42))
    assert isinstance(group, TrajectoryGroup) and len(group.trajectories) == 6
    assert {t.group_id for t in group.trajectories} == {group.group_id}
    assert [t.rollout_index for t in group.trajectories] == list(range(6))
    assert {t.seed for t in group.trajectories} == {42}
    first = group.trajectories[0].initial_observation["screenshot"]
    assert all(np.array_equal(first, t.initial_observation["screenshot"]) for t in group.trajectories)
    assert group.rewards() == [1.0] * 6 and group.is_degenerate()
    assert [t.status for t in group.trajectories] == ["ok"] * 6, [t.error for t in group.trajectories]


def test_rollout_groups_stream_as_completed() -> None:
    slow_task = Task(id="slow", prompt="slow?", target="yes", gym="qa")
    fast_task = Task(id="fast", prompt="fast?", target="yes", gym="qa")

    def policy(observation: dict, history: list, task: Task) -> Any:
        if task.id == "slow" and not history:
            return WaitAction(time=500)
        return ResponseAction(text="yes")

    async def collect() -> list[str]:
        return [g.task.id async for g in rollout_groups([slow_task, fast_task], policy, group_size=2, max_concurrent=4)]

    assert asyncio.run(collect()) == ["fast", "slow"]


def test_rollout_groups_with_a_seed_per_task_and_a_wrong_number_of_seeds() -> None:
    tasks = [FRANCE, Task(id="two", prompt="1+1?", target="2", gym="qa")]

    async def collect(seeds: list[int]) -> list[TrajectoryGroup]:
        return [g async for g in rollout_groups(tasks, answer("Paris"), group_size=1, seeds=seeds)]

    groups = asyncio.run(collect([4, 5]))
    assert sorted((g.task.id, g.seed) for g in groups) == [("france", 4), ("two", 5)]
    with pytest.raises(ValueError, match="got 1 seeds for 2 tasks"):
        asyncio.run(collect([4]))  # it dropped the second task without a word before


def test_group_advantages_golden_numbers() -> None:
    # ART / TRL async: population std, eps 1e-6.
    np.testing.assert_allclose(
        group_advantages([1, 0, 0, 1]), [0.999998000004, -0.999998000004, -0.999998000004, 0.999998000004]
    )
    np.testing.assert_allclose(
        group_advantages([0.2, 0.9, 0.4]), [-1.0190458692034328, 1.3587278256045772, -0.33968195640114424]
    )
    # TRL GRPOTrainer: sample std (ddof=1), eps 1e-4.
    np.testing.assert_allclose(
        group_advantages([1, 0, 0, 1], ddof=1, eps=1e-4),
        [0.8658754297607016, -0.8658754297607016, -0.8658754297607016, 0.8658754297607016],
    )
    np.testing.assert_allclose(
        group_advantages([0.2, 0.9, 0.4], ddof=1, eps=1e-4),
        [-0.8318195890931966, 1.1090927854575956, -0.27727319636439884],
    )
    # verifiers: mean only.
    np.testing.assert_allclose(group_advantages([1, 0, 0], scale="none"), [2 / 3, -1 / 3, -1 / 3])


def test_group_advantages_edge_cases() -> None:
    assert group_advantages([1, 1, 1]).tolist() == [0, 0, 0]
    assert group_advantages([0.5]).tolist() == [0]
    assert group_advantages([None, None]).tolist() == [0, 0]
    # A failed run is left out of the statistics and gets 0.
    np.testing.assert_allclose(group_advantages([1, None, 0, float("nan")]), [0.999998000004, 0, -0.999998000004, 0])
    assert group_advantages([1, None], ddof=1).tolist() == [0, 0]
    group = TrajectoryGroup(
        trajectories=[Trajectory(reward=1.0), Trajectory(reward=None, status="env_error"), Trajectory(reward=0.0)]
    )
    np.testing.assert_allclose(group.advantages(), [0.999998000004, 0, -0.999998000004])
    assert not group.is_degenerate()


def test_rollout_group_with_a_pool_reuses_warm_envs() -> None:
    from hud_gym.wrappers.rollout.pool import EnvPool

    def policy(observation: dict, history: list, task: Task) -> Any:
        # Each rollout sees a clean answer box: nothing typed by an earlier lease survives reset.
        assert observation["text"].endswith("Answer so far: ") or history
        return TypeAction(text="Par") if not history else ResponseAction(text="Paris")

    async def main() -> tuple[list, list, int]:
        async with EnvPool(size=3) as pool:
            first = await rollout_group(FRANCE, policy, 6, seed=1, pool=pool)
            second = await rollout_group(FRANCE, policy, 6, seed=2, pool=pool)
            return first.rewards(), second.rewards(), pool.envs

    first, second, envs = asyncio.run(main())
    assert first == [1.0] * 6 and second == [1.0] * 6
    assert envs == 3  # never more than the pool's size, reused across both groups
