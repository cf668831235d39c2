"""GRPO grouped rollouts, trainer-agnostic.

- :func:`rollout` runs one task with a policy and returns a :class:`Trajectory`.
- :func:`rollout_group` runs G copies of one task concurrently, with the same seed (so the same
  initial state) and one ``group_id``.
- :func:`rollout_groups` streams groups as they complete, with a bound on concurrent rollouts.
- :func:`group_advantages` normalises rewards within groups, excluding failed runs.

A policy is any callable ``policy(observation, history, task)`` (sync or async) returning the CLA
actions of the next step, or a :class:`PolicyOutput` that also carries an opaque ``trace`` (token
ids, logprobs) kept on the step for the trainer. Sync policies run in a worker thread, so they
never block the event loop. An :class:`hud_gym.agents.Agent` (an object with ``act(observation,
info)`` and no ``__call__``) works too: it is ``reset()`` at the start of each run and given the
env's latest ``info``.

Example:
    >>> async def main():
    ...     group = await rollout_group(task, my_policy, group_size=8)
    ...     return group_advantages(group.rewards())
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncGenerator, Callable, Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from hud_gym.actions import CLAAction
from hud_gym.advantages import group_advantages
from hud_gym.agents.policy import PolicyOutput, start_run
from hud_gym.bounds import clip_text
from hud_gym.core.env import HudEnv
from hud_gym.make import make
from hud_gym.rewards import graded_reward
from hud_gym.task import Task
from hud_gym.tasksets import resolve_task
from hud_gym.trajectory import FAILED, Trajectory, TrajectoryGroup, TrajectoryStep, crash_error, new_id, utc_now
from hud_gym.wrappers.rollout.pool import EnvPool

__all__ = ["Policy", "PolicyOutput", "group_advantages", "rollout", "rollout_group", "rollout_groups"]


@runtime_checkable
class Policy(Protocol):
    """``policy(observation, history, task) -> actions | PolicyOutput`` (sync or async)."""

    def __call__(self, observation: dict[str, Any], history: list[TrajectoryStep], task: Task) -> Any: ...


def _is_agent(policy: Any) -> bool:
    return not callable(policy) and callable(getattr(policy, "act", None))


async def _decide(
    policy: Any,  # a Policy callable or an agent (an object with act())
    observation: dict[str, Any],
    history: list[TrajectoryStep],
    task: Task,
    info: dict[str, Any] | None = None,
) -> PolicyOutput:
    call, args = (
        (policy.act, (observation, info or {})) if _is_agent(policy) else (policy, (observation, history, task))
    )
    if inspect.iscoroutinefunction(call) or inspect.iscoroutinefunction(type(call).__call__):  # an async __call__
        result = await call(*args)
    else:
        result = await asyncio.to_thread(call, *args)
        if inspect.isawaitable(result):
            result = await result
    return result if isinstance(result, PolicyOutput) else PolicyOutput(actions=result)


def _make_env(task: Task, env_kwargs: dict[str, Any]) -> HudEnv:
    env = make(task, **env_kwargs)
    return env.unwrapped  # type: ignore[return-value]


def _json_info(info: dict[str, Any]) -> dict[str, Any]:
    keep = {}
    for key in ("status", "action_error", "error", "url", "title", "position", "focused_window"):
        if info.get(key) is not None:
            keep[key] = info[key]
    return keep


async def rollout(
    task: Task | dict[str, Any] | str,
    policy: Callable[..., Any],
    *,
    env: HudEnv | None = None,
    seed: int | None = None,
    max_steps: int | None = None,
    timeout_s: float | None = None,
    group_id: str | None = None,
    rollout_index: int = 0,
    keep_observations: bool = True,
    env_kwargs: dict[str, Any] | None = None,
) -> Trajectory:
    """Run ``task`` once with ``policy`` and return the :class:`Trajectory`.

    Args:
        task: the task (or a dict / ``"<taskset>/<id>"`` reference).
        policy: see :class:`Policy`.
        env: an env to use (reset with the task); made with ``hud_gym.make`` (and closed) when None.
        seed: the reset seed (same seed, same initial state).
        max_steps: the env's step limit for this run.
        timeout_s: wall-clock budget for the whole run (status ``timeout`` past it).
        group_id / rollout_index: the GRPO group this run belongs to, and its place in it.
        keep_observations: keep each step's observation in memory (for :meth:`Trajectory.to_messages`).
        env_kwargs: keyword arguments for ``hud_gym.make`` when ``env`` is None.

    Never raises for env, policy, evaluation or timeout failures: they end the run with
    ``reward=None`` and a ``status`` saying which (``env_error``, ``policy_error``, ``eval_error``,
    ``timeout``). A failure the env did not see itself (the policy raised, ``timeout_s`` passed) is
    passed to :meth:`~hud_gym.core.env.HudEnv.end_episode` at once, so a job recording the env
    stores it before anything else can happen to the process.
    """
    task = resolve_task(task)
    own_env = env is None
    kwargs = dict(env_kwargs or {})
    if max_steps is not None:
        kwargs["max_steps"] = max_steps
    trajectory = Trajectory(
        group_id=group_id, rollout_index=rollout_index, task=task, task_id=task.id, seed=seed, prompt=task.prompt
    )
    try:
        if env is None:
            env = await asyncio.to_thread(_make_env, task, kwargs)
        elif max_steps is not None:
            env._max_steps = max_steps
        await asyncio.wait_for(_run(env, task, policy, trajectory, seed, keep_observations), timeout_s)
    except asyncio.TimeoutError:
        trajectory.status, trajectory.reward = "timeout", None
        trajectory.error = f"the rollout did not finish within {timeout_s} s"
    except Exception as exc:  # noqa: BLE001  (an env that cannot even reset is an env failure)
        trajectory.status, trajectory.reward = "env_error", None
        trajectory.error = f"{type(exc).__name__}: {exc}"
    finally:
        trajectory.ended_at = utc_now()
        if env is not None and trajectory.failed:
            try:
                await env.aend_episode(trajectory.status, trajectory.error)
            except Exception:  # noqa: BLE001  (the run's own record below still says what failed)
                pass
        if own_env and env is not None:
            await env.aclose()
    return trajectory


async def _run(
    env: HudEnv,
    task: Task,
    policy: Any,  # a Policy callable or an agent (an object with act())
    trajectory: Trajectory,
    seed: int | None,
    keep_observations: bool,
) -> None:
    # The trajectory rides along so a job recorder on the env stores the run under its id and group.
    observation, info = await env.areset(seed=seed, options={"task": task, "trajectory": trajectory})
    try:
        policy = start_run(policy)  # this run's own agent for HUD-style agents (hud_gym.agents.policy)
        if _is_agent(policy) and callable(getattr(policy, "reset", None)):
            await asyncio.to_thread(policy.reset)
    except Exception as exc:  # noqa: BLE001  (the agent itself failed)
        trajectory.status, trajectory.reward = "policy_error", None
        trajectory.error = crash_error(f"agent reset raised {type(exc).__name__}: {clip_text(str(exc), 1000)}", exc)
        return
    trajectory.prompt = info.get("prompt") or task.prompt
    trajectory.initial_observation = observation if keep_observations else None
    index = 0
    while True:
        try:
            decision = await _decide(policy, observation, trajectory.steps, task, info)
        except Exception as exc:  # noqa: BLE001  (the policy itself failed)
            trajectory.status, trajectory.reward = "policy_error", None
            trajectory.error = crash_error(f"policy raised {type(exc).__name__}: {clip_text(str(exc), 1000)}", exc)
            return
        # A malformed action is the policy's mistake within the episode: the env reports it
        # (status "action_error") and the episode goes on.
        step = TrajectoryStep(index=index, actions=_dump(decision.actions), policy_trace=decision.trace)
        observation, reward, terminated, truncated, info = await env.astep(decision.actions)
        step.ended_at = utc_now()
        step.reward = graded_reward(reward)
        step.terminated, step.truncated = bool(terminated), bool(truncated)
        step.text, step.status, step.error = (
            observation["text"],
            info.get("status", "ok"),
            info.get("error") or info.get("action_error"),
        )
        step.info = _json_info(info)
        step.timings = dict(info.get("timings") or {})
        step.observation = observation if keep_observations else None
        trajectory.steps.append(step)
        index += 1
        if terminated or truncated:
            grade = info.get("grade")
            trajectory.final_response = env.final_response
            trajectory.grade = grade.model_dump(exclude={"raw"}) if grade is not None else None
            if step.status in FAILED or step.reward is None:
                trajectory.status, trajectory.reward = step.status, None  # type: ignore[assignment]
                trajectory.error = step.error
            else:
                trajectory.status = "truncated" if truncated and not terminated else "ok"
                trajectory.reward = step.reward
            return


async def _pooled_rollout(pool: EnvPool | None, task: Task, policy: Callable[..., Any], **kwargs: Any) -> Trajectory:
    if pool is None:
        return await rollout(task, policy, **kwargs)
    async with pool.lease(task) as env:
        return await rollout(task, policy, env=env, **kwargs)


def _dump(actions: Any) -> list[dict[str, Any]]:
    items = actions if isinstance(actions, (list, tuple)) else [actions]
    out = []
    for item in items:
        if isinstance(item, CLAAction):
            out.append(item.model_dump(mode="json", exclude_none=True))
        elif isinstance(item, dict):
            out.append({k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in item.items()})
        else:
            out.append({"value": repr(item)})
    return out


async def rollout_group(
    task: Task | dict[str, Any] | str,
    policy: Callable[..., Any],
    group_size: int,
    *,
    seed: int | None = None,
    group_id: str | None = None,
    max_concurrent: int | None = None,
    pool: EnvPool | None = None,
    **rollout_kwargs: Any,
) -> TrajectoryGroup:
    """Run ``group_size`` copies of ``task`` concurrently with one seed and one ``group_id``.

    Each copy runs in its own env (all share the process's browser or display server), so the G
    copies start from the same state and never see each other's. With a ``pool`` the envs are
    leased warm (much faster); without, each rollout makes and closes one. ``seed`` defaults to a
    random one, shared by the group.
    """
    task = resolve_task(task)
    if group_size < 1:
        raise ValueError("group_size must be at least 1")
    seed = int(np.random.default_rng().integers(2**31 - 1)) if seed is None else seed
    group = TrajectoryGroup(group_id=group_id or new_id(), task=task, seed=seed)
    limit = asyncio.Semaphore(max_concurrent or group_size)

    async def one(index: int) -> Trajectory:
        async with limit:
            return await _pooled_rollout(
                pool, task, policy, seed=seed, group_id=group.group_id, rollout_index=index, **rollout_kwargs
            )

    group.trajectories = list(await asyncio.gather(*(one(i) for i in range(group_size))))
    return group


async def rollout_groups(
    tasks: Iterable[Task | dict[str, Any] | str],
    policy: Callable[..., Any],
    group_size: int,
    *,
    max_concurrent: int = 8,
    seeds: Sequence[int | None] | None = None,
    pool: EnvPool | None = None,
    on_rollout: Callable[[Trajectory], Any] | None = None,
    **rollout_kwargs: Any,
) -> AsyncGenerator[TrajectoryGroup, None]:
    """Yield a :class:`TrajectoryGroup` per task as each completes, with at most
    ``max_concurrent`` rollouts (envs) alive at once across all groups (leased from ``pool``
    when given). ``seeds`` has one seed per task (``None``: a random one). ``on_rollout`` is
    called with each trajectory as soon as its rollout ends (before its group is complete); what
    it raises ends the iteration.

    Raises:
        ValueError: ``seeds`` of another length than ``tasks``.
    """
    task_list = [resolve_task(t) for t in tasks]
    limit = asyncio.Semaphore(max_concurrent)
    seed_list = list(seeds) if seeds is not None else [None] * len(task_list)
    if len(seed_list) != len(task_list):
        raise ValueError(f"got {len(seed_list)} seeds for {len(task_list)} tasks")

    async def bounded(task: Task, policy: Callable[..., Any], **kwargs: Any) -> Trajectory:
        async with limit:
            trajectory = await _pooled_rollout(pool, task, policy, **kwargs)
        if on_rollout is not None:
            on_rollout(trajectory)
        return trajectory

    async def group_of(task: Task, seed: int | None) -> TrajectoryGroup:
        seed = int(np.random.default_rng().integers(2**31 - 1)) if seed is None else seed
        group = TrajectoryGroup(task=task, seed=seed)
        group.trajectories = list(
            await asyncio.gather(
                *(
                    bounded(task, policy, seed=seed, group_id=group.group_id, rollout_index=i, **rollout_kwargs)
                    for i in range(group_size)
                )
            )
        )
        return group

    # Only the groups in flight are held (at most ``max_concurrent``, started in task order): a
    # finished group is let go once yielded, so memory stays flat however many tasks there are.
    waiting = iter(zip(task_list, seed_list, strict=True))
    running: set[asyncio.Future[TrajectoryGroup]] = set()

    def start_more() -> None:
        while len(running) < max_concurrent:
            item = next(waiting, None)
            if item is None:
                return
            running.add(asyncio.ensure_future(group_of(*item)))

    try:
        start_more()
        while running:
            done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            running.difference_update(done)
            start_more()
            finished = [future.result() for future in done]
            del done
            while finished:
                yield finished.pop(0)
    finally:
        for future in running:
            future.cancel()
