"""``hud-gym run``, ``tasksets list|show`` (and ``check``: :mod:`.family_command`), ``doctor`` and ``serve``."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from hud_gym.cli.console import DEBUG_ENV_VAR, one_line, stderr_console, stdout_console, store_damage
from hud_gym.cli.errors import CLIError
from hud_gym.cli.family_command import tasksets_check
from hud_gym.cli.jobs_commands import write_report_or_fail
from hud_gym.cli.jobs_manage import TAG_HELP, parse_tag_options

__all__ = ["doctor", "run", "serve", "tasksets_app", "ui"]

tasksets_app = typer.Typer(help="The task sets hud-gym knows by name.", no_args_is_help=True)
tasksets_app.command("check")(tasksets_check)


def run(
    taskset: Annotated[
        str, typer.Argument(help="A task set name (see 'hud-gym tasksets list') or a .json/.jsonl/.yaml file.")
    ],
    agent: Annotated[
        str,
        typer.Option(
            "--agent",
            "-a",
            help="A built-in agent (scripted: MiniWoB++ only; random), a model agent (claude, operator, openai) "
            "or an import path such as mypkg.agents:MyAgent.",
        ),
    ],
    envs: Annotated[int, typer.Option("--envs", "-n", min=1, help="Envs (runs) alive at once.")] = 8,
    group_size: Annotated[
        int, typer.Option("--group-size", "-g", min=1, help="Runs per task (a GRPO group, one seed).")
    ] = 1,
    job: Annotated[
        str | None, typer.Option("--job", "-j", help="The job's name (default '<agent> on <task set>').")
    ] = None,
    max_steps: Annotated[int | None, typer.Option("--max-steps", min=1, help="Step limit of each run.")] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Task i runs with seed SEED + i (random when unset).")
    ] = None,
    env_kwarg: Annotated[
        list[str] | None,
        typer.Option(
            "--env-kwarg",
            "-e",
            metavar="KEY=VALUE",
            help="An option of hud_gym.make for every env; VALUE is JSON or a string. Repeatable.",
        ),
    ] = None,
    task: Annotated[
        list[str] | None,
        typer.Option("--task", "-t", metavar="ID", help="Only these task ids (repeatable or comma-separated)."),
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Only the first N tasks.")] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", min=0.001, help="Seconds each run may take.")] = None,
    report: Annotated[bool, typer.Option("--report", help="Also write the HTML report and print its path.")] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the job, its analytics (and report path) as JSON.")
    ] = False,
    model: Annotated[str | None, typer.Option("--model", help="The model agent's model.")] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            help="The model server (e.g. http://127.0.0.1:8000/v1); keys come from ANTHROPIC_API_KEY / OPENAI_API_KEY.",
        ),
    ] = None,
    max_tokens: Annotated[int | None, typer.Option("--max-tokens", min=1, help="The model's reply limit.")] = None,
    temperature: Annotated[
        float | None, typer.Option("--temperature", min=0, max=2, help="Sampling temperature.")
    ] = None,
    system_prompt: Annotated[
        str | None, typer.Option("--system-prompt", help="The model agent's system prompt.")
    ] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", metavar="KEY=VALUE", help=TAG_HELP)] = None,
    debug: Annotated[
        bool, typer.Option("--debug", help="Print the traceback of every agent crash (and of a failed run).")
    ] = False,
) -> None:
    """Run every task of TASKSET with an agent, as one job in the store; print its analytics."""
    from hud_gym.cli.running import execute_run, parse_env_kwargs, plan_run
    from hud_gym.cli.tables import print_analytics
    from hud_gym.jobs.run_watch import JobStoppedError
    from hud_gym.jobs.store import StoreError, get_store

    get_store().require_writable()
    tags = parse_tag_options(tag)
    agent_options = {
        "model": model,
        "base_url": base_url,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "system_prompt": system_prompt,
    }
    plan = plan_run(
        taskset,
        agent,
        tasks=task or (),
        limit=limit,
        env_kwargs=parse_env_kwargs(env_kwarg or ()),
        seed=seed,
        agent_options=agent_options,
    )
    err = stderr_console()
    options = ", ".join(f"{k}={v!r}" for k, v in plan.env_kwargs.items()) or "defaults"
    err.print(
        f"running {len(plan.taskset)} task(s) x {group_size} with agent {plan.agent.label!r}, "
        f"{envs} env(s) at once (env options: {options})",
        markup=False,
    )
    for note in plan.notes:
        err.print(note, markup=False)
    try:
        job_ = execute_run(
            plan,
            name=job,
            envs=envs,
            group_size=group_size,
            max_steps=max_steps,
            seed=seed,
            timeout_s=timeout,
            metadata={"tags": tags} if tags else None,
            console=err,
        )
    except KeyboardInterrupt:
        raise CLIError("interrupted", exit_code=130) from None
    except StoreError:
        raise
    except JobStoppedError as exc:
        raise CLIError(f"{exc} (the job is stored as 'failed')", exit_code=1) from None
    except Exception as exc:  # e.g. a bad --env-kwarg makes every env fail to start
        if debug or os.environ.get(DEBUG_ENV_VAR):
            raise
        damage = store_damage(exc) if isinstance(exc, sqlite3.DatabaseError) else None
        if damage is not None:
            raise damage from None
        message = one_line(str(exc)).split(" was raised from the environment creator")[0]
        raise CLIError(
            f"the run failed: {type(exc).__name__}: {message} (the job is stored as 'failed'; "
            f"set {DEBUG_ENV_VAR}=1 for the traceback)",
            exit_code=1,
        ) from None
    analytics = job_.get_analytics()
    report_path = None
    if report:
        report_path = write_report_or_fail(job_, None)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "job": job_.to_dict(),
                    "analytics": analytics.model_dump(mode="json"),
                    "report": None if report_path is None else str(report_path),
                },
                indent=1,
            )
        )
        _fail_if_nothing_graded(analytics)
        return
    print_analytics(stdout_console(), analytics, job_)
    _first_error(job_, analytics, debug)
    if report_path is not None:
        typer.echo(f"report: {report_path}")
    typer.echo(f"job id: {job_.id}")
    _fail_if_nothing_graded(analytics)


def _fail_if_nothing_graded(analytics: Any) -> None:
    """Exit 1 when every run failed (no reward at all): the setup is broken, not the agent."""
    if analytics.finished and analytics.errors >= analytics.finished:
        counts = ", ".join(f"{n} {status}" for status, n in sorted(analytics.error_counts.items()))
        raise CLIError(f"every run failed, none was graded ({counts}): see the first error above", exit_code=1)


def _first_error(job: Any, analytics: Any, debug: bool) -> None:
    """When runs failed, show the first error so a broken setup (a bad --env-kwarg) is obvious;
    with ``debug``, the traceback of every agent crash."""
    from hud_gym.cli.tables import print_crashes

    if not analytics.errors:
        return
    failed = job.load_trajectories(status=list(analytics.error_counts))
    if failed and failed[0].error:
        hint = "" if debug or failed[0].traceback is None else " (--debug or `hud-gym jobs show` for the traceback)"
        stderr_console().print(
            f"first error ({failed[0].status}, task {failed[0].task_id}): {one_line(failed[0].error_summary)}{hint}",
            markup=False,
        )
    if debug:
        print_crashes(stderr_console(), failed, limit=len(failed))


# ---------------------------------------------------------------------- task sets


@tasksets_app.command("list")
def tasksets_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
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
        table.add_row(
            str(row["name"]),
            "—" if row["tasks"] is None else str(row["tasks"]),
            str(row["description"]) if row["error"] is None else f"[red]unavailable:[/] {row['error']}",
        )
    stdout_console().print(table)


@tasksets_app.command("show")
def tasksets_show(
    name: Annotated[str, typer.Argument(help="A task set name (see 'hud-gym tasksets list') or a task file.")],
    osworld: Annotated[
        str | None, typer.Option("--osworld", help="The OSWorld checkout (default: $HUD_GYM_OSWORLD).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """One task set: its tasks; for OSWorld-Ubuntu, per domain how many tasks load, how many
    run here, and why the others do not."""
    from rich.table import Table

    if name.lower() != "osworld-ubuntu":
        from hud_gym.tasksets import load_taskset

        try:
            taskset = load_taskset(name)
        except (ValueError, OSError) as exc:
            raise CLIError(str(exc)) from None
        rows = [{"id": t.id, "gym": t.gym, "prompt": (t.prompt or "")[:80]} for t in taskset]
        if as_json:
            typer.echo(json.dumps({"name": name, "tasks": rows}, indent=1))
            return
        table = Table(title=f"{name}: {len(rows)} tasks", title_justify="left")
        for column in ("id", "gym", "prompt"):
            table.add_column(column)
        for row in rows:
            table.add_row(str(row["id"]), str(row["gym"]), str(row["prompt"]))
        stdout_console().print(table)
        return
    from hud_gym.suites.osworld.taskset import domain_report

    try:
        reports = domain_report(osworld)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    if as_json:
        typer.echo(json.dumps([r.model_dump() for r in reports], indent=1))
        return
    table = Table(title="OSWorld-Ubuntu", title_justify="left")
    for column in ("domain", "tasks", "load", "run here", "why the others do not (tasks)"):
        table.add_column(column, justify="left" if column.startswith(("domain", "why")) else "right")
    for r in reports:
        reasons = sorted(r.why_not.items(), key=lambda item: -item[1])
        why = "\n".join(f"{count} {reason}" for reason, count in reasons[:6])
        if len(reasons) > 6:
            why += f"\n... {len(reasons) - 6} more reasons"
        table.add_row(r.domain, str(r.total), str(r.loads), str(r.runs_here), why)
    table.add_row("all", *(str(sum(getattr(r, k) for r in reports)) for k in ("total", "loads", "runs_here")), "")
    stdout_console().print(table)


# ---------------------------------------------------------------------- doctor, serve


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


def serve(
    gym: Annotated[
        str, typer.Argument(help="The gym type to serve: qa, browser or ubuntu (with --protocol hud: a task set).")
    ],
    host: Annotated[str, typer.Option("--host", help="Address to bind (default: loopback).")] = "127.0.0.1",
    port: Annotated[
        int | None,
        typer.Option("--port", min=0, max=65535, help="Port (0 = a free one; default 8765, with --protocol hud 0)."),
    ] = None,
    token_file: Annotated[
        Path | None,
        typer.Option(
            "--token-file",
            metavar="FILE",
            help="A file holding the token clients must present (default: $HUD_GYM_SERVER_TOKEN, else a generated "
            "one, printed). Never on the command line, where every user of the machine can read it.",
        ),
    ] = None,
    token: Annotated[str | None, typer.Option("--token", hidden=True)] = None,
    max_message_size: Annotated[
        int | None, typer.Option("--max-message-size", min=1024, help="Largest client message answered, in bytes.")
    ] = None,
    trust_client_options: Annotated[
        bool,
        typer.Option(
            "--trust-client-options",
            help="Accept controller options that reach beyond the sandbox (allow_shell, executable_path, ...).",
        ),
    ] = False,
    imports: Annotated[
        list[str] | None,
        typer.Option(
            "--import",
            metavar="MODULE",
            help="Import MODULE first (to register your own setup/evaluate functions); repeatable.",
        ),
    ] = None,
    protocol: Annotated[
        str,
        typer.Option(
            "--protocol",
            help="ws: hud-gym's controller protocol; hud: HUD 0.6's control channel for a task set "
            "(prints HUD_SERVE_PORT=<port>; loopback only).",
        ),
    ] = "ws",
    mcp: Annotated[bool, typer.Option("--mcp", help="Serve one env as an MCP server (the mcp extra).")] = False,
    openenv: Annotated[
        bool, typer.Option("--openenv", help="Serve one env through OpenEnv's HTTP/WebSocket contract.")
    ] = False,
    transport: Annotated[
        str, typer.Option("--transport", help="With --mcp: stdio (default) or http (streamable HTTP, token).")
    ] = "stdio",
    task: Annotated[
        str | None, typer.Option("--task", metavar="REF", help="With --mcp/--openenv: the served task (SET/ID).")
    ] = None,
    taskset: Annotated[
        str | None, typer.Option("--taskset", metavar="NAME", help="With --mcp/--openenv: the served task set.")
    ] = None,
    env_options: Annotated[
        list[str] | None,
        typer.Option(
            "--option",
            metavar="KEY=VALUE",
            help="With --mcp, --openenv or --protocol hud: an env option (VALUE read as JSON, else a string); "
            "repeatable.",
        ),
    ] = None,
) -> None:
    """Serve the controllers of one gym type over WebSocket for remote envs (until Ctrl-C); with
    --mcp or --openenv, one env of that gym through that protocol instead; with --protocol hud, a task
    set on HUD 0.6's control channel."""
    import importlib

    from hud_gym.controllers.remote import server

    if protocol not in ("ws", "hud"):
        raise CLIError(f"--protocol {protocol!r}: expected ws or hud")
    if protocol == "hud":
        _serve_hud(
            gym, host, port or 0, env_options, refused=token_file or token or max_message_size or trust_client_options
        )
        return
    if token is not None:
        raise CLIError(server.TOKEN_ON_COMMAND_LINE)
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
    if mcp or openenv:
        from hud_gym.cli.protocol_serve import serve_protocol

        if mcp and openenv:
            raise CLIError("--mcp and --openenv: serve one protocol at a time")
        if trust_client_options:
            raise CLIError(
                "--trust-client-options is for the controller server: MCP and OpenEnv clients set no options"
            )
        serve_protocol(
            "mcp" if mcp else "openenv",
            gym,
            transport=transport,
            host=host,
            port=server.DEFAULT_PORT if port is None else port,
            token=secret,
            max_message_size=max_message_size,
            task=task,
            taskset=taskset,
            options=env_options or [],
        )
        return
    try:
        gym = server.served_gym(gym)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    port = server.DEFAULT_PORT if port is None else port
    try:
        server.serve(
            gym,
            host,
            port,
            secret,
            max_message_size=max_message_size or server.DEFAULT_MAX_MESSAGE_SIZE,
            trust_client_options=trust_client_options,
        )
    except OSError as exc:
        raise CLIError(f"cannot serve on {host}:{port}: {exc.strerror or exc}", exit_code=1) from None


