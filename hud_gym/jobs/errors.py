"""The job store's errors: problems a user can fix, each told in one line that names the file or
directory and what to do (the CLI prints them as ``hud-gym: error: ...``, exit code 2); and the
lookups that found nothing (``KeyError``s)."""

from __future__ import annotations

from hud_gym.errors import HudGymError

__all__ = ["JobNotFoundError", "StoreError", "StoreReadOnlyError", "TrajectoryNotFoundError"]


class StoreError(HudGymError, RuntimeError):
    """The job store cannot be used: not a database, written by a newer hud-gym, not a directory,
    read-only for a write..."""


class StoreReadOnlyError(StoreError):
    """A write to a job store this process can only read (a read-only directory or file system,
    or files owned by another user)."""


class JobNotFoundError(HudGymError, KeyError):
    """No job has this id (or id prefix)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "job not found"


class TrajectoryNotFoundError(HudGymError, KeyError):
    """No trajectory has this id."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "trajectory not found"
