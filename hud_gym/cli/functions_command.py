"""``hud-gym functions [GYM]``: every setup and evaluate function a task may name, per gym.

Each row: the gym, the phase, the name, the signature (without the context parameter) and the
first paragraph of the docstring; ``--json`` prints the same rows as JSON.
"""

from __future__ import annotations

import inspect
import json
import typing
from typing import Annotated, Any

import typer

from hud_gym.cli.errors import CLIError

__all__ = ["function_rows", "functions"]


def _parameter(parameter: inspect.Parameter) -> str:
    """``name: type = default`` with the annotation as written (no quotes)."""
    stars = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}
    text = stars.get(parameter.kind, "") + parameter.name  # type: ignore[call-overload]
    if parameter.annotation is not inspect.Parameter.empty:
        annotation = parameter.annotation
        if isinstance(annotation, str):
            written = annotation
        elif isinstance(annotation, type) and not typing.get_args(annotation):
            written = inspect.formatannotation(annotation)
        else:  # list[str], str | None: formatannotation would give the bare origin
            written = str(annotation).replace("typing.", "")
        text += f": {written}"
    if parameter.default is not inspect.Parameter.empty:
        text += f" = {parameter.default!r}"
    return text


def function_rows(gym: str | None = None) -> list[dict[str, Any]]:
    """One dict per function of ``gym`` (every gym when ``None``): ``gym``, ``phase``, ``name``,
    ``signature``, ``doc``, ``async``, ``isolated``.

    Raises:
        CLIError: an unknown gym.
    """
    import hud_gym  # noqa: F401  (registers the suites, whose modules add functions)
    from hud_gym.evaluation.registry import REGISTRY
    from hud_gym.gyms import all_gyms, get_gym

    try:
        gyms = [get_gym(gym)] if gym is not None else list(all_gyms())
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    rows: list[dict[str, Any]] = []
    for descriptor in gyms:
        for phase in ("setup", "evaluate"):
            for function in REGISTRY.functions(phase, descriptor.name):
                params = list(function.signature.parameters.values())[1:]
                rows.append(
                    {
                        "gym": descriptor.name,
                        "phase": phase,
                        "name": function.name,
                        "signature": f"{function.name}({', '.join(_parameter(p) for p in params)})",
                        "doc": function.summary,
                        "async": function.is_async,
                        "isolated": function.isolated,
                    }
                )
    return rows


def functions(
    gym: Annotated[
        str | None,
        typer.Argument(help="A gym (qa, browser, ubuntu, or an alias such as hud-browser); all when omitted."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the functions as JSON.")] = False,
) -> None:
    """List the setup and evaluate functions tasks may name, with their signatures and docs."""
    rows = function_rows(gym)
    if as_json:
        typer.echo(json.dumps(rows, indent=1))
        return
    from rich.table import Table

    from hud_gym.cli.console import stdout_console

    table = Table(title="setup and evaluate functions", title_justify="left", show_lines=False)
    for column in ("gym", "phase", "signature", "description"):
        table.add_column(column, overflow="fold", ratio=3 if column in ("signature", "description") else None)
    for row in rows:
        table.add_row(row["gym"], row["phase"], row["signature"], row["doc"])
    stdout_console().print(table)
