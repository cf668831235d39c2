"""Any agent as what a rollout runs: the one place that knows both agent styles.

:func:`as_policy` validates what ``run_job`` / ``hud-gym run`` were given and wraps HUD-style
agents (``predict``) in a :class:`HudAgentPolicy`; :func:`start_run` is called by ``rollout`` at
the start of each run and gives that run its own agent, so concurrent runs never share a
conversation:

- a HUD-style agent *class* is made once per run (as HUD's ``run_job`` does);
- a HUD-style agent *instance* is :meth:`~hud_gym.agents.Agent.fork`-ed per run when it can be
  (every :class:`~hud_gym.agents.Agent` subclass can), else shared and reset at each run;
- act-style agents and policy callables are used as they are (shared, reset at each run).

The wrapped agent's ``last_trace`` becomes the step's ``policy_trace``.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hud_gym.agents.base import finish, is_hud_style
from hud_gym.agents.errors import AgentError

__all__ = ["HudAgentPolicy", "PolicyOutput", "as_policy", "start_run"]


@dataclass
class PolicyOutput:
    """A policy's answer: the actions, and an opaque trace kept on the step (tokens, logprobs)."""

    actions: Any
    trace: Any = None


class HudAgentPolicy:
    """A HUD-style agent driven as an act-style one: ``async act(observation, info)`` calls
    ``predict`` and returns a ``PolicyOutput`` with the agent's trace.

    Args:
        agent: the agent instance (forked per run when it has ``fork``), or
        factory: a no-argument callable making one agent per run (an agent class).
    """

    def __init__(self, agent: Any = None, *, factory: Callable[[], Any] | None = None) -> None:
        if (agent is None) == (factory is None):
            raise ValueError("HudAgentPolicy needs an agent or a factory")
        self._factory = factory
        self._agent = agent

    @property
    def agent(self) -> Any:
        """The agent this policy drives (made on first use with a factory)."""
        if self._agent is None:
            assert self._factory is not None
            self._agent = self._factory()
        return self._agent

    @property
    def label(self) -> str:
        """The agent's class name."""
        kind = self._factory if isinstance(self._factory, type) else type(self._agent)
        return getattr(kind, "__name__", type(self).__name__)

    def for_run(self) -> HudAgentPolicy:
        """A policy for one more run, with its own agent when it can have one."""
        if self._factory is not None:
            return HudAgentPolicy(_make(self._factory))
        fork = getattr(self._agent, "fork", None)
        return HudAgentPolicy(fork()) if callable(fork) else self

    def reset(self) -> None:
        """Reset the agent (at the start of a run)."""
        reset = getattr(self.agent, "reset", None)
        if callable(reset):
            reset()

    async def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        """The next actions (a ``PolicyOutput`` carrying the agent's ``last_trace``)."""
        agent = self.agent
        predict = agent.predict
        kwargs: dict[str, Any] = {"info": info} if _takes_info(predict) else {}
        if inspect.iscoroutinefunction(predict):
            result = await predict(observation, **kwargs)
        else:
            result = await asyncio.to_thread(predict, observation, **kwargs)
            if inspect.isawaitable(result):
                result = await result
        if not (isinstance(result, tuple) and len(result) == 2):
            raise AgentError(f"{type(agent).__name__}.predict must return (actions, done), got {type(result).__name__}")
        actions, done = result
        if actions is None:
            actions = []
        elif not isinstance(actions, (list, tuple)):
            actions = [actions]
        return PolicyOutput(actions=finish(list(actions), bool(done)), trace=getattr(agent, "last_trace", None))


def _takes_info(predict: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(predict).parameters
    except (TypeError, ValueError):
        return False
    info = parameters.get("info")
    return (info is not None and info.kind is not inspect.Parameter.POSITIONAL_ONLY) or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    )


def _make(factory: Callable[[], Any]) -> Any:
    try:
        return factory()
    except TypeError as exc:
        name = getattr(factory, "__name__", repr(factory))
        raise TypeError(f"could not make a {name} with no arguments ({exc}); pass an instance instead") from exc


def as_policy(agent: Any) -> Any:
    """What ``rollout`` accepts, from ``agent``: a policy callable ``(observation, history, task)``,
    an act-style agent (``act(observation, info)``, shared by every run: it must not keep
    per-episode state when runs are concurrent), a HUD-style agent or agent class (a
    :class:`HudAgentPolicy`, one agent per run), or an act-style agent class (made once).

    Raises:
        TypeError: anything else, or a class that cannot be made with no arguments.
    """
    if isinstance(agent, HudAgentPolicy):
        return agent
    if isinstance(agent, type):
        if is_hud_style(agent):
            policy = HudAgentPolicy(factory=agent)
            policy.agent  # noqa: B018  (make one now: a class that needs arguments fails here, not in every run)
            return policy
        agent = _make(agent)
    if is_hud_style(agent):
        return HudAgentPolicy(agent)
    if callable(agent) or callable(getattr(agent, "act", None)):
        return agent
    raise TypeError(
        f"expected a policy callable (observation, history, task), an agent with act(observation, info) "
        f"or predict(observation), or an agent class; got {type(agent).__name__}"
    )


def start_run(policy: Any) -> Any:
    """The policy one run uses (``rollout`` calls it once per run): see the module docstring."""
    policy = as_policy(policy)
    return policy.for_run() if isinstance(policy, HudAgentPolicy) else policy
