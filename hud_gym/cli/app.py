"""The ``hud-gym`` command line (typer): run task sets as jobs, inspect and export jobs, write
HTML reports, list task sets, check the machine, serve controllers.

User mistakes (an unknown task set, agent or job, a bad option value) print one line,
``hud-gym: error: ...``, on stderr and exit with code 2; nothing prints a traceback for them.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Sequence
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from hud_gym.cli.errors import USAGE_EXIT_CODE, CLIError

# typer >= 0.2x vendors click as typer._click; older releases use click itself.
try:
    from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError
except ImportError:  # pragma: no cover  (older typer)
    from click.exceptions import ClickException, NoArgsIsHelpError, UsageError  # type: ignore[assignment]

__all__ = ["DEBUG_ENV_VAR", "app", "command"]

DEBUG_ENV_VAR = "HUD_GYM_DEBUG"
"""Set it to show the traceback of a run that failed as a whole."""

HELP = """Local Gymnasium environments for computer-use agents: run task sets as jobs, inspect,
export and report them.

Examples:

  hud-gym run miniwob --agent scripted --task click-test,enter-text --group-size 2

  hud-gym jobs list

  hud-gym report <job id>
"""


JOB_ID_HELP = "A job id or a unique prefix of one."


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in str(text).strip().splitlines() if part.strip())


class OneLineErrors(TyperGroup):
    """The root command: runs the CLI in non-standalone mode and turns every user error (click's
    usage errors, :class:`CLIError`, an unknown job) into one line on stderr and an exit code."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        from hud_gym.jobs.store import JobNotFoundError, StoreError

        try:
            result = super().main(args=args, prog_name=prog_name or "hud-gym", complete_var=complete_var,
                                  standalone_mode=False, **extra)
            code = result if isinstance(result, int) else 0
        except NoArgsIsHelpError as exc:
            typer.echo(exc.format_message(), err=True)
            code = exc.exit_code
        except UsageError as exc:
            hint = f" (see '{exc.ctx.command_path} --help')" if getattr(exc, "ctx", None) is not None else ""
            typer.echo(f"hud-gym: error: {_one_line(exc.format_message())}{hint}", err=True)
            code = exc.exit_code
        except ClickException as exc:
            typer.echo(f"hud-gym: error: {_one_line(exc.format_message())}", err=True)
            code = exc.exit_code
        except CLIError as exc:
            typer.echo(f"hud-gym: error: {_one_line(exc.message)}", err=True)
            code = exc.exit_code
        except JobNotFoundError as exc:
            typer.echo(f"hud-gym: error: {_one_line(str(exc))} (see 'hud-gym jobs list')", err=True)
            code = USAGE_EXIT_CODE
        except StoreError as exc:  # read-only, not a database, too new a schema...
            typer.echo(f"hud-gym: error: {_one_line(str(exc))}", err=True)
            code = USAGE_EXIT_CODE
        except sqlite3.DatabaseError as exc:  # a store damaged past its header, an I/O error
            if os.environ.get(DEBUG_ENV_VAR):
                raise
            typer.echo(f"hud-gym: error: {_one_line(str(_store_error(exc)))}", err=True)
            code = USAGE_EXIT_CODE
        except typer.Abort:
            typer.echo("hud-gym: aborted", err=True)
            code = 130
        if standalone_mode:
            sys.exit(code)
        return code


def _damage(exc: sqlite3.DatabaseError) -> Exception | None:
    """The one-line error for a job store that is not a database or is damaged, else ``None``."""
    from hud_gym.jobs.connection import damaged
    from hud_gym.jobs.database import DB_NAME
    from hud_gym.jobs.paths import resolve_home

    return damaged(exc, resolve_home() / DB_NAME)


def _store_error(exc: sqlite3.DatabaseError) -> Exception:
    """What a database error of the job store means for the user, in one line."""
    from hud_gym.jobs.paths import resolve_home

    return _damage(exc) or RuntimeError(f"the job store in {resolve_home()} failed: {type(exc).__name__}: {exc} "
                                        f"(set {DEBUG_ENV_VAR}=1 for the traceback)")


