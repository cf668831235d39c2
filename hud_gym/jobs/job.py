"""Jobs: named groups of runs (trajectories), kept in the local store, as HUD's jobs.

- ``@register_job(name, metadata)`` on a sync or async function: each call creates a job, and every
  env made inside the call (``hud_gym.make``, ``gymnasium.make``, ``gymnasium.make_vec``) is
  linked to it; the job ends ``completed`` when the call returns, ``failed`` when it raises.
- ``create_job(name, metadata)`` and ``hud_gym.make(task, job=job)`` (or ``with job:`` around the
  code that makes envs) link envs explicitly. A created job stays ``running`` until
  :meth:`Job.finish`, the end of a ``with job:`` block, or the normal exit of its process.
- ``load_job(id)`` / ``list_jobs()`` read jobs back, from this or any other process.

A job whose process died (SIGKILL, power cut) reads back ``interrupted``, as do the episodes that
were running in it; finished episodes are intact.

Unlike HUD's SDK, these calls are synchronous (the store is local): ``create_job`` and
``load_job`` return the job, not a coroutine. ``acreate_job``, ``aload_job``,
:meth:`Job.aload_trajectories` and :meth:`Job.aget_analytics` run them off the event loop.

Example:
    >>> @register_job("qa-eval", metadata={"agent": "scripted"})
    ... def evaluate():
    ...     env = hud_gym.make("qa-basic/capital-france")      # linked to this call's job
    ...     env.reset(seed=0)
    ...     env.step(ResponseAction(text="Paris"))
    ...     env.close()
    ...     return current_job()
    >>> job = evaluate()
    >>> job.status, job.get_analytics().success_rate
    ('completed', 1.0)
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import inspect
import json
import os
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

from hud_gym.jobs.context import _current, current_job
from hud_gym.jobs.liveness import current_process
from hud_gym.jobs.rows import from_time, load_json, to_json
from hud_gym.jobs.store import Store, get_store
from hud_gym.trajectory import Trajectory, new_id, utc_now

__all__ = [
    "Job",
    "JobStatus",
    "acreate_job",
    "aload_job",
    "create_job",
    "current_job",
    "list_jobs",
    "load_job",
    "register_job",
]

JobStatus = Literal["running", "completed", "failed", "interrupted"]
"""``running`` (its process is alive and it has not finished), ``completed``, ``failed`` (the
``@register_job`` function raised, or :meth:`Job.finish` said so) or ``interrupted`` (its process
died, or the run was cancelled)."""

F = TypeVar("F", bound=Callable[..., Any])


class Job:
    """A job in the store. ``id``, ``name``, ``metadata`` and ``created_at`` are fixed; ``status``,
    ``ended_at`` and ``error`` are read from the store each time (another process may change them).

    Use it as a context manager to link the envs made inside the block and finish the job at the
    end (``failed`` if the block raises)::

        with create_job("manual") as job:
            env = hud_gym.make(task)    # linked
    """

    def __init__(self, id: str, name: str, metadata: dict[str, Any], created_at: datetime, home: Path) -> None:
        self.id = id
        self.name = name
        self.metadata = metadata
        self.created_at = created_at
        self.home = home
        self._tokens: list[Any] = []

    @classmethod
    def _from_row(cls, row: Any, store: Store) -> Job:
        return cls(
            row["id"],
            row["name"],
            load_json(row["metadata"], {}),
            datetime.fromisoformat(row["created_at"]),
            store.home,
        )

    @property
    def store(self) -> Store:
        """The store this job lives in."""
        return get_store(self.home)

    def _row(self) -> Any:
        self.store.reconcile(self.id)
        return self.store.job_row(self.id)

    @property
    def status(self) -> JobStatus:
        """``running``, ``completed``, ``failed`` or ``interrupted`` (see :data:`JobStatus`)."""
        return self._row()["status"]

    @property
    def ended_at(self) -> datetime | None:
        """When the job finished (``None`` while running)."""
        return from_time(self._row()["ended_at"])

    @property
    def error(self) -> str | None:
        """Why the job failed or was interrupted."""
        return self._row()["error"]

    def load_trajectories(
        self, *, status: str | list[str] | None = None, include_running: bool = False
    ) -> list[Trajectory]:
        """The job's finished trajectories (oldest first, steps included), optionally only those
        with ``status``. Screenshots are files: each step's ``observation_ref`` and
        ``trajectory.metadata["initial_observation_ref"]`` (the reset screenshot) are absolute
        paths; ``observation`` is not loaded. See :meth:`Store.load_trajectories` for
        ``include_running``."""
        self.store.reconcile(self.id)
        return self.store.load_trajectories(self.id, status=status, include_running=include_running)

    async def aload_trajectories(self, **kwargs: Any) -> list[Trajectory]:
        """:meth:`load_trajectories` in a worker thread."""
        return await asyncio.to_thread(self.load_trajectories, **kwargs)

    def get_analytics(self, *, success_threshold: float = 1.0) -> Any:
        """Success rate, rewards, per-task and per-group figures, steps, durations and errors, as a
        :class:`~hud_gym.jobs.analytics.JobAnalytics`."""
        from hud_gym.jobs.analytics import compute_analytics

        row = self._row()
        return compute_analytics(
            self.id,
            self.name,
            row["status"],
            self.store.trajectory_summaries(self.id),
            success_threshold=success_threshold,
        )

    async def aget_analytics(self, **kwargs: Any) -> Any:
        """:meth:`get_analytics` in a worker thread."""
        return await asyncio.to_thread(self.get_analytics, **kwargs)

    def count_trajectories(self) -> dict[str, int]:
        """How many trajectories have each status, ``running`` included."""
        self.store.reconcile(self.id)
        return self.store.status_counts(self.id)

    def add_trajectory(self, trajectory: Trajectory) -> None:
        """Store a trajectory produced elsewhere (e.g. by :func:`hud_gym.wrappers.rollout.grpo.rollout`)
        in this job; its in-memory screenshots are written as files."""
        trajectory.job_id = self.id
        self.store.save_trajectory(trajectory, self.id)

    def finish(
        self, status: JobStatus = "completed", error: str | None = None, *, only_if_running: bool = False
    ) -> None:
        """Mark the job finished (``completed``, ``failed`` or ``interrupted``); with
        ``only_if_running``, a job already finished keeps its status."""
        if status == "running":
            raise ValueError("finish() takes a final status: completed, failed or interrupted")
        self.store.finish_job(self.id, status, error, only_if_running=only_if_running)
        _owned.pop(self.id, None)

    def to_dict(self) -> dict[str, Any]:
        """The job's fields as JSON-ready values."""
        row = self._row()
        return {
            "id": self.id,
            "name": self.name,
            "metadata": self.metadata,
            "created_at": self.created_at.isoformat(),
            "status": row["status"],
            "ended_at": row["ended_at"],
            "error": row["error"],
        }

    def __enter__(self) -> Job:
        self._tokens.append(_current.set(self))
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        _current.reset(self._tokens.pop())
        self.finish(*_final_status(exc), only_if_running=True)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Job) and other.id == self.id and other.home == self.home

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"Job(id={self.id!r}, name={self.name!r})"

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_tokens": []}


