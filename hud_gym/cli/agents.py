"""Agents for ``hud-gym run --agent``: a built-in name or an import path ``module:attribute``.

Built-in agents:

- ``scripted``: :class:`~hud_gym.agents.MiniWoBScriptedAgent`, MiniWoB++ tasks only (it reads
  ``info["elements"]``, so it turns on ``elements=True`` in the envs, and refuses other task sets).
- ``random``: :class:`~hud_gym.agents.RandomAgent`, one seeded random click, text, key or scroll
  per step inside the observation (the floor of a task set).
- ``claude``, ``operator``, ``openai``: the model agents (:mod:`hud_gym.cli.model_agents`),
  configured by ``--model``, ``--base-url``, ``--max-tokens``, ``--temperature``, ``--system-prompt``.

An import path names a class (made with no arguments), an agent object (``act(observation,
info)`` or HUD's ``predict(observation)``) or a policy callable ``(observation, history, task)``;
the current directory is importable, as with ``python -m``.

Example:
    >>> resolve_agent("scripted").label
    'scripted'
    >>> resolve_agent("mypkg.agents:MyAgent")     # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hud_gym.cli.errors import CLIError

__all__ = ["BUILTIN_AGENTS", "ResolvedAgent", "resolve_agent"]


@dataclass
class ResolvedAgent:
    """What ``--agent`` named: the agent (or policy) for ``run_job``, a label for the job's
    metadata, and env keyword arguments the agent needs (the user's ``--env-kwarg`` wins)."""

    agent: Any
    label: str
    env_defaults: dict[str, Any] = field(default_factory=dict)


def _scripted(env_kwargs: dict[str, Any], seed: int | None) -> ResolvedAgent:
    from hud_gym.agents import MiniWoBScriptedAgent

    return ResolvedAgent(MiniWoBScriptedAgent(), "scripted")  # its env_needs: elements=True, MiniWoB++ only


def _random(env_kwargs: dict[str, Any], seed: int | None) -> ResolvedAgent:
    from hud_gym.agents import RandomAgent

    return ResolvedAgent(RandomAgent(seed=seed), "random")


BUILTIN_AGENTS: dict[str, Callable[[dict[str, Any], int | None], ResolvedAgent]] = {
    "random": _random,
    "scripted": _scripted,
}
"""Built-in agent names and their factories ``(env_kwargs, seed) -> ResolvedAgent``."""


def _import(path: str) -> Any:
    module_name, _, attribute = path.partition(":")
    if not module_name or not attribute:
        raise CLIError(f"agent import path {path!r} must look like 'package.module:Attribute'")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise CLIError(
                f"cannot import agent module {module_name!r} (from --agent {path}): no module named {exc.name!r}"
            ) from None
        raise CLIError(f"importing agent module {module_name!r} failed: {type(exc).__name__}: {exc}") from None
    except Exception as exc:  # noqa: BLE001  (the user's module failed to import: say how, in one line)
        raise CLIError(f"importing agent module {module_name!r} failed: {type(exc).__name__}: {exc}") from None
    value: Any = module
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise CLIError(f"module {module_name!r} has no attribute {attribute!r} (from --agent {path})") from None
    return value


def resolve_agent(
    spec: str,
    *,
    env_kwargs: dict[str, Any] | None = None,
    seed: int | None = None,
    agent_options: dict[str, Any] | None = None,
) -> ResolvedAgent:
    """The agent ``spec`` names: a built-in name (:data:`BUILTIN_AGENTS`), a model agent
    (``claude``, ``operator``, ``openai``, configured by ``agent_options``) or ``module:attribute``.

    Raises:
        CLIError: unknown name, a module or attribute that does not exist, a class that cannot be
            made with no arguments, something that is neither an agent nor a policy, options for
            an agent that takes none, or a model agent that cannot start (no key, no server).
    """
    from hud_gym.cli.model_agents import MODEL_AGENTS, make_model_agent

    spec = spec.strip()
    options = {key: value for key, value in (agent_options or {}).items() if value is not None}
    if spec in MODEL_AGENTS:
        agent = make_model_agent(spec, options)
        return ResolvedAgent(agent, f"{spec} ({agent.model})")
    if options:
        flags = ", ".join("--" + key.replace("_", "-") for key in options)
        raise CLIError(f"{flags} configure the model agents ({', '.join(MODEL_AGENTS)}), not --agent {spec}")
    if spec in BUILTIN_AGENTS:
        return BUILTIN_AGENTS[spec](dict(env_kwargs or {}), seed)
    if ":" not in spec:
        raise CLIError(
            f"unknown agent {spec!r}; built-in agents: {', '.join(sorted([*BUILTIN_AGENTS, *MODEL_AGENTS]))}, "
            f"or an import path such as mypkg.agents:MyAgent"
        )
    value = _import(spec)
    from hud_gym.agents.base import is_hud_style

    if isinstance(value, type) and not is_hud_style(value):
        try:
            value = value()
        except Exception as exc:  # noqa: BLE001  (a user class that needs arguments, or raises)
            raise CLIError(f"could not make agent {spec} with no arguments: {type(exc).__name__}: {exc}") from None
    try:
        from hud_gym.agents.policy import as_policy

        as_policy(value)
    except Exception as exc:  # noqa: BLE001  (not an agent, or a HUD-style class that cannot be made)
        raise CLIError(
            f"{spec} is not an agent (an object with act(observation, info) or predict(observation)) "
            f"or a policy callable (observation, history, task): {exc}"
        ) from None
    return ResolvedAgent(value, spec)
