"""Space kept back so that a full disk can still be told: the outcome of a run that could not be
recorded (``record_error``) and the end of its job are written even when the disk is full.

A writable store keeps a ballast file, ``$HUD_GYM_HOME/.space-reserve`` (:data:`RESERVE_BYTES`,
allocated with ``posix_fallocate``). When a status write fails because the disk is full, the
ballast is deleted and the write tried again in the space it leaves. From the first full-disk
error on, the other writes of this process (screenshots, steps) fail at once without touching the
disk, so they do not eat that space; they resume, and the ballast is made again, once the file
system has room again (twice the ballast free).
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import threading
from pathlib import Path

__all__ = ["RESERVE_BYTES", "RESERVE_NAME", "SpaceReserve", "is_disk_full"]

RESERVE_BYTES = 1024 * 1024
"""Size of the ballast file (enough for hundreds of status updates)."""
RESERVE_NAME = ".space-reserve"
_SQLITE_FULL = 13


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` is a full disk (or quota): ``ENOSPC``/``EDQUOT``, or SQLite's ``SQLITE_FULL``."""
    if isinstance(exc, sqlite3.OperationalError):
        return ((getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF) == _SQLITE_FULL or "disk is full" in str(exc)
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


class SpaceReserve:
    """The ballast file of the store in ``home`` and this process's full-disk state."""

    def __init__(self, home: Path) -> None:
        self.path = home / RESERVE_NAME
        self.disk_full = False
        self._lock = threading.Lock()

    def ensure(self) -> bool:
        """Make the ballast file if it is missing (best effort); True if it is there."""
        with self._lock:
            try:
                if self.path.stat().st_size >= RESERVE_BYTES:
                    return True
            except FileNotFoundError:
                pass
            except OSError:
                return False
            partial = self.path.with_name(f"{RESERVE_NAME}.{os.getpid()}.part")
            try:
                fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                try:
                    os.posix_fallocate(fd, 0, RESERVE_BYTES)
                finally:
                    os.close(fd)
                os.replace(partial, self.path)
                return True
            except OSError:
                partial.unlink(missing_ok=True)
                return False

    def release(self) -> bool:
        """Delete the ballast (the disk is full); True if that freed space."""
        with self._lock:
            self.disk_full = True
            try:
                self.path.unlink()
                return True
            except OSError:
                return False

    def note_full(self) -> None:
        """A write failed on a full disk: hold the other writes back (see :meth:`check`)."""
        self.disk_full = True

    def check(self) -> None:
        """Before a write that may be refused: after a full-disk error, refuse it until the file
        system has room again (then make the ballast again).

        Raises:
            OSError: ``ENOSPC``, the disk is still (nearly) full.
        """
        if not self.disk_full:
            return
        try:
            free = shutil.disk_usage(self.path.parent).free
        except OSError:
            free = 0
        if free < 2 * RESERVE_BYTES:
            raise OSError(
                errno.ENOSPC, f"No space left on device (the job store {self.path.parent} is full; free some space)"
            )
        self.disk_full = False
        self.ensure()
