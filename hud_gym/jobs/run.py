"""``run_job``: run a whole task set with an agent as one job, batched on the shared event loop.

Each task runs ``group_size`` times with one seed and one ``group_id`` (a GRPO group), through
:func:`hud_gym.wrappers.rollout.grpo.rollout_groups` with warm envs leased from an
:class:`~hud_gym.wrappers.rollout.pool.EnvPool` (so at most ``max_concurrent`` envs, sharing one browser
or display server, run at once). Every env is linked to the job, so each step is stored as it
happens; a run that crashes is stored with its failure status (``env_error``, ``policy_error``,
``timeout``) and the job goes on, unless no env can start at all (:mod:`hud_gym.jobs.run_watch`:
the job stops with :class:`JobStoppedError`). Each run is logged (logger ``hud_gym.jobs.run``);
``progress=True`` draws a bar on stderr.

The envs get the task set's standard options (MiniWoB++: its 160x210 task area of a 500x320
screen, as ``hud-gym run`` does), then what the agent declares it needs (``env_needs``, see
:mod:`hud_gym.agents.needs`; an agent that cannot act on the tasks is refused), then
``env_kwargs``, which win.

Example:
    >>> from hud_gym.agents import MiniWoBScriptedAgent
    >>> job = run_job(MiniWoBScriptedAgent(), "qa-basic", "baseline", group_size=4)   # doctest: +SKIP
    >>> job.get_analytics().success_rate                                                 # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import Callable, Sequence
from contextlib import aclosing
from pathlib import Path
from typing import Any, Literal

from hud_gym.agents.needs import check_tasks, merged_env_kwargs
from hud_gym.agents.policy import HudAgentPolicy, as_policy
from hud_gym.jobs.env_defaults import check_options, taskset_env_defaults
from hud_gym.jobs.job import Job, _final_status, create_job
from hud_gym.jobs.run_watch import JobStoppedError, RunWatcher, logger
from hud_gym.task import Task, TaskSet
from hud_gym.trajectory import FAILED, Trajectory

__all__ = ["JobStoppedError", "arun_job", "as_policy", "run_job"]


def _resolve(taskset: TaskSet | Sequence[Task | dict[str, Any]] | str | Path) -> TaskSet:
    from hud_gym.tasksets import resolve_taskset

    tasks = resolve_taskset(taskset)
    if len(tasks) == 0:
        raise ValueError("run_job got an empty task set")
    return tasks


async def arun_job(
    agent: Any,
    taskset: TaskSet | Sequence[Task | dict[str, Any]] | str | Path,
    name: str | None = None,
    *,
    max_concurrent: int = 8,
    group_size: int = 1,
    env_kwargs: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
    seed: int | None = None,
    max_steps: int | None = None,
    timeout_s: float | None = None,
    on_trajectory: Callable[[Trajectory], Any] | None = None,
    on_run: Callable[[Trajectory], Any] | None = None,
    progress: bool = False,
    home: str | os.PathLike[str] | None = None,
) -> Job:
    """Run every task of ``taskset`` with ``agent`` as one job; returns the finished job.

    Args:
        agent: a policy, an agent (``act`` or HUD's ``predict``) or an agent class (see
            :func:`hud_gym.agents.policy.as_policy`; HUD-style agents get one agent per run).
        taskset: a :class:`TaskSet`, a list of tasks, or a bundled name / file path.
        name: the job's name (default ``"run <taskset id>"``).
        max_concurrent: runs (envs) alive at once.
        group_size: runs per task, sharing a seed and a ``group_id``.
        env_kwargs: keyword arguments of ``hud_gym.make`` for every env (not ``job``); they win
            over the task set's defaults and the agent's needs (see the module docstring).
        metadata: the job's metadata; the run's settings are added under ``"run"``.
        seed: task ``i``'s group uses seed ``seed + i`` (random seeds when ``None``).
        max_steps: step limit of each run.
        timeout_s: wall-clock budget of each run (status ``timeout`` past it).
        on_trajectory: called with each finished :class:`Trajectory` once it is stored (sync or
            async; it runs on the job's event loop, so keep it quick: a progress bar, a print).
        on_run: called (sync, on the loop) with each trajectory as soon as its run ends, before
            its group is complete and stored: for a progress bar that advances per run.
        progress: draw a progress bar on stderr (ETA, steps/s, mean reward so far).
        home: the store directory.

    Raises:
        AgentMismatchError: the agent declares it cannot act on some task (a ``ValueError``).
        UnknownEnvOptionError: an ``env_kwargs`` key the tasks' env does not take (a ``TypeError``).
        JobStoppedError: no env could start (the job is stored ``failed``).

    The job ends ``completed`` (failed runs are in it with their status), ``failed`` if the run
    itself raised or every run failed (none graded), ``interrupted`` if it was cancelled.
    """
    from hud_gym.wrappers.rollout.grpo import rollout_groups
    from hud_gym.wrappers.rollout.pool import EnvPool

    if max_concurrent < 1:
        raise ValueError(f"max_concurrent must be at least 1, got {max_concurrent}")
    if group_size < 1:
        raise ValueError(f"group_size must be at least 1, got {group_size}")
    env_kwargs = dict(env_kwargs or {})
    if "job" in env_kwargs:
        raise ValueError("env_kwargs must not contain 'job': run_job links every env to the job it creates")
    tasks = _resolve(taskset)
    needs = check_tasks(agent, list(tasks), tasks.id)
    env_kwargs = merged_env_kwargs(taskset_env_defaults(tasks), needs, env_kwargs)
    check_options(tasks, env_kwargs)
    policy = as_policy(agent)
    settings = {
        "taskset": tasks.id,
        "tasks": len(tasks),
        "group_size": group_size,
        "max_concurrent": max_concurrent,
        "agent": policy.label
        if isinstance(policy, HudAgentPolicy)
        else type(policy).__name__
        if not inspect.isfunction(policy)
        else policy.__qualname__,
        "seed": seed,
        "max_steps": max_steps,
        "env_kwargs": env_kwargs,
    }
    job = await asyncio.to_thread(
        create_job, name or f"run {tasks.id or 'tasks'}", {**(metadata or {}), "run": settings}, home=home
    )
    seeds = [seed + i if seed is not None else None for i in range(len(tasks))]
    watcher = RunWatcher(
        f"{job.name!r} ({job.id[:8]})",
        len(tasks) * group_size,
        len({task.id or task.prompt for task in tasks}),
        progress=progress,
    )

    def ended(trajectory: Trajectory) -> None:
        if on_run is not None:
            on_run(trajectory)
        watcher.on_run(trajectory)

    pool = EnvPool(max_concurrent, job=job, **env_kwargs)
    try:
        watcher.__enter__()
        groups = rollout_groups(
            list(tasks),
            policy,
            group_size,
            max_concurrent=max_concurrent,
            seeds=seeds,
            pool=pool,
            on_rollout=ended,
            max_steps=max_steps,
            timeout_s=timeout_s,
            keep_observations=False,
        )
        async with aclosing(groups):
            async for group in groups:
                for trajectory in group.trajectories:
                    trajectory.job_id = job.id
                    try:
                        await asyncio.to_thread(job.store.save_trajectory, trajectory, job.id)
                    except (ValueError, TypeError) as exc:  # one run unfit to store: it ends record_error
                        logger.warning("job %s: run %s not stored: %s", job.id[:8], trajectory.trajectory_id, exc)
                        continue
                    if on_trajectory is not None:
                        result = on_trajectory(trajectory)
                        if inspect.isawaitable(result):
                            await result
    except BaseException as exc:
        watcher.__exit__(None, None, None)
        await asyncio.shield(pool.aclose())
        job.finish(*_final_status(exc))
        raise
    watcher.__exit__(None, None, None)
    await pool.aclose()
    await asyncio.to_thread(job.finish, *_outcome(await asyncio.to_thread(job.store.status_counts, job.id)))
    return job


def _outcome(counts: dict[str, int]) -> tuple[Literal["completed", "failed"], str | None]:
    """How a job that ran to its end finishes: ``failed`` when it has runs and every one failed
    (none graded: the setup is broken, not the agent), else ``completed``."""
    if counts and all(status in FAILED for status in counts):
        shown = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        return "failed", f"every run failed, none was graded ({shown})"
    return "completed", None


def run_job(
    agent: Any, taskset: TaskSet | Sequence[Task | dict[str, Any]] | str | Path, name: str | None = None, **kwargs: Any
) -> Job:
    """:func:`arun_job` from sync code: the runs are batched on hud-gym's event loop thread.
    Takes the same arguments; not callable from that loop thread itself (use ``await arun_job``)."""
    from hud_gym.core.loop import get_loop_thread

    return get_loop_thread().run(arun_job(agent, taskset, name, **kwargs))
