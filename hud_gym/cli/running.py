"""``hud-gym run`` (and ``make demo``): pick the tasks, the agent and the env options, then run
them as one job with a progress bar.

Example:
    >>> plan = plan_run("miniwob", "scripted", tasks=["click-test", "enter-text"])   # doctest: +SKIP
    >>> job = execute_run(plan, name="try", envs=8, group_size=2)                    # doctest: +SKIP
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console

from hud_gym.agents.needs import AgentMismatchError, check_tasks, merged_env_kwargs
from hud_gym.cli.agents import ResolvedAgent, resolve_agent
from hud_gym.cli.errors import CLIError
from hud_gym.core.options import UnknownEnvOptionError
from hud_gym.jobs.env_defaults import check_options, taskset_env_defaults
from hud_gym.jobs.job import Job
from hud_gym.task import TaskSet

__all__ = ["RunPlan", "execute_run", "parse_env_kwargs", "plan_run", "select_tasks", "taskset_env_defaults"]


_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class RunPlan:
    """What a run will do: the tasks, the agent and the keyword arguments of every env."""

    taskset: TaskSet
    agent: ResolvedAgent
    env_kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def taskset_label(self) -> str:
        """The task set's name (or ``tasks``)."""
        return self.taskset.id or "tasks"

    @property
    def notes(self) -> list[str]:
        """Lines to tell the user before the run: the gym tasks without a ``gym`` field run on."""
        from hud_gym.gyms import get_gym

        untyped = [task for task in self.taskset if task.gym is None]
        if not untyped:
            return []
        gym = get_gym(None)
        return [
            f'note: {len(untyped)} of {len(self.taskset)} task(s) have no "gym" field, so they run on the default '
            f'gym {gym.name!r} ({gym.id}); give each task a "gym" ("qa", "hud-browser", "hud-ubuntu") to choose'
        ]


def parse_env_kwargs(pairs: Sequence[str]) -> dict[str, Any]:
    """``["key=value", ...]`` as a dict; a value is read as JSON when it parses (``3``, ``true``,
    ``[500, 320]``, ``{"a": 1}``), else kept as a string.

    Raises:
        CLIError: an item without ``=`` or with a key that is not a Python identifier.
    """
    kwargs: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not _KEY.match(key):
            raise CLIError(f"--env-kwarg takes key=value with a Python identifier as the key, got {pair!r}")
        try:
            kwargs[key] = json.loads(value)
        except json.JSONDecodeError:
            kwargs[key] = value
    return kwargs


def _load_taskset(spec: str) -> TaskSet:
    from hud_gym.tasksets import load_taskset

    try:
        return load_taskset(spec)
    except (ValueError, KeyError, OSError) as exc:  # TaskFileError is a ValueError: file, line and field
        raise CLIError(
            str(exc).strip().splitlines()[0] if str(exc).strip() else f"cannot load task set {spec!r}"
        ) from None
    except ImportError as exc:
        raise CLIError(f"task set {spec!r} needs a package that is not installed: {exc}") from None


def select_tasks(taskset: TaskSet, task_ids: Sequence[str] = (), limit: int | None = None) -> TaskSet:
    """The tasks of ``taskset`` whose ids are in ``task_ids`` (comma-separated items allowed; all
    when empty), in the order given, then the first ``limit`` of them.

    Raises:
        CLIError: an id the task set does not have, or a ``limit`` below 1.
    """
    wanted = [part.strip() for item in task_ids for part in item.split(",") if part.strip()]
    tasks = list(taskset)
    if wanted:
        by_id = {task.id: task for task in tasks if task.id}
        missing = [task_id for task_id in wanted if task_id not in by_id]
        if missing:
            from hud_gym.tasksets import missing_task_message

            raise CLIError(missing_task_message(taskset.id or "(file)", missing[0], list(by_id)))
        tasks = [by_id[task_id] for task_id in dict.fromkeys(wanted)]
    if limit is not None:
        if limit < 1:
            raise CLIError(f"--limit must be at least 1, got {limit}")
        tasks = tasks[:limit]
    return TaskSet(tasks=tasks, id=taskset.id, description=taskset.description)


