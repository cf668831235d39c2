"""verifiers >= 0.4 adapter: hud-gym rollouts as ``verifiers.v1.Trace`` records.

verifiers 0.4 (``import verifiers.v1 as vf``) records each rollout as a ``Trace``: its messages
(a graph of ``MessageNode``), its ``rewards`` (name -> ``Reward``), ``ok``, ``errors`` (``Error``:
type, message, traceback), ``stop_condition``, ``is_timeout`` and ``timing`` (``Timing`` spans).
Its scoring rule: a trace that is not ``ok`` carries its errors and is left out of the reward
means (``trace.reward`` of an errored trace is never a score). This module follows that rule,
so a failed hud-gym run (``reward=None``) is an errored trace, never a reward of 0 or ``None``:

==============  ===================================================================
hud-gym status  verifiers trace
==============  ===================================================================
ok              ``ok``, ``rewards={"hud": Reward(score=reward)}``, ``agent_completed``
truncated       the same, ``stop_condition="max_turns"`` (the step limit is graded)
env_error       not ``ok``, ``errors=[Error(type="SandboxError")]``, ``sandbox_error``
eval_error      not ``ok``, ``TaskError`` (the task's reward code failed), ``task_error``
policy_error    not ``ok``, ``ProviderError`` (the model call failed), ``provider_error``
timeout         not ``ok``, ``is_timeout``, ``stop_condition="rollout_timeout"``, ``SandboxError``
interrupted,    not ``ok``, ``EnvError``, ``env_error``
record_error
==============  ===================================================================

Importing this module imports verifiers (``pip install 'verifiers>=0.4'``).

Example:
    >>> traces = await verifiers_group_traces("qa-basic/capital-france", policy, 4)  # doctest: +SKIP
    >>> [t.reward for t in traces if t.ok]  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hud_gym.task import Task
from hud_gym.trajectory import Trajectory
from hud_gym.wrappers.rollout.grpo import rollout_group

try:
    import verifiers.v1 as vf
    from verifiers.v1.types import AssistantMessage, UserMessage
except ModuleNotFoundError as exc:  # pragma: no cover  (the message says what to install)
    raise ModuleNotFoundError(
        f"hud_gym.wrappers.integrations.verifiers_v1 needs verifiers >= 0.4 ({exc}): pip install 'verifiers>=0.4'"
    ) from None

__all__ = ["REWARD_NAME", "to_trace", "verifiers_group_traces"]

REWARD_NAME = "hud"
"""The name the env's reward is recorded under in ``Trace.rewards``."""

# hud-gym failure status -> the verifiers boundary it crossed.
_ERRORS: dict[str, type[vf.RolloutError]] = {
    "env_error": vf.SandboxError,
    "timeout": vf.SandboxError,
    "eval_error": vf.TaskError,
    "policy_error": vf.ProviderError,
    "interrupted": vf.EnvError,
    "record_error": vf.EnvError,
}


def _nodes(trajectory: Trajectory) -> list[vf.MessageNode]:
    """The run's chat as a single-branch message graph (assistant turns are the sampled ones)."""
    messages = trajectory.to_messages(images=False)
    stamps = [trajectory.started_at.timestamp()] + [
        (step.ended_at or step.started_at).timestamp() for step in trajectory.steps for _ in (0, 1)
    ]
    nodes = []
    for i, message in enumerate(messages):
        content = message["content"]
        if isinstance(content, list):
            content = "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
        role = message["role"]
        nodes.append(
            vf.MessageNode(
                parent=None if i == 0 else i - 1,
                message=AssistantMessage(content=content) if role == "assistant" else UserMessage(content=content),
                sampled=role == "assistant",
                timestamp=stamps[min(i, len(stamps) - 1)],
            )
        )
    return nodes


def _timing(trajectory: Trajectory) -> vf.Timing:
    start = trajectory.started_at.timestamp()
    end = (trajectory.ended_at or trajectory.started_at).timestamp()
    evaluate = sum(step.timings.get("evaluate", 0.0) for step in trajectory.steps)
    return vf.Timing(
        start=start,
        agent=vf.AgentSpan(start=start, end=end - evaluate),
        scoring=vf.TimeSpan(start=end - evaluate, end=end),
    )


def to_trace(trajectory: Trajectory, *, agent_name: str = "agent") -> vf.Trace:
    """One hud-gym trajectory as a ``verifiers.v1.Trace`` (see the module docstring for the mapping).

    Args:
        trajectory: a finished run (from :func:`~hud_gym.wrappers.rollout.grpo.rollout` or a job).
        agent_name: the trace's agent name (verifiers' env role).
    """
    task = trajectory.task
    data = task.model_dump(mode="json", exclude_none=True) if task is not None else {"prompt": trajectory.prompt}
    trace: vf.Trace = vf.Trace(
        id=trajectory.trajectory_id,
        task=vf.TraceTask(type="HudTask", data=data, key=trajectory.task_id),
        agent=vf.AgentInfo(config=vf.AgentConfig(), name=agent_name),
        nodes=_nodes(trajectory),
        timing=_timing(trajectory),
        info={
            "hud_status": trajectory.status,
            "seed": trajectory.seed,
            "group_id": trajectory.group_id,
            "rollout_index": trajectory.rollout_index,
        },
    )
    trace.record_metric("steps", len(trajectory.steps))
    error_type = _ERRORS.get(trajectory.status)
    if error_type is None:
        if trajectory.reward is None:  # a graded status always has its reward; refuse to invent one
            raise ValueError(f"trajectory {trajectory.trajectory_id} is {trajectory.status!r} but has no reward")
        trace.record_reward(REWARD_NAME, trajectory.reward)
        trace.stop("max_turns" if trajectory.status == "truncated" else "agent_completed")
        trace.ok = True
    else:
        if trajectory.status == "timeout":
            trace.record_timeout("rollout")
        trace.record_error(error_type(trajectory.error or trajectory.status))
    trace.is_completed = True
    return trace


async def verifiers_group_traces(
    task: Task | dict[str, Any] | str,
    policy: Callable[..., Any],
    group_size: int,
    **kwargs: Any,
) -> list[vf.Trace]:
    """Run ``group_size`` rollouts of ``task`` (same seed, concurrently) and return them as
    ``verifiers.v1.Trace`` records, in rollout order.

    Args:
        task: a Task, a task dict or a ``"<taskset>/<id>"`` reference.
        policy: ``policy(observation, history, task)`` (see :mod:`hud_gym.wrappers.rollout.grpo`).
        group_size: G.
        **kwargs: passed to :func:`~hud_gym.wrappers.rollout.grpo.rollout_group` (``seed``,
            ``max_steps``, ``timeout_s``, ``max_concurrent``, ``env_kwargs``, ...).
    """
    kwargs.setdefault("keep_observations", False)  # text-only messages: no screenshots to keep
    group = await rollout_group(task, policy, group_size, **kwargs)
    return [to_trace(t) for t in group.trajectories]
