"""Jobs and the local job store: every run of an env linked to a job is kept as a trajectory
(steps, rewards, screenshot files) in SQLite under ``HUD_GYM_HOME``.

- :func:`register_job`, :func:`create_job`, :func:`load_job`, :func:`list_jobs`, :class:`Job`
  (:mod:`hud_gym.jobs.job`); link an env with ``hud_gym.make(task, job=job)``.
- :func:`run_job` / :func:`arun_job`: a task set with an agent as one job (:mod:`hud_gym.jobs.run`).
- :class:`JobAnalytics` (:mod:`hud_gym.jobs.analytics`), :class:`Store` (:mod:`hud_gym.jobs.store`).
- :class:`StoreError` (one line naming the file and what to do: not a database, a newer schema,
  a read-only store asked to write: :class:`StoreReadOnlyError`).
"""

from hud_gym.core.listeners import EnvListener
from hud_gym.jobs.analytics import DurationStats, GroupAnalytics, JobAnalytics, TaskAnalytics, is_success
from hud_gym.jobs.context import current_job
from hud_gym.jobs.errors import StoreError, StoreReadOnlyError
from hud_gym.jobs.job import (
    Job,
    JobStatus,
    acreate_job,
    aload_job,
    create_job,
    list_jobs,
    load_job,
    register_job,
)
from hud_gym.jobs.linking import link_env
from hud_gym.jobs.paths import HOME_ENV_VAR, resolve_home
from hud_gym.jobs.recorder import RecordingWarning, TrajectoryRecorder
from hud_gym.jobs.rows import INITIAL_OBSERVATION_REF
from hud_gym.jobs.run import arun_job, as_policy, run_job
from hud_gym.jobs.schema import SCHEMA_VERSION, SchemaVersionError
from hud_gym.jobs.store import JobNotFoundError, Store, TrajectoryNotFoundError, get_store

__all__ = [
    "HOME_ENV_VAR",
    "INITIAL_OBSERVATION_REF",
    "SCHEMA_VERSION",
    "DurationStats",
    "EnvListener",
    "GroupAnalytics",
    "Job",
    "JobAnalytics",
    "JobNotFoundError",
    "JobStatus",
    "RecordingWarning",
    "SchemaVersionError",
    "Store",
    "StoreError",
    "StoreReadOnlyError",
    "TaskAnalytics",
    "TrajectoryNotFoundError",
    "TrajectoryRecorder",
    "acreate_job",
    "aload_job",
    "arun_job",
    "as_policy",
    "create_job",
    "current_job",
    "get_store",
    "is_success",
    "link_env",
    "list_jobs",
    "load_job",
    "register_job",
    "resolve_home",
    "run_job",
]
