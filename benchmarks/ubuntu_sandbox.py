"""The desktop sandbox's cost: ``hud/Ubuntu-v0`` step and reset with and without it, in one run.

Two envs at 1280x720 (openbox), ``sandbox=True`` (the default) and ``sandbox=False``, measured in
alternating blocks (the order flips every round), so machine load hits both alike:

- **step**: ``env.step(ClickAction)`` on the event-log window's toggle (every click changes the
  frame), returning the observation;
- **reset, empty**: ``env.reset()`` of a desktop with nothing running;
- **reset, killing an app**: ``env.reset()`` with the event-log (Tk) window open;
- **reset + setup launching xterm**: ``env.reset()`` of a task whose setup is ``launch("xterm")``
  (so it kills the previous episode's xterm and starts a new one: with the sandbox, that includes
  the episode's new sandbox).

Per measure: median wall ms, and CPU ms per operation summed over every process involved (this
process, the env's Xvfb, window manager, sandboxes and apps, the processes that ended included:
their time reaches this process's ``children`` times once reaped). Ratios sandbox / no sandbox.
Targets: step <= 1.1x, reset <= 1.5x. Run: ``python -m benchmarks.ubuntu_sandbox [--rounds N]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

import psutil

import hud_gym  # noqa: F401  (registers the ids)
from benchmarks.ubuntu_step import _open_eventlog
from hud_gym import Task
from hud_gym.actions import ClickAction
from hud_gym.envs.ubuntu import UbuntuEnv

SIZE = (1280, 720)
VARIANTS = ("sandbox", "no sandbox")
XTERM_TASK = Task(id="xterm", prompt="", gym="hud-ubuntu", setup=("launch", "xterm"))


def tree_cpu_seconds() -> float:
    """CPU seconds of this process and every descendant, reaped ones included."""
    me = psutil.Process(os.getpid())
    total = 0.0
    for process in [me, *me.children(recursive=True)]:
        try:
            times = process.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


def _block(
    operation: Callable[[], Any], count: int, before: Callable[[], Any] | None = None
) -> tuple[list[float], float]:
    """Run ``operation`` ``count`` times: wall ms of each, and CPU ms per operation (``before`` is
    run ahead of each, outside the measurement)."""
    walls, cpu = [], 0.0
    for _ in range(count):
        if before is not None:
            before()
        cpu_start, started = tree_cpu_seconds(), time.perf_counter()
        operation()
        walls.append((time.perf_counter() - started) * 1000)
        cpu += tree_cpu_seconds() - cpu_start
    return walls, cpu * 1000 / count


def run(rounds: int = 6, steps: int = 15, resets: int = 3) -> dict[str, dict[str, dict[str, float]]]:
    """Measure; returns ``{measure: {variant: {"wall": median ms, "cpu": ms per operation}}}``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # sandbox=False warns
        envs = {
            name: UbuntuEnv(screen_size=SIZE, max_steps=10**9, in_container=False, sandbox=name == "sandbox")
            for name in VARIANTS
        }
        for env in envs.values():
            env.reset()
    walls: dict[str, dict[str, list[float]]] = {}
    cpus: dict[str, dict[str, list[float]]] = {}

    def record(measure: str, variant: str, result: tuple[list[float], float]) -> None:
        walls.setdefault(measure, {}).setdefault(variant, []).extend(result[0])
        cpus.setdefault(measure, {}).setdefault(variant, []).append(result[1])

    try:
        for round_ in range(rounds):
            for variant in VARIANTS if round_ % 2 == 0 else VARIANTS[::-1]:
                env = envs[variant]
                env.reset()
                target = _open_eventlog(env, "bench-events.jsonl")
                env.step(ClickAction(point=target))
                record("step", variant, _block(lambda env=env, t=target: env.step(ClickAction(point=t)), steps))
                record(
                    "reset, killing an app",
                    variant,
                    _block(env.reset, resets, before=lambda env=env: _open_eventlog(env, "bench-events.jsonl")),
                )
                record("reset, empty", variant, _block(env.reset, resets))
                env.reset(options={"task": XTERM_TASK})
                record(
                    "reset + setup launching xterm",
                    variant,
                    _block(lambda env=env: env.reset(options={"task": XTERM_TASK}), resets),
                )
    finally:
        for env in envs.values():
            env.close()
    return {
        measure: {
            variant: {
                "wall": statistics.median(walls[measure][variant]),
                "cpu": statistics.median(cpus[measure][variant]),
            }
            for variant in VARIANTS
        }
        for measure in walls
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args(argv)
    results = run(args.rounds)
    print(
        "| measure | sandbox wall ms | no sandbox wall ms | wall ratio | sandbox CPU ms | no sandbox CPU ms | CPU ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for measure, by in results.items():
        s, n = by["sandbox"], by["no sandbox"]
        print(
            f"| {measure} | {s['wall']:.1f} | {n['wall']:.1f} | {s['wall'] / n['wall']:.2f}x | {s['cpu']:.1f} | "
            f"{n['cpu']:.1f} | {s['cpu'] / n['cpu']:.2f}x |"
        )
    print("\ntargets: step <= 1.1x, reset <= 1.5x")


if __name__ == "__main__":
    main()
