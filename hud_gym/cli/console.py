"""What the commands share: the consoles, a progress bar, one-line errors, the job store's
failures in one line, and loading a job by id or prefix."""

from __future__ import annotations

import sqlite3
from typing import Any

__all__ = [
    "DEBUG_ENV_VAR",
    "JOB_ID_HELP",
    "load_job",
    "one_line",
    "progress_bar",
    "stderr_console",
    "stdout_console",
    "store_damage",
    "store_error",
]

DEBUG_ENV_VAR = "HUD_GYM_DEBUG"
"""Set it to show the traceback of a run that failed as a whole."""

JOB_ID_HELP = "A job id or a unique prefix of one."


def one_line(text: str) -> str:
    return " ".join(part.strip() for part in str(text).strip().splitlines() if part.strip())


def store_damage(exc: sqlite3.DatabaseError) -> Exception | None:
    """The one-line error for a job store that is not a database or is damaged, else ``None``."""
    from hud_gym.jobs.connection import damaged
    from hud_gym.jobs.database import DB_NAME
    from hud_gym.jobs.paths import resolve_home

    return damaged(exc, resolve_home() / DB_NAME)


def store_error(exc: sqlite3.DatabaseError) -> Exception:
    """What a database error of the job store means for the user, in one line."""
    from hud_gym.jobs.paths import resolve_home

    return store_damage(exc) or RuntimeError(
        f"the job store in {resolve_home()} failed: {type(exc).__name__}: {exc} "
        f"(set {DEBUG_ENV_VAR}=1 for the traceback)"
    )


def stdout_console() -> Any:
    from hud_gym.cli.tables import make_console

    return make_console()


def stderr_console() -> Any:
    from hud_gym.cli.tables import make_console

    return make_console(stderr=True)


def progress_bar(description: str, total: int) -> Any:
    """A progress bar on stderr and its ``on_progress(done, total)`` callback."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    progress = Progress(
        TextColumn(description),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr_console(),
        transient=True,
    )
    task = progress.add_task(description, total=total)

    def on_progress(done: int, _total: int) -> None:
        progress.update(task, completed=done)

    return progress, on_progress


def load_job(job_id: str) -> Any:
    """The job ``job_id`` (an id or a unique prefix; :class:`~hud_gym.jobs.JobNotFoundError` otherwise)."""
    from hud_gym.jobs.job import load_job as load

    return load(job_id)