app = typer.Typer(cls=OneLineErrors, name="hud-gym", help=HELP, no_args_is_help=True, add_completion=False,
                  pretty_exceptions_enable=False, context_settings={"help_option_names": ["-h", "--help"]})
jobs_app = typer.Typer(help="List, show and export the jobs in the store ($HUD_GYM_HOME).", no_args_is_help=True)
tasksets_app = typer.Typer(help="The task sets hud-gym knows by name.", no_args_is_help=True)
app.add_typer(jobs_app, name="jobs")
app.add_typer(tasksets_app, name="tasksets")


def command() -> Any:
    """The click command behind :data:`app` (for ``CliRunner().invoke(command(), args)``)."""
    return typer.main.get_command(app)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"hud-gym {version('hud-gym')}")
        except PackageNotFoundError:
            typer.echo("hud-gym (not installed as a distribution)")
        raise typer.Exit(0)


@app.callback()
def root(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                               help="Print the version and exit.")] = False) -> None:
    """hud-gym command line."""


def _stdout() -> Any:
    from hud_gym.cli.tables import make_console

    return make_console()


def _stderr() -> Any:
    from hud_gym.cli.tables import make_console

    return make_console(stderr=True)


def _progress(description: str, total: int) -> Any:
    """A progress bar on stderr and its ``on_progress(done, total)`` callback."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    progress = Progress(TextColumn(description), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=_stderr(), transient=True)
    task = progress.add_task(description, total=total)

    def on_progress(done: int, _total: int) -> None:
        progress.update(task, completed=done)

    return progress, on_progress


def _load_job(job_id: str) -> Any:
    from hud_gym.jobs.job import load_job

    return load_job(job_id)


# ---------------------------------------------------------------------- run

@app.command()
def run(
    taskset: Annotated[str, typer.Argument(
        help="A task set name (see 'hud-gym tasksets list') or a .json/.jsonl/.yaml file.")],
    agent: Annotated[str, typer.Option(
        "--agent", "-a", help="A built-in agent (scripted, random) or an import path such as mypkg.agents:MyAgent.")],
    envs: Annotated[int, typer.Option("--envs", "-n", min=1, help="Envs (runs) alive at once.")] = 8,
    group_size: Annotated[int, typer.Option(
        "--group-size", "-g", min=1, help="Runs per task (a GRPO group, one seed).")] = 1,
    job: Annotated[str | None, typer.Option(
        "--job", "-j", help="The job's name (default '<agent> on <task set>').")] = None,
    max_steps: Annotated[int | None, typer.Option("--max-steps", min=1, help="Step limit of each run.")] = None,
    seed: Annotated[int | None, typer.Option(
        "--seed", help="Task i runs with seed SEED + i (random when unset).")] = None,
    env_kwarg: Annotated[list[str] | None, typer.Option(
        "--env-kwarg", "-e", metavar="KEY=VALUE",
        help="An option of hud_gym.make for every env; VALUE is JSON or a string. Repeatable.")] = None,
    task: Annotated[list[str] | None, typer.Option(
        "--task", "-t", metavar="ID", help="Only these task ids (repeatable or comma-separated).")] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Only the first N tasks.")] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", min=0.001, help="Seconds each run may take.")] = None,
    report: Annotated[bool, typer.Option("--report", help="Also write the HTML report and print its path.")] = False,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the job, its analytics (and report path) as JSON.")] = False,
) -> None:
    """Run every task of TASKSET with an agent, as one job in the store; print its analytics."""
    from hud_gym.cli.running import execute_run, parse_env_kwargs, plan_run
    from hud_gym.cli.tables import print_analytics
    from hud_gym.jobs.store import StoreError, get_store

    get_store().require_writable()
    plan = plan_run(taskset, agent, tasks=task or (), limit=limit, env_kwargs=parse_env_kwargs(env_kwarg or ()),
                    seed=seed)
    err = _stderr()
    options = ", ".join(f"{k}={v!r}" for k, v in plan.env_kwargs.items()) or "defaults"
    err.print(f"running {len(plan.taskset)} task(s) x {group_size} with agent {plan.agent.label!r}, "
              f"{envs} env(s) at once (env options: {options})", markup=False)
    try:
        job_ = execute_run(plan, name=job, envs=envs, group_size=group_size, max_steps=max_steps, seed=seed,
                           timeout_s=timeout, console=err)
    except KeyboardInterrupt:
        raise CLIError("interrupted", exit_code=130) from None
    except StoreError:
        raise
    except Exception as exc:  # e.g. a bad --env-kwarg makes every env fail to start
        if os.environ.get(DEBUG_ENV_VAR):
            raise
        if isinstance(exc, sqlite3.DatabaseError) and _damage(exc) is not None:
            raise _damage(exc) from None
        message = _one_line(str(exc)).split(" was raised from the environment creator")[0]
        raise CLIError(f"the run failed: {type(exc).__name__}: {message} (the job is stored as 'failed'; "
                       f"set {DEBUG_ENV_VAR}=1 for the traceback)", exit_code=1) from None
    analytics = job_.get_analytics()
    report_path = None
    if report:
        report_path = _write_report(job_, None)
    if as_json:
        typer.echo(json.dumps({"job": job_.to_dict(), "analytics": analytics.model_dump(mode="json"),
                               "report": None if report_path is None else str(report_path)}, indent=1))
        return
    print_analytics(_stdout(), analytics, job_)
    _first_error(job_, analytics)
    if report_path is not None:
        typer.echo(f"report: {report_path}")
    typer.echo(f"job id: {job_.id}")


def _first_error(job: Any, analytics: Any) -> None:
    """When runs failed, show the first error so a broken setup (a bad --env-kwarg) is obvious."""
    if not analytics.errors:
        return
    failed = job.load_trajectories(status=list(analytics.error_counts))
    if failed and failed[0].error:
        _stderr().print(f"first error ({failed[0].status}, task {failed[0].task_id}): {_one_line(failed[0].error)}",
                        markup=False)


# ---------------------------------------------------------------------- jobs

@jobs_app.command("list")
def jobs_list(
    limit: Annotated[int, typer.Option("--limit", "-l", min=1, help="Show at most N jobs (newest first).")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (one object per job) instead of a table.")] = False,
) -> None:
    """The jobs in the store, newest first, with their figures."""
    from hud_gym.cli.tables import jobs_table
    from hud_gym.jobs.job import list_jobs

    rows = [(job, job.get_analytics()) for job in list_jobs(limit)]
    if as_json:
        typer.echo(json.dumps([{**job.to_dict(), "trajectories": a.trajectories, "success_rate": a.success_rate,
                                "mean_reward": a.mean_reward, "errors": a.errors} for job, a in rows], indent=1))
        return
    if not rows:
        from hud_gym.jobs.paths import resolve_home

        typer.echo(f"no jobs in {resolve_home()} (run one with 'hud-gym run')")
        return
    _stdout().print(jobs_table(rows))


@jobs_app.command("show")
def jobs_show(
    job_id: Annotated[str, typer.Argument(metavar="ID", help=JOB_ID_HELP)],
    trajectories: Annotated[bool, typer.Option("--trajectories", "-t", help="Also list every trajectory.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the job and its analytics as JSON.")] = False,
) -> None:
    """A job's summary, per-task and per-group tables."""
    from hud_gym.cli.tables import print_analytics, trajectories_table

    job = _load_job(job_id)
    analytics = job.get_analytics()
    if as_json:
        typer.echo(json.dumps({"job": job.to_dict(), "analytics": analytics.model_dump(mode="json")}, indent=1))
        return
    console = _stdout()
    print_analytics(console, analytics, job)
    if trajectories:
        console.print(trajectories_table(job.load_trajectories()))


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
    export_format: Annotated[ExportFormatChoice, typer.Option(
        "--format", "-f", help="jsonl (training data), hud (HUD-style JSON) or video (a replay per trajectory).",
    )] = ExportFormatChoice.jsonl,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="The file (jsonl, hud) or directory (video) to write; default in the current directory.",
    )] = None,
    images: Annotated[ImagesChoice, typer.Option(
        "--images", help="Screenshots as file paths, inline base64 data URLs, or none.")] = ImagesChoice.path,
    video_format: Annotated[VideoFormatChoice, typer.Option(
        "--video-format", help="Replay format.")] = VideoFormatChoice.mp4,
    fps: Annotated[float, typer.Option("--fps", min=0.05, max=60, help="Replay frames per second.")] = 1.0,
) -> None:
    """Export a job's trajectories as JSONL, HUD-style JSON or video replays; print what was written."""
    from hud_gym.jobs.export import export_job

    job = _load_job(job_id)
    fmt = export_format.value
    default = {"jsonl": f"hud-gym-{job.id[:8]}.jsonl", "hud": f"hud-gym-{job.id[:8]}-hud.json",
               "video": f"hud-gym-{job.id[:8]}-replays"}[fmt]
    target = out or Path(default)
    if fmt == "video" and target.exists() and not target.is_dir():
        raise CLIError(f"--out {target} is a file; a video export writes a directory")
    if fmt != "video" and target.is_dir():
        raise CLIError(f"--out {target} is a directory; a {fmt} export writes a file")
    trajectories = job.load_trajectories()
    progress, on_progress = _progress(f"exporting {fmt}", len(trajectories))
    try:
        with progress:
            written = export_job(trajectories if fmt == "video" else job, fmt, target, images=images.value,
                                 video_format=video_format.value, fps=fps, on_progress=on_progress)
    except OSError as exc:
        raise CLIError(f"cannot write {target}: {exc.strerror or exc}", exit_code=1) from None
    if fmt == "video":
        typer.echo(f"{len(written)} replay(s) of {len(trajectories)} trajectories in {target.absolute()}")
        for path in written:
            typer.echo(str(path.absolute()))
    else:
        typer.echo(str(written[0].absolute()))


