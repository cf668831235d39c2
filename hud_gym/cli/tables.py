"""Rich tables of jobs and their analytics, shared by ``hud-gym`` and ``make demo``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from hud_gym.cli.numbers import fmt, pct
from hud_gym.jobs.analytics import JobAnalytics
from hud_gym.trajectory import Trajectory

__all__ = [
    "group_table",
    "jobs_table",
    "make_console",
    "print_analytics",
    "summary_table",
    "task_table",
    "trajectories_table",
]

_STATUS_STYLE = {
    "completed": "green",
    "running": "yellow",
    "failed": "red",
    "interrupted": "magenta",
    "ok": "green",
    "truncated": "yellow",
    "ungraded": "magenta",
}


def make_console(*, stderr: bool = False) -> Console:
    """A console on stdout (or stderr), at least 160 columns wide when not a terminal (pipes, CI
    logs), so tables are not squeezed."""
    console = Console(stderr=stderr, highlight=False)
    if not console.is_terminal:
        console = Console(stderr=stderr, highlight=False, width=max(console.width, 160))
    return console


def _status(status: str) -> Text:
    return Text(status, style=_STATUS_STYLE.get(status, "red"))


def summary_table(analytics: JobAnalytics, job: Any | None = None) -> Table:
    """The job's headline figures as a two-column table."""
    table = Table(title=f"job {analytics.name!r}", show_header=False, title_justify="left")
    table.add_column("figure", style="bold")
    table.add_column("value")
    table.add_row("id", analytics.job_id)
    table.add_row("status", _status(analytics.status))
    if job is not None and isinstance(getattr(job, "metadata", None), dict):
        from hud_gym.jobs.tags import job_settings

        settings = job_settings(job.metadata)
        for key in ("agent", "taskset", "seed"):
            if settings[key] is not None:
                table.add_row(key, str(settings[key]))
        if settings["tags"]:
            table.add_row("tags", " ".join(f"{k}={v}" if v else k for k, v in settings["tags"].items()))
    table.add_row(
        "trajectories",
        f"{analytics.trajectories} ({analytics.finished} finished"
        + (f", {analytics.running} running)" if analytics.running else ")"),
    )
    table.add_row(
        "success rate",
        f"{pct(analytics.success_rate)} ({analytics.successes}/{analytics.scored} scored runs, "
        f"reward >= {fmt(analytics.success_threshold)})",
    )
    table.add_row("mean reward", fmt(analytics.mean_reward))
    errors = ", ".join(f"{n} {s}" for s, n in sorted(analytics.error_counts.items()))
    table.add_row("errors", f"{analytics.errors}" + (f" ({errors})" if errors else ""))
    table.add_row("steps", f"{analytics.steps_total} (mean {fmt(analytics.steps_mean, 2)} per run)")
    d = analytics.duration
    table.add_row(
        "run duration",
        "—"
        if not d.count
        else f"mean {fmt(d.mean_s, 1)} s, p50 {fmt(d.p50_s, 1)} s, p95 {fmt(d.p95_s, 1)} s, max {fmt(d.max_s, 1)} s",
    )
    if job is not None and job.ended_at is not None:
        table.add_row("wall time", f"{(job.ended_at - job.created_at).total_seconds():.1f} s")
    if job is not None and job.error:
        table.add_row("job error", Text(job.error, style="red"))
    return table


def task_table(analytics: JobAnalytics) -> Table:
    """One row per task: runs, successes, errors, success rate, mean reward and steps."""
    table = Table(title="per task", title_justify="left")
    for name in ("task", "runs", "scored", "successes", "errors", "success rate", "mean reward", "mean steps"):
        table.add_column(name, justify="left" if name == "task" else "right", no_wrap=name == "task")
    for task in analytics.per_task:
        table.add_row(
            task.task_id or "(no id)",
            str(task.runs),
            str(task.scored),
            str(task.successes),
            Text(str(task.errors), style="red" if task.errors else ""),
            pct(task.success_rate),
            fmt(task.mean_reward),
            fmt(task.mean_steps, 1),
        )
    return table


