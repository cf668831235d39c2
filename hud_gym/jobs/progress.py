"""A job's progress as its runs finish: counts, mean reward, steps/s, and a rich bar with an ETA.

:class:`RunTally` counts; :class:`JobProgressBar` draws it (``run_job(progress=True)`` and
``hud-gym run``). The words are the analytics' ones: a run is *solved* (graded at or above the
success threshold), *unsolved* (graded below it) or an *error* (no reward: ``env_error``,
``timeout``, ...), never "failed", which the tables keep for infrastructure failures.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from hud_gym.jobs.analytics import is_success
from hud_gym.trajectory import Trajectory

__all__ = ["JobProgressBar", "RunTally"]


@dataclass
class RunTally:
    """What the finished runs of a job add up to so far."""

    total: int
    solved: int = 0
    unsolved: int = 0
    errors: int = 0
    steps: int = 0
    reward_sum: float = 0.0
    started: float = field(default_factory=time.monotonic)

    @property
    def finished(self) -> int:
        """Runs finished."""
        return self.solved + self.unsolved + self.errors

    @property
    def mean_reward(self) -> float | None:
        """Mean reward of the graded runs (``None`` before the first)."""
        graded = self.solved + self.unsolved
        return self.reward_sum / graded if graded else None

    @property
    def steps_per_second(self) -> float:
        """Steps of the finished runs per second of wall time."""
        elapsed = time.monotonic() - self.started
        return self.steps / elapsed if elapsed > 0 else 0.0

    def add(self, trajectory: Trajectory) -> str:
        """Count a finished run; returns its outcome: ``solved``, ``unsolved`` or ``error``."""
        self.steps += len(trajectory.steps)
        if trajectory.failed or trajectory.reward is None or not math.isfinite(trajectory.reward):
            self.errors += 1
            return "error"
        self.reward_sum += trajectory.reward
        if is_success({"reward": trajectory.reward, "status": trajectory.status, "grade": trajectory.grade}):
            self.solved += 1
            return "solved"
        self.unsolved += 1
        return "unsolved"

    def summary(self, markup: bool = False) -> str:
        """``3 solved 1 unsolved 0 errors · mean reward 0.75 · 12.0 steps/s``."""
        mean = "—" if self.mean_reward is None else f"{self.mean_reward:.3g}"
        parts = (
            (
                f"[green]{self.solved} solved[/]",
                f"[yellow]{self.unsolved} unsolved[/]",
                f"[magenta]{self.errors} errors[/]",
            )
            if markup
            else (f"{self.solved} solved", f"{self.unsolved} unsolved", f"{self.errors} errors")
        )
        return f"{' '.join(parts)} · mean reward {mean} · {self.steps_per_second:.1f} steps/s"


class JobProgressBar:
    """A rich progress bar over a job's runs, advanced once per finished run.

    Example:
        >>> bar = JobProgressBar("scripted on miniwob", total=4)   # doctest: +SKIP
        >>> with bar: bar.add(trajectory)                          # doctest: +SKIP
    """

    def __init__(self, description: str, total: int, console: Console | None = None) -> None:
        self.tally = RunTally(total)
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(bar_width=24),
            MofNCompleteColumn(),
            TextColumn("{task.fields[tally]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console or Console(stderr=True),
        )
        self._bar = self.progress.add_task(description, total=total, tally=self.tally.summary(markup=True))

    def __enter__(self) -> JobProgressBar:
        self.progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.stop()

    def add(self, trajectory: Trajectory) -> str:
        """Count a finished run and advance the bar; returns its outcome."""
        outcome = self.tally.add(trajectory)
        self.progress.update(self._bar, advance=1, tally=self.tally.summary(markup=True))
        return outcome
