"""The rule that stops a job at a start failure that will repeat, and only then."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from hud_gym.jobs.run_watch import JobStoppedError, RunWatcher
from hud_gym.trajectory import Trajectory

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
CRASH = "SetupError: setup miniwob_start('click-test-2') failed: TargetClosedError: Page crashed"


def failed_at_reset(task: str, started: float, ended: float, error: str = CRASH) -> Trajectory:
    return Trajectory(
        task_id=task,
        status="env_error",
        error=error,
        started_at=T0 + timedelta(seconds=started),
        ended_at=T0 + timedelta(seconds=ended),
    )


def test_runs_started_side_by_side_and_hit_by_one_cause_do_not_stop_the_job() -> None:
    watcher = RunWatcher("job", total=16, distinct_tasks=1)
    for _ in range(8):  # a browser killed under eight setups at once
        watcher.on_run(failed_at_reset("click-test-2", started=0.0, ended=1.0))
    assert watcher.stopped is None
    watcher.on_run(Trajectory(task_id="click-test-2", status="ok", reward=1.0, started_at=T0, ended_at=T0))
    watcher.on_run(failed_at_reset("click-test-2", started=2.0, ended=3.0))  # a run has started: no rule
    assert watcher.stopped is None and watcher.tally.finished == 10


def test_a_start_failure_that_repeats_on_a_later_run_stops_the_job() -> None:
    watcher = RunWatcher("job", total=6, distinct_tasks=1)
    watcher.on_run(failed_at_reset("t", started=0.0, ended=1.0))
    watcher.on_run(failed_at_reset("t", started=0.5, ended=1.2))  # began before the first failed
    assert watcher.stopped is None
    with pytest.raises(JobStoppedError, match=r"stopped after 3 of 6 run\(s\): no env could start \(SetupError"):
        watcher.on_run(failed_at_reset("t", started=1.0, ended=2.0))
    assert watcher.stopped is not None


def test_with_several_tasks_the_repeat_must_span_two_of_them() -> None:
    watcher = RunWatcher("job", total=6, distinct_tasks=3)
    watcher.on_run(failed_at_reset("a", started=0.0, ended=1.0))
    watcher.on_run(failed_at_reset("a", started=2.0, ended=3.0))  # repeated, but on one task only
    assert watcher.stopped is None
    with pytest.raises(JobStoppedError):
        watcher.on_run(failed_at_reset("b", started=4.0, ended=5.0))


def test_different_errors_are_counted_apart() -> None:
    watcher = RunWatcher("job", total=6, distinct_tasks=1)
    watcher.on_run(failed_at_reset("t", started=0.0, ended=1.0, error="SetupError: one"))
    watcher.on_run(failed_at_reset("t", started=2.0, ended=3.0, error="SetupError: two"))
    assert watcher.stopped is None
