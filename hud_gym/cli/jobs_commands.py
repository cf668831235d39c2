"""``hud-gym jobs list|show|export`` and ``hud-gym report``: the jobs in the store."""

from __future__ import annotations

import json
import os
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from hud_gym.cli.console import JOB_ID_HELP, load_job, progress_bar, stdout_console
from hud_gym.cli.curves_command import jobs_curves
from hud_gym.cli.errors import CLIError
from hud_gym.cli.jobs_manage import jobs_delete, jobs_rename, jobs_tag, parse_tag_options

__all__ = ["jobs_app", "report", "write_report_or_fail"]

LINK_ABOVE_STEPS = 500
"""Past this many steps, ``hud-gym report`` links the screenshots instead of embedding them."""


jobs_app = typer.Typer(
    help="List, show, export, rename, tag and delete the jobs in the store ($HUD_GYM_HOME).", no_args_is_help=True
)
jobs_app.command("rename")(jobs_rename)
jobs_app.command("tag")(jobs_tag)
jobs_app.command("delete")(jobs_delete)
jobs_app.command("curves")(jobs_curves)


@jobs_app.command("list")
def jobs_list(
    limit: Annotated[int, typer.Option("--limit", "-l", min=1, help="Show at most N jobs (newest first).")] = 20,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON (one object per job) instead of a table.")
    ] = False,
    agent: Annotated[str | None, typer.Option("--agent", "-a", help="Only the jobs run by this agent.")] = None,
    taskset: Annotated[str | None, typer.Option("--taskset", help="Only the jobs of this task set.")] = None,
    tag: Annotated[
        list[str] | None,
        typer.Option("--tag", metavar="KEY[=VALUE]", help="Only the jobs with this tag (any value without =)."),
    ] = None,
) -> None:
    """The jobs in the store, newest first, with their figures; filtered by agent, task set, tags."""
    from hud_gym.cli.tables import jobs_table
    from hud_gym.jobs.manage import filter_jobs
    from hud_gym.jobs.tags import job_settings

    wanted = parse_tag_options(tag)
    rows = [(job, job.get_analytics()) for job in filter_jobs(agent=agent, taskset=taskset, tags=wanted, limit=limit)]
    if as_json:
        typer.echo(
            json.dumps(
                [
                    {
                        **job.to_dict(),
                        **{k: v for k, v in job_settings(job.metadata).items() if k in ("agent", "taskset", "tags")},
                        "trajectories": a.trajectories,
                        "success_rate": a.success_rate,
                        "mean_reward": a.mean_reward,
                        "errors": a.errors,
                    }
                    for job, a in rows
                ],
                indent=1,
            )
        )
        return
    if not rows:
        from hud_gym.jobs.paths import resolve_home

        if agent or taskset or wanted:
            typer.echo(f"no job in {resolve_home()} matches the filters")
            return
        typer.echo(f"no jobs in {resolve_home()} (run one with 'hud-gym run')")
        return
    stdout_console().print(jobs_table(rows))


@jobs_app.command("show")
def jobs_show(
    job_id: Annotated[str, typer.Argument(metavar="ID", help=JOB_ID_HELP)],
    trajectories: Annotated[bool, typer.Option("--trajectories", "-t", help="Also list every trajectory.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the job and its analytics as JSON.")] = False,
) -> None:
    """A job's summary, per-task and per-group tables, and the tracebacks of agent crashes."""
    from hud_gym.cli.tables import print_analytics, print_crashes, trajectories_table

    job = load_job(job_id)
    analytics = job.get_analytics()
    if as_json:
        typer.echo(json.dumps({"job": job.to_dict(), "analytics": analytics.model_dump(mode="json")}, indent=1))
        return
    console = stdout_console()
    print_analytics(console, analytics, job)
    if trajectories:
        console.print(trajectories_table(job.load_trajectories()))
    if analytics.error_counts.get("policy_error"):
        print_crashes(console, job.load_trajectories(status=["policy_error"]))


class ExportFormatChoice(str, Enum):
    jsonl = "jsonl"
    hud = "hud"
    video = "video"


class ImagesChoice(str, Enum):
    path = "path"
    base64 = "base64"
    none = "none"


class VideoFormatChoice(str, Enum):
    mp4 = "mp4"
    gif = "gif"
    webp = "webp"


