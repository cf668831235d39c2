"""``hud_gym.advantages.group_advantages``: the one definition the trajectory groups and the GRPO
rollouts share."""

from __future__ import annotations

import numpy as np
import pytest

from hud_gym.advantages import group_advantages
from hud_gym.trajectory import Trajectory, TrajectoryGroup


def test_golden_numbers_of_the_trainers() -> None:
    # ART / TRL async: population std, eps 1e-6; TRL GRPOTrainer: sample std, eps 1e-4; verifiers: mean only.
    np.testing.assert_allclose(
        group_advantages([0.2, 0.9, 0.4]), [-1.0190458692034328, 1.3587278256045772, -0.33968195640114424]
    )
    np.testing.assert_allclose(
        group_advantages([1, 0, 0, 1], ddof=1, eps=1e-4),
        [0.8658754297607016, -0.8658754297607016, -0.8658754297607016, 0.8658754297607016],
    )
    np.testing.assert_allclose(group_advantages([1, 0, 0], scale="none"), [2 / 3, -1 / 3, -1 / 3])
    with pytest.raises(ValueError, match="scale"):
        group_advantages([1, 0], scale="rank")  # type: ignore[arg-type]


def test_a_group_of_trajectories_uses_it_and_failed_runs_get_zero() -> None:
    group = TrajectoryGroup(
        trajectories=[Trajectory(reward=1.0), Trajectory(reward=None, status="env_error"), Trajectory(reward=0.0)]
    )
    np.testing.assert_allclose(group.advantages(), [0.999998000004, 0.0, -0.999998000004])
    np.testing.assert_allclose(group.advantages(scale="none"), [0.5, 0.0, -0.5])


def test_the_grpo_wrappers_give_the_same_advantages() -> None:
    from hud_gym.wrappers.rollout import grpo

    for rewards in ([1, 0, 0, 1], [0.2, None, 0.9, float("nan")], [1, 1], []):
        np.testing.assert_array_equal(grpo.group_advantages(rewards), group_advantages(rewards))
