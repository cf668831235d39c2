"""verifiers adapter: a GRPO group of hud-gym rollouts as verifiers-style ``RolloutOutput`` dicts.

verifiers runs the G rollouts of one example concurrently (``run_group``), scores them with a
``Rubric`` and gives each the advantage ``reward - group mean`` (no std). This builds the same
records from :func:`hud_gym.wrappers.rollout.grpo.rollout_group`, without importing verifiers.

verifiers 0.4 replaced this API (``verifiers.v1``: ``Trace`` records): use
:mod:`hud_gym.wrappers.integrations.verifiers_v1`, tested with the real package. These dicts are
kept for code written against 0.2 and are not checked against a verifiers install.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hud_gym.task import Task
from hud_gym.trajectory import Trajectory
from hud_gym.wrappers.rollout.grpo import group_advantages, rollout_group

__all__ = ["to_rollout_output", "verifiers_group_rollout"]

# Trajectory.status -> verifiers-style stop condition.
_STOP = {"ok": "completed", "truncated": "max_turns_reached", "timeout": "timeout"}


def to_rollout_output(trajectory: Trajectory, *, example_id: Any, advantage: float = 0.0) -> dict[str, Any]:
    """One trajectory as a verifiers-style ``RolloutOutput`` dict (see :func:`verifiers_group_rollout`)."""
    messages = trajectory.to_messages(images=False)
    # Each step adds an assistant turn (its actions) and a user turn (what the env returned).
    steps = [
        {
            "completion": [messages[1 + 2 * i]],
            "reward": step.reward,
            "advantage": advantage,
            "policy_trace": step.policy_trace,
        }
        for i, step in enumerate(trajectory.steps)
    ]
    return {
        "example_id": example_id,
        "prompt": messages[:1],
        "completion": messages[1:],
        "reward": trajectory.reward,
        "advantage": advantage,
        "is_completed": not trajectory.failed,
        "is_truncated": trajectory.status in ("truncated", "timeout"),
        "stop_condition": _STOP.get(trajectory.status, "has_error"),
        "error": trajectory.error,
        "metrics": {"steps": len(trajectory.steps), "duration_s": trajectory.duration_s},
        "trajectory": steps,
    }


async def verifiers_group_rollout(
    task: Task | dict[str, Any] | str,
    policy: Callable[..., Any],
    group_size: int,
    *,
    example_id: Any = None,
    **kwargs: Any,
) -> list[dict[str, Any]]:
    """Run ``group_size`` rollouts of ``task`` (same seed, concurrently) and return verifiers-style
    ``RolloutOutput`` dicts, in rollout order.

    Args:
        task: a Task, a task dict or a ``"<taskset>/<id>"`` reference.
        policy: ``policy(observation, history, task)`` (see :mod:`hud_gym.wrappers.rollout.grpo`).
        group_size: G.
        example_id: the id shared by the group (verifiers' dataset index); the group id when None.
        **kwargs: passed to :func:`rollout_group` (``seed``, ``max_steps``, ``timeout_s``,
            ``max_concurrent``, ``env_kwargs``, ...).

    Each dict has ``example_id``, ``prompt`` (the first user message), ``completion`` (the chat
    messages after it, text only), ``reward`` (``None`` for a failed run), ``advantage``
    (reward minus the mean of the group's scorable rewards; 0 for failed runs), ``is_completed``,
    ``is_truncated``, ``stop_condition`` (``completed``, ``max_turns_reached``, ``timeout`` or
    ``has_error``), ``error``, ``metrics`` (``steps``, ``duration_s``) and ``trajectory`` (per
    step: ``completion``, ``reward``, ``advantage``, ``policy_trace``).
    """
    kwargs.setdefault("keep_observations", False)  # text-only messages: no screenshots to keep
    group = await rollout_group(task, policy, group_size, **kwargs)
    advantages = group_advantages(group.rewards(), scale="none")
    shared_id = group.group_id if example_id is None else example_id
    return [
        to_rollout_output(t, example_id=shared_id, advantage=float(a))
        for t, a in zip(group.trajectories, advantages, strict=True)
    ]
