"""What the job store writes beside its rows: screenshot files, and the runs whose recording
failed (they end ``record_error`` at once, or when the job, the env or the process ends: see
:mod:`hud_gym.jobs.failures`). A part of :class:`~hud_gym.jobs.store.Store`, over its
:class:`~hud_gym.jobs.database.Database`."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hud_gym.jobs.database import Database
from hud_gym.jobs.failures import RecordFailures
from hud_gym.jobs.images import EXTENSIONS, ImageFormat, screenshot_of, write_image
from hud_gym.jobs.reserve import is_disk_full
from hud_gym.jobs.rows import to_time
from hud_gym.trajectory import utc_now

__all__ = ["Recording", "check_image_settings"]

_MARK_RECORD_ERROR = (
    "UPDATE trajectories SET status = 'record_error', reward = NULL, error = ?, ended_at = COALESCE(ended_at, ?) "
    "WHERE id = ? AND status IN ('running', 'ok', 'truncated', 'ungraded')"
)


def check_image_settings(image_format: str, jpeg_quality: int) -> None:
    """Raise ``ValueError`` for an unknown screenshot format or a JPEG quality outside 1-100."""
    if image_format not in EXTENSIONS:
        raise ValueError(f"image_format must be one of {sorted(EXTENSIONS)}, got {image_format!r}")
    if not 1 <= jpeg_quality <= 100:
        raise ValueError(f"jpeg_quality must be in 1..100, got {jpeg_quality}")


class Recording:
    """Screenshots and failed recordings of the store over ``db``.

    Args:
        db: the store's database.
        image_format: ``"jpeg"`` or ``"png"``.
        jpeg_quality: JPEG quality, 1-100.

    Raises:
        ValueError: an unknown format, or a quality outside 1-100.
    """

    def __init__(self, db: Database, *, image_format: ImageFormat = "jpeg", jpeg_quality: int = 85) -> None:
        check_image_settings(image_format, jpeg_quality)
        self.db = db
        self.image_format: ImageFormat = image_format
        self.jpeg_quality = jpeg_quality
        self.failures = RecordFailures()
        """The runs of this process whose recording failed."""

    # ------------------------------------------------------------------ runs that could not be recorded

    @contextmanager
    def guard(self, job_id: str | None, trajectory_id: str) -> Iterator[None]:
        """The writes of one run: when one fails, the run ends ``record_error`` (now if possible)."""
        try:
            yield
        except (OSError, sqlite3.DatabaseError, ValueError, TypeError) as exc:  # ValueError: a value unfit to store
            if not self.db.read_only and not isinstance(exc, sqlite3.IntegrityError):
                self.failures.add(job_id or "", trajectory_id, exc)
                try:
                    self.settle_unrecorded(job_id)
                except Exception:  # noqa: BLE001  (tried again at close, at the job's end, at exit)
                    pass
            raise

    def settle_unrecorded(self, job_id: str | None = None) -> int:
        """Mark ``record_error`` (reward ``None``) the runs (of ``job_id``, or all) of this process
        whose recording failed and that are not marked yet; returns how many were marked."""
        pending = self.failures.unsettled(job_id)
        if not pending or self.db.read_only:
            return 0
        now = to_time(utc_now())

        def mark(conn: sqlite3.Connection) -> None:
            for trajectory_id, message in pending.items():
                conn.execute(_MARK_RECORD_ERROR, (message, now, trajectory_id))

        self.db.status_write(mark)
        self.failures.settled(list(pending))
        return len(pending)

    # ------------------------------------------------------------------ images

    def image_path(self, ref: str) -> Path:
        """The absolute path of a stored image reference."""
        return self.db.images_dir / ref

    def relative_ref(self, ref: str | None) -> str | None:
        """``ref`` relative to the images folder when it is an absolute path inside it (as
        :meth:`image_path` made it), else as given."""
        if ref is None:
            return None
        path = Path(ref)
        try:
            return str(path.relative_to(self.db.images_dir)) if path.is_absolute() else ref
        except ValueError:
            return ref

    def save_image(self, job_id: str, trajectory_id: str, name: str, observation: Any) -> str | None:
        """Write the observation's screenshot as ``<job>/<trajectory>/<name>.<ext>``; returns the
        reference (``None`` when the observation has no screenshot)."""
        screenshot = screenshot_of(observation)
        if screenshot is None:
            return None
        self.db.require_writable()
        self.db.reserve.check()
        ref = f"{job_id}/{trajectory_id}/{name}.{EXTENSIONS[self.image_format]}"
        try:
            write_image(self.image_path(ref), screenshot, self.image_format, self.jpeg_quality)
        except OSError as exc:
            if is_disk_full(exc):
                self.db.reserve.note_full()
            raise
        return ref
