"""``hud-gym jobs rename|tag|delete``: change the jobs in the store (:mod:`hud_gym.jobs.manage`)."""

from __future__ import annotations

from typing import Annotated

import typer

from hud_gym.cli.console import JOB_ID_HELP
from hud_gym.cli.errors import CLIError

__all__ = ["TAG_HELP", "jobs_delete", "jobs_rename", "jobs_tag", "parse_tag_options"]

TAG_HELP = "A tag KEY=VALUE (or KEY) to compare jobs by, e.g. ckpt=1200. Repeatable."


def parse_tag_options(items: list[str] | None, option: str = "--tag") -> dict[str, str]:
    """The ``--tag`` options as a dict; a malformed one is a one-line usage error."""
    from hud_gym.jobs.tags import parse_tags

    try:
        return parse_tags(items or ())
    except ValueError as exc:
        raise CLIError(f"{option}: {exc}") from None


def jobs_rename(
    job_id: Annotated[str, typer.Argument(metavar="ID", help=JOB_ID_HELP)],
    name: Annotated[str, typer.Argument(help="The job's new name.")],
) -> None:
    """Give a job a new name."""
    from hud_gym.jobs.manage import rename_job

    try:
        job = rename_job(job_id, name)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    typer.echo(f"job {job.id} is now named {job.name!r}")


def jobs_tag(
    job_id: Annotated[str, typer.Argument(metavar="ID", help=JOB_ID_HELP)],
    tags: Annotated[list[str] | None, typer.Argument(metavar="[KEY=VALUE]...", help="Tags to add or set.")] = None,
    remove: Annotated[
        list[str] | None, typer.Option("--remove", "-r", metavar="KEY", help="A tag to remove. Repeatable.")
    ] = None,
) -> None:
    """Add, change (KEY=VALUE) or remove (--remove KEY) a job's tags; print its tags."""
    from hud_gym.jobs.manage import tag_job

    added = parse_tag_options(tags, "tag")
    try:
        result = tag_job(job_id, added, remove or ())
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    typer.echo(" ".join(f"{k}={v}" if v else k for k, v in result.items()) or "(no tags)")


def jobs_delete(
    job_ids: Annotated[list[str], typer.Argument(metavar="ID...", help=JOB_ID_HELP)],
    force: Annotated[
        bool, typer.Option("--force", help="Delete a job even while its process is still running it.")
    ] = False,
) -> None:
    """Delete jobs with their runs, steps and screenshots."""
    from hud_gym.jobs.job import load_job
    from hud_gym.jobs.manage import JobRunningError, delete_job

    jobs = [load_job(job_id) for job_id in job_ids]  # every id resolves before anything is deleted
    for job in jobs:
        try:
            delete_job(job.id, force=force)
        except JobRunningError as exc:
            raise CLIError(str(exc)) from None
        typer.echo(f"deleted job {job.id} ({job.name!r})")
