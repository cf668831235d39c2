"""The job store: one SQLite database (WAL) plus screenshot files, under ``HUD_GYM_HOME``.

Layout::

    $HUD_GYM_HOME/hud_gym.db                                    jobs, trajectories, steps
    $HUD_GYM_HOME/images/<job id>/<trajectory id>/initial.jpg     the reset screenshot
    $HUD_GYM_HOME/images/<job id>/<trajectory id>/step-0000.jpg   the screenshot after step 0
    $HUD_GYM_HOME/.space-reserve                                  1 MiB kept for status writes on a full disk

:class:`Store` is a facade over three parts it owns: the database (:attr:`Store.db`,
:mod:`hud_gym.jobs.database`: durability, concurrency, read-only stores and full disks), the
screenshots and failed recordings (:attr:`Store.recording`, :mod:`hud_gym.jobs.recording`), and two
repositories of rows over them: the jobs (:attr:`Store.jobs`, :mod:`hud_gym.jobs.job_repository`)
and the trajectories (:attr:`Store.trajectories`, :mod:`hud_gym.jobs.trajectory_repository`).

- An image file is written (atomically) before the row that references it.
- A run whose write fails ends ``record_error`` (reward ``None``) at once, or, if even that cannot
  be written, when its env closes, its job finishes or the process exits
  (:mod:`hud_gym.jobs.failures`); the job's ``error`` counts the runs not recorded whole.
- A trajectory row is ``running`` until its episode ends. :meth:`Store.reconcile` (run by every
  load) marks the running rows of a writer process that no longer runs ``interrupted``, and so
  the running jobs of an owner process that no longer runs (see :mod:`hud_gym.jobs.liveness`).

Example:
    >>> store = Store()                                 # $HUD_GYM_HOME or the per-user data dir
    >>> store.db_path, store.images_dir                 # doctest: +SKIP
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hud_gym.jobs.database import DB_NAME, Database
from hud_gym.jobs.errors import JobNotFoundError, StoreError, StoreReadOnlyError, TrajectoryNotFoundError
from hud_gym.jobs.images import ImageFormat
from hud_gym.jobs.job_repository import JobRepository
from hud_gym.jobs.liveness import ProcessIdentity
from hud_gym.jobs.paths import resolve_home
from hud_gym.jobs.recording import Recording, check_image_settings
from hud_gym.jobs.trajectory_repository import TrajectoryRepository
from hud_gym.trajectory import Trajectory, TrajectoryStep

__all__ = [
    "DB_NAME",
    "JobNotFoundError",
    "Store",
    "StoreError",
    "StoreReadOnlyError",
    "TrajectoryNotFoundError",
    "get_store",
    "release_store",
]


class Store:
    """The SQLite job store under ``home`` (default: :func:`~hud_gym.jobs.paths.resolve_home`).

    Args:
        home: the data directory (created if missing).
        image_format: how screenshots are written: ``"jpeg"`` (default, quality ``jpeg_quality``)
            or ``"png"`` (lossless, larger).
        jpeg_quality: JPEG quality, 1-100.
        read_only: ``None`` (default): read-write when this process can write the store, else
            read-only; ``True``: read-only; ``False``: read-write or :class:`StoreReadOnlyError`.

    Raises:
        StoreError: ``home`` is not a directory, the database is not a job store (or is damaged),
            or was written by a newer hud-gym (:class:`~hud_gym.jobs.schema.SchemaVersionError`).
        ValueError: an unknown ``image_format``, or ``jpeg_quality`` outside 1-100.

    Attributes:
        db: the database (connections, transactions, read-only and full-disk rules).
        recording: the screenshots and the runs whose recording failed.
        jobs: the job rows.
        trajectories: the trajectory rows.
        home, db_path, images_dir: the store directory, its SQLite file, its screenshots' folder.
    """

    def __init__(
        self,
        home: str | os.PathLike[str] | None = None,
        *,
        image_format: ImageFormat = "jpeg",
        jpeg_quality: int = 85,
        read_only: bool | None = None,
    ) -> None:
        check_image_settings(image_format, jpeg_quality)
        self.db = Database(resolve_home(home), read_only=read_only)
        self.recording = Recording(self.db, image_format=image_format, jpeg_quality=jpeg_quality)
        self.jobs = JobRepository(self.db, self.recording)
        self.trajectories = TrajectoryRepository(self.db, self.recording)
        self.home: Path = self.db.home
        self.db_path: Path = self.db.db_path
        self.images_dir: Path = self.db.images_dir

    def __repr__(self) -> str:
        return f"Store({str(self.home)!r}{', read_only=True' if self.read_only else ''})"

    @property
    def read_only(self) -> bool:
        """Whether this store only reads (:attr:`Database.read_only_reason` says why)."""
        return self.db.read_only

    def require_writable(self) -> None:
        """:meth:`Database.require_writable`."""
        self.db.require_writable()

    def close(self) -> None:
        """:meth:`Database.close`: this thread's connection."""
        self.db.close()

    def release(self) -> None:
        """:meth:`Database.release`: every thread's connection."""
        self.db.release()

    # ------------------------------------------------------------------ jobs (JobRepository)

    def insert_job(
        self, job_id: str, name: str, metadata: dict[str, Any], created_at: Any, owner: ProcessIdentity | None
    ) -> None:
        """:meth:`JobRepository.insert_job`."""
        self.jobs.insert_job(job_id, name, metadata, created_at, owner)

    def finish_job(self, job_id: str, status: str, error: str | None = None, *, only_if_running: bool = False) -> bool:
        """:meth:`JobRepository.finish_job`."""
        return self.jobs.finish_job(job_id, status, error, only_if_running=only_if_running)

    def rename_job(self, job_id: str, name: str) -> None:
        """:meth:`JobRepository.rename_job`."""
        self.jobs.rename_job(job_id, name)

    def job_row(self, id_or_prefix: str) -> sqlite3.Row:
        """:meth:`JobRepository.job_row`."""
        return self.jobs.job_row(id_or_prefix)

    def job_rows(self, limit: int | None = None) -> list[sqlite3.Row]:
        """:meth:`JobRepository.job_rows`."""
        return self.jobs.job_rows(limit)

    def reconcile(self, job_id: str | None = None) -> int:
        """:meth:`JobRepository.reconcile`."""
        return self.jobs.reconcile(job_id)

    # ------------------------------------------------------------------ trajectories (TrajectoryRepository, Recording)

    def start_trajectory(
        self,
        trajectory: Trajectory,
        job_id: str,
        *,
        initial_observation: Any = None,
        writer: ProcessIdentity | None = None,
    ) -> str | None:
        """:meth:`TrajectoryRepository.start_trajectory`."""
        return self.trajectories.start_trajectory(
            trajectory, job_id, initial_observation=initial_observation, writer=writer
        )

    def add_step(
        self,
        job_id: str,
        trajectory_id: str,
        step: TrajectoryStep,
        observation: Any = None,
        end: Trajectory | None = None,
    ) -> str | None:
        """:meth:`TrajectoryRepository.add_step`."""
        return self.trajectories.add_step(job_id, trajectory_id, step, observation, end)

    def end_trajectory(self, trajectory: Trajectory, *, only_if_running: bool = True) -> bool:
        """:meth:`TrajectoryRepository.end_trajectory`."""
        return self.trajectories.end_trajectory(trajectory, only_if_running=only_if_running)

    def delete_trajectory(self, job_id: str, trajectory_id: str) -> None:
        """:meth:`TrajectoryRepository.delete_trajectory`."""
        self.trajectories.delete_trajectory(job_id, trajectory_id)

    def save_trajectory(self, trajectory: Trajectory, job_id: str) -> None:
        """:meth:`TrajectoryRepository.save_trajectory`."""
        self.trajectories.save_trajectory(trajectory, job_id)

    def load_trajectories(
        self,
        job_id: str,
        *,
        status: str | Sequence[str] | None = None,
        include_running: bool = False,
        steps: bool = True,
    ) -> list[Trajectory]:
        """:meth:`TrajectoryRepository.load_trajectories`."""
        return self.trajectories.load_trajectories(job_id, status=status, include_running=include_running, steps=steps)

    def load_trajectory(self, trajectory_id: str) -> Trajectory:
        """:meth:`TrajectoryRepository.load_trajectory`."""
        return self.trajectories.load_trajectory(trajectory_id)

    def trajectory_summaries(self, job_id: str) -> list[dict[str, Any]]:
        """:meth:`TrajectoryRepository.trajectory_summaries`."""
        return self.trajectories.trajectory_summaries(job_id)

    def status_counts(self, job_id: str) -> dict[str, int]:
        """:meth:`TrajectoryRepository.status_counts`."""
        return self.trajectories.status_counts(job_id)

    def settle_unrecorded(self, job_id: str | None = None) -> int:
        """:meth:`Recording.settle_unrecorded`."""
        return self.recording.settle_unrecorded(job_id)

    def image_path(self, ref: str) -> Path:
        """:meth:`Recording.image_path`."""
        return self.recording.image_path(ref)


_stores: dict[Path, Store] = {}
_stores_lock = threading.Lock()


def get_store(home: str | os.PathLike[str] | None = None) -> Store:
    """The process's shared :class:`Store` for ``home`` (resolved now: ``$HUD_GYM_HOME`` or the
    per-user data dir), created on first use."""
    path = resolve_home(home)
    with _stores_lock:
        store = _stores.get(path)
        if store is None:
            store = _stores[path] = Store(path)
        return store


def release_store(home: str | os.PathLike[str] | None = None) -> None:
    """Close every connection of the process's store for ``home`` and forget it (its files stay):
    for a program (a test suite) that opens many stores and keeps threads that touched them."""
    path = resolve_home(home)
    with _stores_lock:
        store = _stores.pop(path, None)
    if store is not None:
        store.release()


def settle_all_stores() -> None:
    """:meth:`Store.settle_unrecorded` in every store of this process (best effort, at exit)."""
    with _stores_lock:
        stores = list(_stores.values())
    for store in stores:
        try:
            store.settle_unrecorded()
        except Exception:  # noqa: BLE001  (exit is best effort; dead writers' rows read back interrupted)
            pass
