"""``hud-gym tasksets check NAME``: prove a task family, or every family of a kind, and print the table.

Per family (:func:`hud_gym.agents.family_check.check_family`): the oracle's success rate, the
do-nothing and random agents' success rates, the reward-hacking scripts played and how many
scored, and the oracle's mean steps per difficulty level. Exits 1 when a family fails.
"""

from __future__ import annotations

from typing import Annotated

import typer

from hud_gym.cli.console import stderr_console, stdout_console
from hud_gym.cli.errors import CLIError

__all__ = ["tasksets_check"]


def tasksets_check(
    name: Annotated[
        str, typer.Argument(help="A task family (e.g. 'mail-reply') or a kind ('webapps', 'office', 'files').")
    ],
    seeds: Annotated[
        int, typer.Option("--seeds", min=1, help="Tasks per family (train seeds 0..N-1, the levels in turn).")
    ] = 100,
) -> None:
    """Prove task families: the oracle scores 1 on every seed, doing nothing and random actions
    score at most 2%, the reward-hacking scripts score 0. Exit 1 if a family fails."""
    from rich.table import Table

    import hud_gym  # noqa: F401  (registers the suites and their families)
    from hud_gym.agents.family_check import check_family
    from hud_gym.core.family import families, get_family

    chosen = (get_family(name),) if name in {f.name for f in families()} else families(name)
    if not chosen:
        known = sorted({f.name for f in families()} | {f.kind for f in families()})
        raise CLIError(f"no task family or kind {name!r}; known: {', '.join(known)}")
    table = Table(title=f"task families: {name} ({seeds} seeds each)", title_justify="left")
    for column in ("family", "oracle", "do-nothing", "random", "hacking", "oracle steps by difficulty", "verdict"):
        table.add_column(column, no_wrap=column == "family")
    failed = []
    for family in chosen:
        report = check_family(family, seeds=seeds)
        steps = ", ".join(f"d{d}: {s:.1f}" for d, s in report.steps.items())
        hacking = f"{report.attacks_scored} of {report.attacks_played} scored"
        verdict = "[green]pass[/]" if report.passed else "[red]FAIL[/]"
        table.add_row(
            family.name,
            f"{report.oracle:.0%}",
            f"{report.nothing:.0%}",
            f"{report.random:.0%}",
            hacking,
            steps,
            verdict,
        )
        if not report.passed:
            failed.append(report)
        stderr_console().print(
            f"{family.name}: oracle {report.oracle:.0%}, do-nothing {report.nothing:.0%}, random {report.random:.0%}, "
            f"{hacking}, steps {steps}: {'pass' if report.passed else 'FAIL'}",
            markup=False,
            highlight=False,
        )
    stdout_console().print(table)
    for report in failed:
        for problem in report.problems[:20]:
            stderr_console().print(f"{report.family}: {problem}", markup=False, highlight=False)
    if failed:
        raise typer.Exit(1)
