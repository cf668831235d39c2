"""The job store's errors: problems a user can fix, each told in one line that names the file or
directory and what to do (the CLI prints them as ``hud-gym: error: ...``, exit code 2)."""

from __future__ import annotations

from hud_gym.errors import HudGymError

__all__ = ["StoreError", "StoreReadOnlyError"]


class StoreError(HudGymError, RuntimeError):
    """The job store cannot be used: not a database, written by a newer hud-gym, not a directory,
    read-only for a write..."""


class StoreReadOnlyError(StoreError):
    """A write to a job store this process can only read (a read-only directory or file system,
    or files owned by another user)."""
