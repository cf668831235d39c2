"""What ``run_job`` does as each run ends: log it, count it, and stop the job at an
infrastructure failure that will repeat.

Logging (logger ``hud_gym.jobs.run``): the job's start and end at INFO, each finished run at INFO,
each failed run (no reward) at WARNING with its status and error.

A failure "that will repeat" is one that has nothing to do with the task: before any run has
started its env, runs of two different tasks (or the only task) ended ``env_error`` at reset with
the same error (no browser, no display, a bad env option), and it did repeat: at least one of
those runs began after an earlier one had already failed that way. Runs that were starting side
by side when one cause hit them all (a browser killed under every setup) confirm nothing: the
next run gets a fresh browser. Every other run would end the same way, so :class:`RunWatcher`
raises :class:`JobStoppedError` instead of letting the job spend its whole task set on it; the
job is stored ``failed``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hud_gym.errors import HudGymError
from hud_gym.jobs.progress import JobProgressBar, RunTally
from hud_gym.trajectory import Trajectory

__all__ = ["JobStoppedError", "RunWatcher", "logger"]

logger = logging.getLogger("hud_gym.jobs.run")
logger.addHandler(logging.NullHandler())  # a library logs; the application decides where it goes


class JobStoppedError(HudGymError, RuntimeError):
    """``run_job`` stopped early: every run would fail the same way (the message says how)."""


@dataclass
class _StartFailures:
    """The runs that ended ``env_error`` at reset with one error, before any run started."""

    tasks: set[str] = field(default_factory=set)
    first_ended: datetime | None = None
    repeated: bool = False
    """A run that began after an earlier one had failed this way failed the same way."""

    def add(self, trajectory: Trajectory) -> None:
        self.tasks.add(trajectory.task_id or "")
        if self.first_ended is not None and trajectory.started_at >= self.first_ended:
            self.repeated = True
        ended = trajectory.ended_at or trajectory.started_at
        self.first_ended = ended if self.first_ended is None else min(self.first_ended, ended)


class RunWatcher:
    """Logs, counts (and, with ``progress``, draws) the runs of one job as they end.

    Args:
        job_label: the job's name and id, for the log lines.
        total: runs the job will make.
        distinct_tasks: distinct task ids in the job (the repeat rule needs two when there are two).
        progress: draw a rich progress bar on stderr.
    """

    def __init__(self, job_label: str, total: int, distinct_tasks: int, progress: bool = False) -> None:
        self.job_label = job_label
        self.bar = JobProgressBar(job_label, total) if progress else None
        self.tally = self.bar.tally if self.bar is not None else RunTally(total)
        self._needed = min(2, max(1, distinct_tasks))
        self._any_started = False
        self._start_failures: dict[str, _StartFailures] = {}
        self.stopped: JobStoppedError | None = None
        """The error the job stopped with, once it did (runs ending after it are not counted)."""

    def __enter__(self) -> RunWatcher:
        logger.info("job %s: %d run(s) starting", self.job_label, self.tally.total)
        if self.bar is not None:
            self.bar.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)
        logger.info(
            "job %s: %d/%d run(s) finished: %s",
            self.job_label,
            self.tally.finished,
            self.tally.total,
            self.tally.summary(),
        )

    def on_run(self, trajectory: Trajectory) -> None:
        """Count, log and check one finished run (called on the job's event loop).

        Raises:
            JobStoppedError: the run confirms a failure that will repeat.
        """
        if self.stopped is not None:
            return
        outcome = self.bar.add(trajectory) if self.bar is not None else self.tally.add(trajectory)
        where = f"task {trajectory.task_id or '(no id)'} run {trajectory.rollout_index}"
        if outcome == "error":
            logger.warning(
                "job %s: %s ended %s after %d step(s), no reward: %s",
                self.job_label,
                where,
                trajectory.status,
                len(trajectory.steps),
                trajectory.error,
            )
        else:
            logger.info(
                "job %s: %s %s, reward %.4g in %d step(s) (%d/%d)",
                self.job_label,
                where,
                outcome,
                trajectory.reward,
                len(trajectory.steps),
                self.tally.finished,
                self.tally.total,
            )
        self._check_repeat(trajectory)

    def _check_repeat(self, trajectory: Trajectory) -> None:
        if trajectory.status != "env_error" or trajectory.steps:
            self._any_started = True
            return
        if self._any_started:
            return
        error = trajectory.error or "env_error"
        failures = self._start_failures.setdefault(error, _StartFailures())
        failures.add(trajectory)
        if failures.repeated and len(failures.tasks) >= self._needed and self.tally.finished < self.tally.total:
            self.stopped = JobStoppedError(
                f"stopped after {self.tally.finished} of {self.tally.total} run(s): no env could start "
                f"({error}); every run would fail the same way"
            )
            raise self.stopped
