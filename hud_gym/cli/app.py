"""The ``hud-gym`` command line (typer): run task sets as jobs, inspect and export jobs, write
HTML reports, list task sets, check the machine, serve controllers.

User mistakes (an unknown task set, agent or job, a bad option value) print one line,
``hud-gym: error: ...``, on stderr and exit with code 2; nothing prints a traceback for them.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from hud_gym.cli.commands import doctor, run, serve, tasksets_app, ui
from hud_gym.cli.console import DEBUG_ENV_VAR, one_line, store_error
from hud_gym.cli.errors import USAGE_EXIT_CODE, CLIError
from hud_gym.cli.functions_command import functions
from hud_gym.cli.jobs_commands import jobs_app, report

# typer >= 0.2x vendors click as typer._click; older releases use click itself.
try:
    from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError
except ImportError:  # pragma: no cover  (older typer)
    from click.exceptions import ClickException, NoArgsIsHelpError, UsageError  # type: ignore[assignment]

__all__ = ["DEBUG_ENV_VAR", "app", "command"]

HELP = """Local Gymnasium environments for computer-use agents: run task sets as jobs, inspect,
export and report them.

Examples:

  hud-gym run miniwob --agent scripted --task click-test,enter-text --group-size 2

  hud-gym run desktop-basic --agent openai --model M --base-url http://127.0.0.1:8000/v1

  hud-gym functions browser

  hud-gym jobs list

  hud-gym report <job id>

  hud-gym ui
"""


class OneLineErrors(TyperGroup):
    """The root command: runs the CLI in non-standalone mode and turns every user error (click's
    usage errors, :class:`CLIError`, an unknown job) into one line on stderr and an exit code."""

    def main(  # type: ignore[override]  # click's overloads; this one always returns the exit code
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        from hud_gym.jobs.store import JobNotFoundError, StoreError

        try:
            result = super().main(
                args=args, prog_name=prog_name or "hud-gym", complete_var=complete_var, standalone_mode=False, **extra
            )
            code = result if isinstance(result, int) else 0
        except NoArgsIsHelpError as exc:
            typer.echo(exc.format_message(), err=True)
            code = exc.exit_code
        except UsageError as exc:
            hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
            typer.echo(f"hud-gym: error: {one_line(exc.format_message())}{hint}", err=True)
            code = exc.exit_code
        except ClickException as exc:
            typer.echo(f"hud-gym: error: {one_line(exc.format_message())}", err=True)
            code = exc.exit_code
        except CLIError as exc:
            typer.echo(f"hud-gym: error: {one_line(exc.message)}", err=True)
            code = exc.exit_code
        except JobNotFoundError as exc:
            typer.echo(f"hud-gym: error: {one_line(str(exc))} (see 'hud-gym jobs list')", err=True)
            code = USAGE_EXIT_CODE
        except StoreError as exc:  # read-only, not a database, too new a schema...
            typer.echo(f"hud-gym: error: {one_line(str(exc))}", err=True)
            code = USAGE_EXIT_CODE
        except sqlite3.DatabaseError as exc:  # a store damaged past its header, an I/O error
            if os.environ.get(DEBUG_ENV_VAR):
                raise
            typer.echo(f"hud-gym: error: {one_line(str(store_error(exc)))}", err=True)
            code = USAGE_EXIT_CODE
        except typer.Abort:
            typer.echo("hud-gym: aborted", err=True)
            code = 130
        if standalone_mode:
            sys.exit(code)
        return code


app = typer.Typer(
    cls=OneLineErrors,
    name="hud-gym",
    help=HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.command()(run)
app.add_typer(jobs_app, name="jobs")
app.command()(report)
app.add_typer(tasksets_app, name="tasksets")
app.command()(functions)
app.command()(doctor)
app.command()(serve)
app.command()(ui)


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
def root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """hud-gym command line."""