def _final_status(exc: BaseException | None) -> tuple[JobStatus, str | None]:
    if exc is None:
        return "completed", None
    if isinstance(exc, (KeyboardInterrupt, asyncio.CancelledError, SystemExit)):
        return "interrupted", f"{type(exc).__name__}: {exc}".rstrip(": ")
    return "failed", f"{type(exc).__name__}: {exc}"


# ---------------------------------------------------------------------- creating and loading


def create_job(name: str, metadata: dict[str, Any] | None = None, *, home: str | os.PathLike[str] | None = None) -> Job:
    """A new ``running`` job owned by this process (it ends ``completed`` at the process's normal
    exit unless finished before; ``interrupted`` if the process is killed).

    Args:
        name: a label for the job (need not be unique).
        metadata: JSON-ready data to keep with it (agent version, config, ...).
        home: the store directory (default ``$HUD_GYM_HOME`` or the per-user data dir).

    Raises:
        ValueError: empty name, or metadata that is not a dict.
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"a job needs a non-empty name, got {name!r}")
    if metadata is not None and not isinstance(metadata, dict):
        raise ValueError(f"job metadata must be a dict, got {type(metadata).__name__}")
    store = get_store(home)
    clean = json.loads(to_json(metadata or {}))
    job = Job(new_id(), name, clean, utc_now(), store.home)
    store.insert_job(job.id, name, clean, job.created_at, current_process())
    _own(job)
    return job


def load_job(id_or_prefix: str, *, home: str | os.PathLike[str] | None = None) -> Job:
    """The job with this id (or the only one whose id starts with it).

    Raises:
        JobNotFoundError: (a ``KeyError``) no such job, or an ambiguous prefix; the message says which.
    """
    store = get_store(home)
    row = store.job_row(id_or_prefix)
    store.reconcile(row["id"])
    return Job._from_row(row, store)


def list_jobs(limit: int | None = None, *, home: str | os.PathLike[str] | None = None) -> list[Job]:
    """Jobs in the store, newest first (at most ``limit``)."""
    store = get_store(home)
    store.reconcile()
    return [Job._from_row(row, store) for row in store.job_rows(limit)]


async def acreate_job(name: str, metadata: dict[str, Any] | None = None, **kwargs: Any) -> Job:
    """:func:`create_job` in a worker thread."""
    return await asyncio.to_thread(create_job, name, metadata, **kwargs)


async def aload_job(id_or_prefix: str, **kwargs: Any) -> Job:
    """:func:`load_job` in a worker thread."""
    return await asyncio.to_thread(load_job, id_or_prefix, **kwargs)


# ---------------------------------------------------------------------- the decorator


def register_job(
    name: str, metadata: dict[str, Any] | None = None, *, home: str | os.PathLike[str] | None = None
) -> Callable[[F], F]:
    """Decorate a sync or async function so that each call runs in a new job (see the module
    docstring). Inside the call, :func:`current_job` is that job."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"register_job needs a non-empty job name, got {name!r}")

    def decorate(fn: F) -> F:
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                job = await acreate_job(name, metadata, home=home)
                token = _current.set(job)
                try:
                    result = await fn(*args, **kwargs)
                except BaseException as exc:
                    job.finish(*_final_status(exc), only_if_running=True)
                    raise
                finally:
                    _current.reset(token)
                await asyncio.to_thread(job.finish, "completed", only_if_running=True)
                return result

            return run_async  # type: ignore[return-value]

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            job = create_job(name, metadata, home=home)
            token = _current.set(job)
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:
                job.finish(*_final_status(exc), only_if_running=True)
                raise
            finally:
                _current.reset(token)
            job.finish("completed", only_if_running=True)
            return result

        return run  # type: ignore[return-value]

    return decorate


