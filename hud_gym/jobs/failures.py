"""The runs of this process whose recording failed (a full disk, an I/O error): each ends
``record_error`` with ``reward=None`` in the store, never ``running`` or a scored status.

The store marks a run as soon as one of its writes fails (its row may not exist when the first
write failed). A mark that could not be written either stays *unsettled* and is written again when
the env closes, when the run's job finishes, and when the process exits; the job's ``error`` then
says how many runs could not be recorded whole.
"""

from __future__ import annotations

import threading

__all__ = ["RecordFailures", "record_error_message"]


def record_error_message(exc: BaseException) -> str:
    """The ``error`` of a run that could not be recorded."""
    return f"could not record the episode: {type(exc).__name__}: {exc}"


class RecordFailures:
    """Per store: which runs (by job) failed to record, and which of them are not marked yet."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_job: dict[str, dict[str, str]] = {}
        self._unsettled: dict[str, str] = {}

    def add(self, job_id: str, trajectory_id: str, exc: BaseException) -> None:
        """A write of ``trajectory_id`` failed with ``exc``."""
        with self._lock:
            runs = self._by_job.setdefault(job_id, {})
            if trajectory_id not in runs:
                runs[trajectory_id] = record_error_message(exc)
            self._unsettled[trajectory_id] = job_id

    def unsettled(self, job_id: str | None = None) -> dict[str, str]:
        """The runs (of ``job_id``, or all) to mark, with their error messages."""
        with self._lock:
            return {tid: self._by_job[job][tid] for tid, job in self._unsettled.items() if job_id in (None, job)}

    def settled(self, trajectory_ids: list[str]) -> None:
        """These runs are marked in the store."""
        with self._lock:
            for trajectory_id in trajectory_ids:
                self._unsettled.pop(trajectory_id, None)

    def summary(self, job_id: str) -> str | None:
        """What the job's ``error`` says about its runs that could not be recorded (None: none)."""
        with self._lock:
            runs = self._by_job.get(job_id)
            if not runs:
                return None
            return f"{len(runs)} run(s) could not be recorded whole (status record_error), first: {next(iter(runs.values()))}"