def _check_gyms(taskset: TaskSet) -> None:
    """Refuse a task whose ``gym`` is unknown before any env starts."""
    from hud_gym.gyms import get_gym

    for index, task in enumerate(taskset):
        try:
            get_gym(task.gym)
        except ValueError as exc:
            raise CLIError(
                f"task set {taskset.id or '(file)'!r}, task {index}"
                f"{f' ({task.id!r})' if task.id else ''}, field 'gym': {exc}"
            ) from None


def plan_run(
    taskset: str | TaskSet,
    agent: str,
    *,
    tasks: Sequence[str] = (),
    limit: int | None = None,
    env_kwargs: dict[str, Any] | None = None,
    seed: int | None = None,
    agent_options: dict[str, Any] | None = None,
) -> RunPlan:
    """Resolve the task set (a name or a path), the task selection, the agent and the env options
    (task set defaults, then the agent's, then ``env_kwargs``, which win); ``agent_options``
    configure a model agent (``model``, ``base_url``, ...).

    Raises:
        CLIError: an unknown task set, task id or agent, or a file that does not load.
    """
    selected = select_tasks(taskset if isinstance(taskset, TaskSet) else _load_taskset(taskset), tasks, limit)
    if len(selected) == 0:
        raise CLIError(f"task set {selected.id or '(file)'!r} has no tasks")
    _check_gyms(selected)
    user = dict(env_kwargs or {})
    if "job" in user:
        raise CLIError("--env-kwarg job=... is not allowed: the run makes its own job")
    defaults = taskset_env_defaults(selected)
    resolved = resolve_agent(agent, env_kwargs={**defaults, **user}, seed=seed, agent_options=agent_options)
    try:
        needs = check_tasks(resolved.agent, list(selected), selected.id)
        env_kwargs = merged_env_kwargs({**defaults, **resolved.env_defaults}, needs, user)
        check_options(selected, env_kwargs)
    except AgentMismatchError as exc:
        raise CLIError(f"--agent {resolved.label}: {exc}") from None
    except UnknownEnvOptionError as exc:
        raise CLIError(f"--env-kwarg: {exc}") from None
    _check_sizes(env_kwargs)
    return RunPlan(selected, resolved, env_kwargs)


def _check_sizes(env_kwargs: dict[str, Any]) -> None:
    """Refuse a malformed ``screen_size`` / ``observation_size`` before any env starts."""
    from hud_gym.core.options import parse_size

    for key in ("screen_size", "observation_size"):
        if env_kwargs.get(key) is not None:
            try:
                parse_size(env_kwargs[key], key)
            except ValueError as exc:
                raise CLIError(f"--env-kwarg {exc}") from None


def execute_run(
    plan: RunPlan,
    *,
    name: str | None = None,
    envs: int = 8,
    group_size: int = 1,
    max_steps: int | None = None,
    seed: int | None = None,
    timeout_s: float | None = None,
    metadata: dict[str, Any] | None = None,
    console: Console | None = None,
) -> Job:
    """Run the plan as one job (:func:`hud_gym.jobs.run_job`) with a progress bar on ``console``
    (stderr by default) that advances per finished run: solved, unsolved and errors (runs with no
    reward), mean reward so far, steps/s and the ETA."""
    from hud_gym.cli.tables import make_console
    from hud_gym.jobs.progress import JobProgressBar
    from hud_gym.jobs.run import run_job

    console = console or make_console(stderr=True)
    bar = JobProgressBar(f"{plan.agent.label} on {plan.taskset_label}", len(plan.taskset) * group_size, console)
    with bar:
        return run_job(
            plan.agent.agent,
            plan.taskset,
            name or f"{plan.agent.label} on {plan.taskset_label}",
            max_concurrent=envs,
            group_size=group_size,
            env_kwargs=plan.env_kwargs,
            metadata={"agent": plan.agent.label, "env_kwargs": plan.env_kwargs, **(metadata or {})},
            seed=seed,
            max_steps=max_steps,
            timeout_s=timeout_s,
            on_run=bar.add,
        )