@jobs_app.command("export")
def jobs_export(
    job_id: Annotated[str, typer.Argument(metavar="ID", help=JOB_ID_HELP)],
    export_format: Annotated[
        ExportFormatChoice,
        typer.Option(
            "--format",
            "-f",
            help="jsonl (training data), hud (HUD-style JSON) or video (a replay per trajectory).",
        ),
    ] = ExportFormatChoice.jsonl,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="The file (jsonl, hud) or directory (video) to write; default in the current directory.",
        ),
    ] = None,
    images: Annotated[
        ImagesChoice, typer.Option("--images", help="Screenshots as file paths, inline base64 data URLs, or none.")
    ] = ImagesChoice.path,
    video_format: Annotated[
        VideoFormatChoice, typer.Option("--video-format", help="Replay format.")
    ] = VideoFormatChoice.mp4,
    fps: Annotated[float, typer.Option("--fps", min=0.05, max=60, help="Replay frames per second.")] = 1.0,
) -> None:
    """Export a job's trajectories as JSONL, HUD-style JSON or video replays; print what was written."""
    from hud_gym.jobs.export import ExportFormat, export_job

    job = load_job(job_id)
    fmt: ExportFormat = export_format.value
    default = {
        "jsonl": f"hud-gym-{job.id[:8]}.jsonl",
        "hud": f"hud-gym-{job.id[:8]}-hud.json",
        "video": f"hud-gym-{job.id[:8]}-replays",
    }[fmt]
    target = out or Path(default)
    if fmt == "video" and target.exists() and not target.is_dir():
        raise CLIError(f"--out {target} is a file; a video export writes a directory")
    if fmt != "video" and target.is_dir():
        raise CLIError(f"--out {target} is a directory; a {fmt} export writes a file")
    trajectories = job.load_trajectories()
    progress, on_progress = progress_bar(f"exporting {fmt}", len(trajectories))
    try:
        with progress:
            written = export_job(
                trajectories if fmt == "video" else job,
                fmt,
                target,
                images=images.value,
                video_format=video_format.value,
                fps=fps,
                on_progress=on_progress,
            )
    except OSError as exc:
        raise CLIError(f"cannot write {target}: {exc.strerror or exc}", exit_code=1) from None
    if fmt == "video":
        typer.echo(f"{len(written)} replay(s) of {len(trajectories)} trajectories in {target.absolute()}")
        for path in written:
            typer.echo(str(path.absolute()))
    else:
        typer.echo(str(written[0].absolute()))


def report(
    job_id: Annotated[str, typer.Argument(metavar="ID", help=JOB_ID_HELP)],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="The HTML file (or a directory) to write; default <store>/reports/<job id>.html."
        ),
    ] = None,
    link_images: Annotated[
        bool,
        typer.Option("--link-images", help="Link the screenshot files instead of embedding them (a smaller page)."),
    ] = False,
    frame_width: Annotated[
        int, typer.Option("--frame-width", min=16, max=4096, help="Embedded screenshots' width (pixels).")
    ] = 360,
    max_trajectories: Annotated[
        int | None, typer.Option("--max-trajectories", min=0, help="Show at most N trajectory cards.")
    ] = None,
    embed_images: Annotated[
        bool,
        typer.Option(
            "--embed-images", help=f"Embed the screenshots even past {LINK_ABOVE_STEPS} steps (a large, slow page)."
        ),
    ] = False,
) -> None:
    """Write an HTML report of a job (summary, tables, each trajectory as a filmstrip with its
    actions drawn on the frames) and print its path. Self-contained up to 500 steps; past that
    the screenshots are linked from the store (``--embed-images`` to embed them anyway)."""
    job = load_job(job_id)
    target = report_target(job, out)
    trajectories = job.load_trajectories()
    shown = len(trajectories) if max_trajectories is None else min(max_trajectories, len(trajectories))
    steps = sum(len(t.steps) for t in trajectories[:shown])
    if link_images and embed_images:
        raise CLIError("--link-images and --embed-images exclude each other")
    if not link_images and not embed_images and steps > LINK_ABOVE_STEPS:
        link_images = True
        typer.echo(
            f"{steps} steps: linking the screenshots from the store instead of embedding them "
            f"(--embed-images to embed)",
            err=True,
        )
    progress, on_progress = progress_bar("writing report", shown)
    with progress:
        path = write_report_or_fail(
            job,
            out,
            target,
            images="link" if link_images else "embed",
            frame_width=frame_width,
            max_trajectories=max_trajectories,
            trajectories=trajectories,
            on_progress=on_progress,
        )
    typer.echo(str(path))


def report_error(target: Path, exc: OSError, out: Path | None) -> CLIError:
    hint = "" if out is not None else "; pass --out FILE to write it elsewhere"
    return CLIError(f"cannot write the report to {target}: {exc.strerror or exc}{hint}")


def report_target(job: Any, out: Path | None) -> Path:
    """The report's path (``--out``, or a file in it when it is a directory, or the default one),
    its directory created: a place that cannot be written is one line before any work."""
    from hud_gym.cli.report import default_report_path

    target = out if out is not None else default_report_path(job)
    if target.is_dir():
        target = target / f"{job.id}.html"
    target = target.absolute()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise report_error(target, exc, out) from None
    if not os.access(target.parent, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise report_error(target, PermissionError(13, "not writable"), out)
    return target


def write_report_or_fail(job: Any, out: Path | None, target: Path | None = None, **options: Any) -> Path:
    """:func:`~hud_gym.cli.report.write_report` to ``target`` (:func:`_report_target` when
    ``None``), its failures as one line (with the default location, a hint to pass ``--out``)."""
    from hud_gym.cli.report import write_report

    target = target or report_target(job, out)
    try:
        return write_report(job, target, **options)
    except OSError as exc:
        raise report_error(target, exc, out) from None