def group_table(analytics: JobAnalytics) -> Table | None:
    """One row per GRPO group of more than one run (``None`` when there is none)."""
    groups = [g for g in analytics.per_group if len(g.rewards) > 1]
    if not groups:
        return None
    table = Table(title="per group", title_justify="left")
    for name in ("group", "task", "seed", "rewards", "mean", "std", "successes"):
        table.add_column(name, justify="right" if name in ("seed", "mean", "std", "successes") else "left")
    for g in groups:
        rewards = ", ".join(
            "error" if r is None else fmt(r) for r in g.rewards
        )  # no reward: not "failed" (below threshold)
        table.add_row(
            g.group_id[:8],
            g.task_id or "(no id)",
            "—" if g.seed is None else str(g.seed),
            rewards,
            fmt(g.mean),
            fmt(g.std),
            f"{g.successes}/{len(g.rewards)}",
        )
    return table


def print_analytics(console: Console, analytics: JobAnalytics, job: Any | None = None, *, groups: bool = True) -> None:
    """The summary, the per-task table and (``groups``) the per-group table."""
    parts: list[Any] = [summary_table(analytics, job), task_table(analytics)]
    group = group_table(analytics) if groups else None
    if group is not None:
        parts.append(group)
    console.print(Group(*parts))


def jobs_table(rows: Sequence[tuple[Any, JobAnalytics]]) -> Table:
    """One row per job (newest first): id, name, status, created, runs, success rate, reward, errors."""
    table = Table(title="jobs", title_justify="left")
    for name in ("id", "name", "status", "created", "runs", "success", "reward", "errors"):
        table.add_column(
            name,
            justify="right" if name in ("runs", "success", "reward", "errors") else "left",
            no_wrap=name in ("id", "status", "created"),
            overflow="fold",
        )
    for job, analytics in rows:
        table.add_row(
            job.id,
            job.name,
            _status(analytics.status),
            job.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            str(analytics.trajectories),
            pct(analytics.success_rate),
            fmt(analytics.mean_reward),
            Text(str(analytics.errors), style="red" if analytics.errors else ""),
        )
    return table


def trajectories_table(trajectories: Sequence[Trajectory]) -> Table:
    """One row per trajectory: id, task, group, status, reward (``no reward`` for failed runs), steps, error."""
    table = Table(title="trajectories", title_justify="left")
    for name in ("id", "task", "group", "run", "status", "reward", "steps", "error"):
        table.add_column(
            name, justify="right" if name in ("run", "reward", "steps") else "left", no_wrap=name in ("id", "group")
        )
    for t in trajectories:
        reward = Text("no reward", style="magenta") if t.failed or t.reward is None else Text(fmt(t.reward))
        table.add_row(
            t.trajectory_id[:12],
            t.task_id or "(no id)",
            (t.group_id or "")[:8],
            str(t.rollout_index),
            _status(t.status),
            reward,
            str(len(t.steps)),
            t.error_summary[:80],
        )
    return table


def print_crashes(console: Console, trajectories: Sequence[Trajectory], *, limit: int = 3) -> None:
    """The tracebacks of the runs whose agent crashed (``policy_error`` with a traceback), each
    distinct one once with the runs it ended, at most ``limit`` of them."""
    crashes: dict[str, list[Trajectory]] = {}
    for t in trajectories:
        if t.traceback is not None:
            crashes.setdefault(t.traceback, []).append(t)
    for shown, (text, runs) in enumerate(crashes.items()):
        if shown == limit:
            console.print(f"... and {len(crashes) - limit} more distinct traceback(s)", markup=False)
            break
        ids = ", ".join(f"{t.trajectory_id[:12]} ({t.task_id})" for t in runs[:5]) + (" ..." if len(runs) > 5 else "")
        console.print(f"{runs[0].error_summary}: {len(runs)} run(s): {ids}", style="red", markup=False)
        console.print(text, markup=False, highlight=False)
