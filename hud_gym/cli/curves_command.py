"""``hud-gym jobs curves KEY``: success per task set across the jobs tagged KEY (a learning curve),
printed, as JSON, or written to TensorBoard (:mod:`hud_gym.jobs.curves`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from hud_gym.cli.console import stdout_console
from hud_gym.cli.errors import CLIError

__all__ = ["jobs_curves"]


def jobs_curves(
    key: Annotated[str, typer.Argument(help="The tag key the jobs are ordered by (e.g. ckpt).")],
    agent: Annotated[str | None, typer.Option("--agent", "-a", help="Only the jobs run by this agent.")] = None,
    taskset: Annotated[str | None, typer.Option("--taskset", help="Only the jobs of this task set.")] = None,
    tensorboard: Annotated[
        Path | None,
        typer.Option("--tensorboard", metavar="DIR", help="Also write the curves as TensorBoard scalars to DIR."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the points as JSON.")] = False,
) -> None:
    """Success per task set (and per task) across the jobs tagged KEY, in the order of its values."""
    from rich.table import Table

    from hud_gym.cli.numbers import fmt, pct
    from hud_gym.jobs.curve_hooks import CurveHookUnavailableError, write_tensorboard
    from hud_gym.jobs.curves import learning_curves, tag_keys
    from hud_gym.jobs.store import get_store

    store = get_store()
    store.reconcile()
    points = learning_curves(store, key, agent=agent, taskset=taskset)
    if not points:
        known = ", ".join(tag_keys(store)) or "none"
        raise CLIError(f"no job is tagged {key!r} (tag keys in the store: {known}; tag jobs with --tag {key}=VALUE)")
    if tensorboard is not None:
        try:
            result = write_tensorboard(points, tensorboard)
        except CurveHookUnavailableError as exc:
            raise CLIError(str(exc)) from None
        skipped = f"; left out (not integer steps): {', '.join(result.skipped)}" if result.skipped else ""
        typer.echo(f"{result.scalars} scalars written to {result.logdir.absolute()}{skipped}", err=True)
    if as_json:
        typer.echo(json.dumps([point.model_dump(mode="json") for point in points], indent=1))
        return
    table = Table(title=f"success across {key}", title_justify="left")
    for column in (key, "job", "task set", "runs", "errors", "success", "reward"):
        table.add_column(column, justify="right" if column in (key, "runs", "errors", "success", "reward") else "left")
    for point in points:
        table.add_row(
            point.value,
            f"{point.job_id[:8]} {point.name}",
            point.taskset or "—",
            str(point.runs),
            str(point.errors),
            pct(point.success_rate),
            fmt(point.mean_reward),
        )
    stdout_console().print(table)
