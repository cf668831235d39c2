"""The env listener that records a linked env's episodes into its job, as they happen.

Every ``reset`` starts a trajectory row (status ``running``) and writes the reset screenshot;
every ``step`` writes the step's screenshot and row, committed before ``step`` returns; the step
that ends the episode also stores the trajectory's status, reward, grade and final response.

- Status: ``ok`` (terminated), ``truncated`` (step limit), or the last step's failure
  (``env_error``, ``timeout``, ``eval_error``; reward ``None``, as is every failed step's).
- **The stored reward is the graded reward**: the last grade obtained for the episode, by its
  final step or by ``env.evaluate()`` (before or after that step, until the next ``reset``), is
  the trajectory's reward, grade and status (an error grade: ``eval_error`` or ``timeout``, reward
  ``None``). An episode left unfinished by another ``reset`` or by ``close`` ends with that grade
  (status ``ok``), or with the failure of a step after it, or, when nothing graded it,
  ``ungraded`` with reward ``None`` (never the 0 of an ungraded step); ``metadata["ended_by"]``
  says ``"reset"`` or ``"close"``. One with no step and no grade at all is dropped. An episode
  still open when its process exits normally ends ``interrupted``; one whose process is killed
  reads back ``interrupted``.
- An episode ended from outside the env (:meth:`~hud_gym.core.env.HudEnv.end_episode`: the policy
  raised, the run's budget ran out) is stored at once with that status and reward ``None``, so a
  process killed right after never leaves it as a scored run.
- A rollout (:func:`hud_gym.wrappers.rollout.grpo.rollout`) passes its :class:`Trajectory` in the reset
  options (``options["trajectory"]``): the row then takes its id, ``group_id`` and
  ``rollout_index``; the rollout ends a failed run with ``end_episode`` as soon as it fails.
- File and database work runs on a small thread pool, never on the event loop thread. A failed
  write never breaks the env: it warns (:class:`RecordingWarning`) and sets ``info["record_error"]``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import os
import threading
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hud_gym.errors import HudGymWarning
from hud_gym.evaluation import Grade
from hud_gym.jobs.elements import compact_elements
from hud_gym.jobs.step_rows import actions_json, apply_grade, error_status, final_outcome, info_json
from hud_gym.jobs.store import Store, get_store
from hud_gym.rewards import graded_reward
from hud_gym.trajectory import FAILED, Trajectory, TrajectoryStep, new_id, utc_now

if TYPE_CHECKING:
    from hud_gym.core.env import HudEnv
    from hud_gym.jobs.job import Job

__all__ = ["RecordingWarning", "TrajectoryRecorder", "interrupt_open_episodes"]

WRITER_THREADS = 4


class RecordingWarning(HudGymWarning):
    """A trajectory or step could not be written to the job store."""


@dataclass
class _Episode:
    trajectory: Trajectory
    from_rollout: bool
    steps: int = 0
    grade: Grade | None = None  # the last grade obtained (a step's or evaluate()'s)
    failure: tuple[str, str | None] | None = None  # a failure after that grade: (status, error)
    final_response: str | None = None


class TrajectoryRecorder:
    """Records the episodes of one env into ``job`` (see the module docstring). Made by
    :func:`hud_gym.jobs.linking.link_env`; one per env."""

    def __init__(self, job: Job) -> None:
        self.job_id = job.id
        self.home: Path = job.home
        self.env_id = new_id()  # the env's episodes carry it (metadata "env_id"): its live page follows them
        self._episode: _Episode | None = None
        self._ended: Trajectory | None = None  # the episode a step ended, until the next reset
        _live.add(self)

    @property
    def store(self) -> Store:
        """The job's store."""
        return get_store(self.home)

    @property
    def trajectory_id(self) -> str | None:
        """The id of the episode being recorded, if one is open."""
        return self._episode.trajectory.trajectory_id if self._episode else None

    # ------------------------------------------------------------------ listener events

    async def on_reset(
        self, env: HudEnv, observation: dict[str, Any], info: dict[str, Any], options: dict[str, Any]
    ) -> None:
        """A new episode started: end the open one, add a running trajectory."""
        await self._finish_open("reset")
        self._ended = None
        hint = options.get("trajectory")
        hint = hint if isinstance(hint, Trajectory) else None
        task = env.task
        started = utc_now() - timedelta(seconds=float((info.get("timings") or {}).get("total", 0.0)))
        trajectory = Trajectory(
            trajectory_id=hint.trajectory_id if hint else new_id(),
            group_id=hint.group_id if hint else None,
            rollout_index=hint.rollout_index if hint else 0,
            job_id=self.job_id,
            task=task,
            task_id=task.id if task else None,
            seed=info.get("seed"),
            prompt=info.get("prompt") or (task.prompt if task else ""),
            started_at=hint.started_at if hint else started,
            metadata={"gym": env.gym, "placement": env.placement, "env_id": self.env_id},
        )
        initial_elements = compact_elements(info.get("elements"))
        if initial_elements is not None:
            trajectory.metadata["initial_elements"] = initial_elements
        self._episode = _Episode(trajectory, from_rollout=hint is not None)
        if not await self._io(
            info, self.store.start_trajectory, trajectory, self.job_id, initial_observation=observation
        ):
            self._episode = None

    async def on_step(
        self,
        env: HudEnv,
        action: Any,
        observation: dict[str, Any],
        reward: float | None,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
    ) -> None:
        """A step happened: add its row; if it ended the episode, store the outcome."""
        episode = self._episode
        if episode is None:
            return
        ended_at = utc_now()
        timings = {k: float(v) for k, v in (info.get("timings") or {}).items()}
        step = TrajectoryStep(
            index=episode.steps,
            actions=actions_json(action, env),
            reward=graded_reward(reward),
            terminated=bool(terminated),
            truncated=bool(truncated),
            text=str(observation.get("text", "")) if isinstance(observation, dict) else "",
            status=str(info.get("status", "ok")),
            error=info.get("error") or info.get("action_error"),
            info=info_json(info),
            timings=timings,
            started_at=ended_at - timedelta(seconds=timings.get("total", 0.0)),
            ended_at=ended_at,
        )
        episode.steps += 1
        episode.final_response = env.final_response
        grade = info.get("grade")
        if step.status in FAILED:
            episode.failure = (step.status, step.error)
        elif isinstance(grade, Grade):
            episode.grade, episode.failure = grade, None
        end = None
        if terminated or truncated:
            self._episode = None
            end = final_outcome(episode.trajectory, step, grade, env.final_response, ended_at)
            self._ended = end
        await self._io(info, self.store.add_step, self.job_id, episode.trajectory.trajectory_id, step, observation, end)

    async def on_close(self, env: HudEnv) -> None:
        """The env closed: end the open episode."""
        await self._finish_open("close")
        await self._io({}, self.store.settle_unrecorded, self.job_id)  # runs whose recording failed: record_error

    async def on_evaluate(self, env: HudEnv, grade: Grade) -> None:
        """``env.evaluate()`` graded the episode: its grade becomes the open episode's last one,
        or the stored outcome of the episode a step ended."""
        episode = self._episode
        if episode is not None:
            episode.final_response = env.final_response
            if grade.is_error:
                episode.failure = (error_status(grade), grade.content or "the evaluation failed")
            else:
                episode.grade, episode.failure = grade, None
        elif self._ended is not None:
            trajectory = self._ended
            trajectory.final_response = env.final_response or trajectory.final_response
            apply_grade(trajectory, grade, "truncated" if trajectory.status == "truncated" else "ok")
            await self._io({}, self.store.end_trajectory, trajectory, only_if_running=False)

    async def on_end_episode(self, env: HudEnv, status: str, error: str | None) -> None:
        """The episode failed outside the env: store it now with ``status`` and no reward."""
        self._ended = None
        episode, self._episode = self._episode, None
        if episode is None:
            return
        trajectory = episode.trajectory
        trajectory.status, trajectory.reward, trajectory.error = status, None, error  # type: ignore[assignment]
        trajectory.final_response, trajectory.ended_at = env.final_response, utc_now()
        await self._io({}, self.store.end_trajectory, trajectory)

    # ------------------------------------------------------------------ helpers

    async def _finish_open(self, ended_by: str) -> None:
        episode, self._episode = self._episode, None
        if episode is None:
            return
        trajectory = episode.trajectory
        if episode.steps == 0 and not episode.from_rollout and episode.grade is None and episode.failure is None:
            await self._io({}, self.store.delete_trajectory, self.job_id, trajectory.trajectory_id)
            return
        trajectory.final_response = episode.final_response
        if episode.failure is not None:  # a failure after the last grade ends it
            trajectory.status, trajectory.error = episode.failure  # type: ignore[assignment]
            trajectory.reward = None
        elif episode.grade is not None:
            apply_grade(trajectory, episode.grade, "ok")
        else:
            trajectory.status, trajectory.reward = "ungraded", None
            trajectory.error = f"the episode ended by {ended_by} before any grade (no final step, no env.evaluate())"
        trajectory.ended_at = utc_now()
        trajectory.metadata["ended_by"] = ended_by
        await self._io({}, self.store.end_trajectory, trajectory)

    async def _io(self, info: dict[str, Any], fn: Callable[..., Any], *args: Any, **kwargs: Any) -> bool:
        try:
            await asyncio.get_running_loop().run_in_executor(_executor(), functools.partial(fn, *args, **kwargs))
            return True
        except Exception as exc:  # noqa: BLE001  (recording must never break the env)
            message = f"job {self.job_id}: could not record ({fn.__name__}): {type(exc).__name__}: {exc}"
            info["record_error"] = message
            warnings.warn(message, RecordingWarning, stacklevel=2)
            return False

    def interrupt(self, message: str) -> str | None:
        """End the open episode as ``interrupted`` now (synchronously); returns the job id if one
        was open."""
        episode, self._episode = self._episode, None
        if episode is None:
            return None
        trajectory = episode.trajectory
        trajectory.status, trajectory.reward, trajectory.error, trajectory.ended_at = (
            "interrupted",
            None,
            message,
            utc_now(),
        )
        self.store.end_trajectory(trajectory)
        return self.job_id


# ---------------------------------------------------------------------- process-wide state

_live: weakref.WeakSet[TrajectoryRecorder] = weakref.WeakSet()
_executors: dict[int, concurrent.futures.ThreadPoolExecutor] = {}
_executor_lock = threading.Lock()


def _executor() -> concurrent.futures.ThreadPoolExecutor:
    with _executor_lock:
        pool = _executors.get(os.getpid())
        if pool is None:
            _executors.clear()  # a forked child does not inherit the parent's threads
            pool = _executors[os.getpid()] = concurrent.futures.ThreadPoolExecutor(
                WRITER_THREADS, thread_name_prefix="hud-gym-store"
            )
        return pool


def interrupt_open_episodes(message: str) -> set[str]:
    """End every episode still open in this process as ``interrupted``; returns their job ids."""
    jobs: set[str] = set()
    for recorder in list(_live):
        try:
            job_id = recorder.interrupt(message)
        except Exception:  # noqa: BLE001  (best effort at exit; the rows then read back interrupted)
            continue
        if job_id:
            jobs.add(job_id)
    return jobs
