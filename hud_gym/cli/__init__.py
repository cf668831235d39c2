"""The ``hud-gym`` command line.

Commands: ``run``, ``jobs list|show|export``, ``report``, ``tasksets list``, ``doctor``, ``serve``
(see ``hud-gym --help``; :mod:`hud_gym.cli.app` is the root, the commands are in
:mod:`~hud_gym.cli.commands` and :mod:`~hud_gym.cli.jobs_commands`). User mistakes print one line on stderr and
exit with code 2.

Example:
    >>> from hud_gym.cli import main
    >>> main(["tasksets", "list"])      # doctest: +SKIP
    0
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``hud-gym`` with ``argv`` (default: the process's arguments); returns the exit code
    (the console script exits with it)."""
    from hud_gym.cli.app import command

    return int(
        command().main(args=list(argv) if argv is not None else None, prog_name="hud-gym", standalone_mode=False)
    )
