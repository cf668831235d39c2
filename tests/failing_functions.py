"""Evaluate functions that fail in every way an evaluator can, for tests/test_failed_rewards.py.

A module of its own (not the test module) so that the evaluation worker process can import the
isolated ones by name, as it imports any isolated function.
"""

from __future__ import annotations

import threading
import time

from hud_gym.evaluation import FunctionContext, evaluate_function, setup_function

STARTED: dict[str, threading.Event] = {}
RELEASE: dict[str, threading.Event] = {}
FINISHED: dict[str, threading.Event] = {}
SEEN_DURING_HANG: dict[str, list[bool]] = {}
HANG_CAP_S = 30.0
"""The longest a hanging function blocks (so a broken run fails instead of hanging the suite)."""


def events(key: str) -> tuple[threading.Event, threading.Event, threading.Event]:
    """(started, release, finished) of the hang named ``key``, made anew."""
    STARTED[key], RELEASE[key], FINISHED[key] = threading.Event(), threading.Event(), threading.Event()
    SEEN_DURING_HANG[key] = []
    return STARTED[key], RELEASE[key], FINISHED[key]


@setup_function(name="failing_setup")
def failing_setup(ctx: FunctionContext) -> None:
    """A setup that cannot prepare its task (its page or server is gone)."""
    raise RuntimeError("the task's server is gone")


@evaluate_function(name="failing_raises")
def failing_raises(ctx: FunctionContext) -> float:
    """A buggy evaluator."""
    raise RuntimeError("evaluator bug: list index out of range")


@evaluate_function(name="failing_returns", isolated=True)
def failing_returns(ctx: FunctionContext, value: float) -> float:
    """Returns ``value`` as the reward (NaN, inf, 1e300, ...), from the worker process."""
    return value


@evaluate_function(name="failing_signed", isolated=True, reward_range=(-1.0, 1.0))
def failing_signed(ctx: FunctionContext, value: float) -> float:
    """Declares rewards in [-1, 1] (as MiniWoB++'s raw reward) and returns ``value``."""
    return value


@evaluate_function(name="failing_hangs")
def failing_hangs(ctx: FunctionContext, key: str) -> float:
    """A sync evaluator that blocks (on a thread) until the test releases it."""
    STARTED[key].set()
    try:
        RELEASE[key].wait(HANG_CAP_S)
    finally:
        FINISHED[key].set()
    return 1.0


@evaluate_function(name="failing_during_hang")
def failing_during_hang(ctx: FunctionContext, key: str) -> float:
    """Waits until the hang ``key`` has started, records whether it is still hanging, grades 1."""
    STARTED[key].wait(HANG_CAP_S)
    SEEN_DURING_HANG[key].append(STARTED[key].is_set() and not FINISHED[key].is_set())
    return 1.0


@evaluate_function(name="failing_sleeps", isolated=True)
def failing_sleeps(ctx: FunctionContext, seconds: float) -> float:
    """An isolated evaluator stuck in a loop for ``seconds`` (its worker process must be killed)."""
    time.sleep(seconds)
    return 1.0


@evaluate_function(name="failing_exits", isolated=True)
def failing_exits(ctx: FunctionContext) -> float:
    """Kills its own worker process (a crash in native code, an out-of-memory kill)."""
    import os

    os._exit(3)


@evaluate_function(name="failing_answers")
def failing_answers(ctx: FunctionContext, value: float) -> float:
    """A correct, fast sync evaluator that runs on a thread (not isolated): grades ``value``."""
    return value


@evaluate_function(name="failing_blocks")
def failing_blocks(ctx: FunctionContext, seconds: float) -> float:
    """A sync evaluator (on a thread, not killable) blocked for ``seconds``, as on a FIFO's read."""
    time.sleep(seconds)
    return 1.0


@evaluate_function(name="failing_spawns", isolated=True)
def failing_spawns(ctx: FunctionContext, pid_file: str, count: int) -> float:
    """Starts ``count`` ``sleep`` processes, writes their pids to ``pid_file``, then hangs (its
    worker is killed at the step's timeout: the sleeps must go with it)."""
    import subprocess
    from pathlib import Path

    children = [subprocess.Popen(["sleep", "3600"]) for _ in range(count)]
    Path(pid_file).write_text(" ".join(str(c.pid) for c in children))
    time.sleep(3600)
    return 1.0