# ---------------------------------------------------------------------- report

@app.command()
def report(
    job_id: Annotated[str, typer.Argument(metavar="ID", help=JOB_ID_HELP)],
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="The HTML file (or a directory) to write; default <store>/reports/<job id>.html.")] = None,
    link_images: Annotated[bool, typer.Option(
        "--link-images", help="Link the screenshot files instead of embedding them (a smaller page).")] = False,
    frame_width: Annotated[int, typer.Option(
        "--frame-width", min=16, max=4096, help="Embedded screenshots' width (pixels).")] = 360,
    max_trajectories: Annotated[int | None, typer.Option(
        "--max-trajectories", min=0, help="Show at most N trajectory cards.")] = None,
) -> None:
    """Write a self-contained HTML report of a job (summary, tables, each trajectory as a
    filmstrip) and print its path."""
    job = _load_job(job_id)
    target = _report_target(job, out)
    trajectories = job.load_trajectories()
    shown = len(trajectories) if max_trajectories is None else min(max_trajectories, len(trajectories))
    progress, on_progress = _progress("writing report", shown)
    with progress:
        path = _write_report(job, out, target, images="link" if link_images else "embed", frame_width=frame_width,
                             max_trajectories=max_trajectories, trajectories=trajectories, on_progress=on_progress)
    typer.echo(str(path))