def _serve_hud(taskset: str, host: str, port: int, env_options: list[str] | None, refused: object) -> None:
    """``serve --protocol hud``: :func:`hud_gym.protocols.hud_control.server.serve`."""
    from hud_gym.protocols.hud_control.server import serve as serve_hud

    if refused:
        raise CLIError(
            "--token-file, --max-message-size and --trust-client-options are the ws protocol's: HUD's control "
            "channel is loopback and same-user only, and each session's tools have their own token"
        )
    from hud_gym.cli.protocol_serve import env_options as parse_options

    options = parse_options(env_options or [])
    try:
        serve_hud(taskset, host, port, options)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    except OSError as exc:
        raise CLIError(f"cannot serve on {host}:{port}: {exc.strerror or exc}", exit_code=1) from None


def ui(
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port (0 = a free one).")] = 8000,
    host: Annotated[str, typer.Option("--host", help="Address to bind (default: loopback only).")] = "127.0.0.1",
    expose: Annotated[
        bool,
        typer.Option(
            "--expose",
            help="Allow a non-loopback --host; a token is then required ($HUD_GYM_UI_TOKEN or a generated one).",
        ),
    ] = False,
) -> None:
    """A local web app over the job store: jobs, runs with a step player, groups, live runs (read-only)."""
    try:
        from hud_gym.ui.server import UIExposureError, serve_ui
    except ModuleNotFoundError as exc:
        raise CLIError(f"hud-gym ui needs aiohttp ({exc}): pip install 'hud-gym[ui]'") from None
    from hud_gym.jobs.paths import resolve_home

    def ready(url: str) -> None:
        typer.echo(f"hud-gym ui: {url}  (read-only; Ctrl-C to stop)")
        sys.stdout.flush()

    try:
        serve_ui(resolve_home(None), host, port, expose=expose, ready=ready)
    except UIExposureError as exc:
        raise CLIError(str(exc)) from None
    except OSError as exc:
        raise CLIError(f"cannot serve on {host}:{port}: {exc.strerror or exc}", exit_code=1) from None
