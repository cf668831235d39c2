"""The CLI's user-facing error: a one-line message and an exit code, never a traceback."""

from __future__ import annotations

from hud_gym.errors import HudGymError

__all__ = ["USAGE_EXIT_CODE", "CLIError"]

USAGE_EXIT_CODE = 2
"""Exit code for a user mistake (unknown name, bad option value), as click uses for usage errors."""


class CLIError(HudGymError):
    """A mistake the user can fix; ``hud-gym`` prints ``hud-gym: error: <message>`` on stderr and
    exits with ``exit_code``."""

    def __init__(self, message: str, exit_code: int = USAGE_EXIT_CODE) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message