def _report_error(target: Path, exc: OSError, out: Path | None) -> CLIError:
    hint = "" if out is not None else "; pass --out FILE to write it elsewhere"
    return CLIError(f"cannot write the report to {target}: {exc.strerror or exc}{hint}")


def _report_target(job: Any, out: Path | None) -> Path:
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
        raise _report_error(target, exc, out) from None
    if not os.access(target.parent, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise _report_error(target, PermissionError(13, "not writable"), out)
    return target


def _write_report(job: Any, out: Path | None, target: Path | None = None, **options: Any) -> Path:
    """:func:`~hud_gym.cli.report.write_report` to ``target`` (:func:`_report_target` when
    ``None``), its failures as one line (with the default location, a hint to pass ``--out``)."""
    from hud_gym.cli.report import write_report

    target = target or _report_target(job, out)
    try:
        return write_report(job, target, **options)
    except OSError as exc:
        raise _report_error(target, exc, out) from None


# ---------------------------------------------------------------------- task sets

@tasksets_app.command("list")
def tasksets_list(as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False) -> None:
    """The task sets known by name, with their number of tasks."""
    from rich.table import Table

    from hud_gym.tasksets import available_tasksets, load_taskset

    rows = []
    for name in available_tasksets():
        try:
            taskset = load_taskset(name)
            rows.append({"name": name, "tasks": len(taskset), "description": taskset.description or "", "error": None})
        except Exception as exc:  # noqa: BLE001  (a set whose optional package is missing is listed as unavailable)
            rows.append({"name": name, "tasks": None, "description": "", "error": f"{type(exc).__name__}: {exc}"})
    if as_json:
        typer.echo(json.dumps(rows, indent=1))
        return
    table = Table(title="task sets", title_justify="left")
    for column in ("name", "tasks", "description"):
        table.add_column(column, justify="right" if column == "tasks" else "left", no_wrap=column == "name")
    for row in rows:
        table.add_row(row["name"], "—" if row["tasks"] is None else str(row["tasks"]),
                      row["description"] if row["error"] is None else f"[red]unavailable:[/] {row['error']}")
    _stdout().print(table)


# ---------------------------------------------------------------------- doctor, serve

@app.command()
def doctor(
    no_launch: Annotated[bool, typer.Option("--no-launch", help="Do not start Chromium to test it.")] = False,
) -> None:
    """Check Chromium, Xvfb, versions and extras; say what to install. Exit 1 if a required
    check fails."""
    from hud_gym.cli.doctor import exit_code, render_checks, run_checks

    checks = run_checks(launch_browser=not no_launch)
    typer.echo(render_checks(checks))
    code = exit_code(checks)
    if code:
        typer.echo("\nsome required checks failed: run the 'fix' commands above", err=True)
    raise typer.Exit(code)


@app.command()
def serve(
    gym: Annotated[str, typer.Argument(help="The gym type to serve: qa, browser or ubuntu.")],
    host: Annotated[str, typer.Option("--host", help="Address to bind (default: loopback).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port (0 = a free one).")] = 8765,
    token_file: Annotated[Path | None, typer.Option(
        "--token-file", metavar="FILE",
        help="A file holding the token clients must present (default: $HUD_GYM_SERVER_TOKEN, else a generated "
             "one, printed). Never on the command line, where every user of the machine can read it.")] = None,
    token: Annotated[str | None, typer.Option("--token", hidden=True)] = None,
    max_message_size: Annotated[int | None, typer.Option(
        "--max-message-size", min=1024, help="Largest client message answered, in bytes.")] = None,
    trust_client_options: Annotated[bool, typer.Option(
        "--trust-client-options",
        help="Accept controller options that reach beyond the sandbox (allow_shell, executable_path, ...).")] = False,
    imports: Annotated[list[str] | None, typer.Option(
        "--import", metavar="MODULE",
        help="Import MODULE first (to register your own setup/evaluate functions); repeatable.")] = None,
) -> None:
    """Serve the controllers of one gym type over WebSocket for remote envs (until Ctrl-C)."""
    import importlib

    from hud_gym.controllers.remote import server

    if token is not None:
        raise CLIError(server.TOKEN_ON_COMMAND_LINE)
    if gym not in server.GYM_CONTROLLERS:
        raise CLIError(f"unknown gym {gym!r}; choose one of {', '.join(sorted(server.GYM_CONTROLLERS))}")
    try:
        secret = server.read_token(token_file)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    for module in server.server_imports(imports or ()):
        try:
            importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001  (the user's module: report it in one line)
            where = "--import" if module in (imports or ()) else f"${server.IMPORTS_ENV_VAR}:"
            raise CLIError(f"{where} {module}: {type(exc).__name__}: {exc}") from None
    try:
        server.serve(gym, host, port, secret, max_message_size=max_message_size or server.DEFAULT_MAX_MESSAGE_SIZE,
                     trust_client_options=trust_client_options)
    except OSError as exc:
        raise CLIError(f"cannot serve on {host}:{port}: {exc.strerror or exc}", exit_code=1) from None