# ---------------------------------------------------------------------- process exit

_owned: dict[str, Path] = {}
_owned_lock = threading.Lock()
_exit_hook_pid: int | None = None


def _own(job: Job) -> None:
    global _exit_hook_pid
    with _owned_lock:
        if _exit_hook_pid != os.getpid():
            _owned.clear()
            atexit.register(_at_exit)
            _exit_hook_pid = os.getpid()
        _owned[job.id] = job.home


def _at_exit() -> None:
    """At a normal exit: episodes still open in this process end ``interrupted``, and the jobs it
    owns that are still running end ``completed`` (``interrupted`` if they had open episodes)."""
    if _exit_hook_pid != os.getpid():
        return
    from hud_gym.jobs.recorder import interrupt_open_episodes
    from hud_gym.jobs.store import settle_all_stores

    interrupted = interrupt_open_episodes("the process exited during the episode")
    settle_all_stores()
    for job_id, home in list(_owned.items()):
        try:
            status: JobStatus = "interrupted" if job_id in interrupted else "completed"
            error = "the process exited while episodes were running" if status == "interrupted" else None
            get_store(home).finish_job(job_id, status, error, only_if_running=True)
        except Exception:  # noqa: BLE001  (exit is best effort; the job then reads back interrupted)
            pass
    _owned.clear()
