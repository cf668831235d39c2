"""The HUD SDK's API on hud-gym: HUD code moves over by changing ``hud`` to ``hud_gym.hud`` in
its imports (``from hud_gym.hud import gym, job, Task``; ``from hud_gym.hud.task import Task``;
``from hud_gym.hud.agent import ClaudeAgent``; ``from hud_gym.hud.adapters.common.types import
ClickAction``).

A thin async layer over the same envs, job store and runners as the Gymnasium API (which stays
the primary one):

- :mod:`.gym`: ``await gym.make(task | gym name)`` -> :class:`Environment` (:mod:`.environment`:
  ``reset``, ``step`` -> 4-tuple, ``evaluate``, ``close``, ``final_response``);
- :mod:`.jobs`: ``create_job``, ``load_job``, ``@job`` / ``@register_job``, ``run_job``, a
  :class:`Job` with awaited ``load_trajectories`` / ``get_analytics`` and HUD 0.6 ``runs``;
- :mod:`.task`: :class:`Task`, :class:`TaskSet` (``await task.run(agent)``,
  ``await taskset.run(agent, group_size=, max_concurrent=)``), ``load_taskset``;
- :mod:`.run`, :mod:`.trace`: HUD 0.6's :class:`Run`, :class:`Trace` and its steps; ``Grade`` is
  :class:`hud_gym.evaluation.Grade` (``Grade.model_validate`` of a wire frame reads ``score``);
- :class:`CustomGym`: HUD's custom gym, as a ``controller="docker"`` gym.

Example:
    >>> from hud_gym.hud import gym, Task
    >>> async def main():                                           # doctest: +SKIP
    ...     env = await gym.make(Task(prompt="2+2?", gym="qa", evaluate=("response_includes", "4")))
    ...     await env.step([{"type": "response", "text": "4"}])
    ...     print(float(await env.evaluate()))
    ...     await env.close()
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from hud_gym.actions import ResponseAction
from hud_gym.evaluation import Grade
from hud_gym.hud import gym
from hud_gym.hud.environment import Environment, Observation
from hud_gym.hud.jobs import Job, create_job, job, load_job, register_job, run_job
from hud_gym.hud.run import PromptMessage, Run
from hud_gym.hud.task import Task, TaskSet, load_taskset
from hud_gym.hud.trace import AgentStep, Step, ToolStep, Trace

__all__ = [
    "AgentStep",
    "ClaudeAgent",
    "CustomGym",
    "Environment",
    "Grade",
    "Job",
    "Observation",
    "OperatorAgent",
    "PromptMessage",
    "ResponseAction",
    "Run",
    "Step",
    "Task",
    "TaskSet",
    "ToolStep",
    "Trace",
    "create_job",
    "gym",
    "job",
    "load_job",
    "load_taskset",
    "register_job",
    "run_job",
]


class CustomGym(BaseModel):
    """HUD's ``CustomGym``: a Docker image (``image_or_build_context`` a string) or build context
    (a ``Path``; build it first and give the image name). As a task's ``gym`` it makes a
    ``controller="docker"`` env of ``gym`` (default ``hud-ubuntu``) in that image."""

    type: Literal["public"] = "public"
    location: Literal["local", "remote"] = "local"
    image_or_build_context: str | Path | None = None
    host_config: dict[str, Any] | None = None
    dockerfile: str | None = None
    controller_source_dir: str | Path | None = None
    gym: str | None = None


def __getattr__(name: str) -> Any:
    if name in ("ClaudeAgent", "OperatorAgent"):  # the agents import their model SDKs lazily
        from hud_gym import agents

        return getattr(agents, name)
    raise AttributeError(f"module 'hud_gym.hud' has no attribute {name!r}")
