"""What an agent needs of the envs it acts in, declared on the agent as ``env_needs``.

An agent that reads ``info["elements"]`` needs ``elements=True``; one that knows MiniWoB++
instructions only cannot solve a QA task. It says so with an :class:`AgentNeeds`, and
:func:`hud_gym.jobs.run_job` (and ``hud-gym run``) applies the env options or refuses the task set
with the reason, instead of scoring ~0% in silence.

Example:
    >>> from hud_gym.agents import MiniWoBScriptedAgent
    >>> needs = agent_needs(MiniWoBScriptedAgent())
    >>> dict(needs.env_kwargs), needs.benchmarks
    ({'elements': True}, ('miniwob',))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from hud_gym.errors import HudGymError
from hud_gym.task import Task

__all__ = ["AgentMismatchError", "AgentNeeds", "agent_needs", "check_tasks", "merged_env_kwargs"]


class AgentMismatchError(HudGymError, ValueError):
    """The agent cannot act on these tasks (it says why)."""


@dataclass(frozen=True)
class AgentNeeds:
    """An agent's requirements.

    Args:
        env_kwargs: options of ``hud_gym.make`` the agent needs (the user's ``env_kwargs`` win).
        benchmarks: the task families (``task.metadata["benchmark"]``) it can act on; empty: any.
        reason: why, in a few words, for the refusal message.
    """

    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    benchmarks: tuple[str, ...] = ()
    reason: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "env_kwargs", MappingProxyType(dict(self.env_kwargs)))
        object.__setattr__(self, "benchmarks", tuple(self.benchmarks))


NO_NEEDS = AgentNeeds()


def agent_needs(agent: Any) -> AgentNeeds:
    """The agent's (or agent class's) declared ``env_needs``; no needs when it declares none."""
    needs = getattr(agent, "env_needs", None)
    return needs if isinstance(needs, AgentNeeds) else NO_NEEDS


def check_tasks(agent: Any, tasks: Sequence[Task], label: str | None = None) -> AgentNeeds:
    """The agent's needs, once every task is of a family it can act on.

    Raises:
        AgentMismatchError: the first task the agent cannot act on, with the agent's reason.
    """
    needs = agent_needs(agent)
    if not needs.benchmarks:
        return needs
    for task in tasks:
        benchmark = (task.metadata or {}).get("benchmark")
        if benchmark not in needs.benchmarks:
            name = getattr(agent, "__name__", None) or type(agent).__name__
            families = ", ".join(needs.benchmarks)
            where = f"task set {label!r}" if label else "the task set"
            raise AgentMismatchError(
                f"{name} acts on {families} tasks only{f' ({needs.reason})' if needs.reason else ''}; "
                f"{where} has task {task.id or task.prompt[:40]!r} "
                f"({'benchmark ' + repr(benchmark) if benchmark else 'no benchmark'}, gym {task.gym!r}): "
                f"use another agent (random, a model agent, your own)"
            )
    return needs


def merged_env_kwargs(defaults: Mapping[str, Any], needs: AgentNeeds, user: Mapping[str, Any] | None) -> dict[str, Any]:
    """The env options of a run: the task set's defaults, then the agent's needs, then the user's."""
    return {**defaults, **needs.env_kwargs, **(user or {})}
