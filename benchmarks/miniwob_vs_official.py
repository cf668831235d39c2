"""MiniWoB++ click-test-2: hud/Browser-v0 (each capture path) vs the official ``miniwob`` env, side by side.

All sides run the same task pages from the ``miniwob`` package on the same Debian Chromium: the
official env through Selenium and Debian's ``chromium-driver``, ours through Playwright with
``capture="cdp"`` (CDP JPEG) and ``capture="headed"`` (MIT-SHM grab from a private Xvfb). Each observes
the 160x210 task area. Resets are seeded; steps click an empty spot of the task area (so the
episode goes on). The sides are measured interleaved call by call; wall is the median of N calls,
CPU the mean (``/proc`` counts 10 ms ticks). CPU is every process of the benchmark (this Python and all its descendants: drivers, every
Chromium, Xvfb) over the call: idle neighbours' page timers are included, the same for every side.

Run: ``python -m benchmarks.miniwob_vs_official [--n 40] [--captures cdp headed]`` (needs
``apt-get install chromium-driver``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import time
from collections.abc import Callable

import gymnasium
import numpy as np
import psutil

import hud_gym
from benchmarks.browser_capture import cpu_ms
from hud_gym.controllers.browser.chromium import find_chromium
from hud_gym.suites.miniwob import MINIWOB_TASK_AREA

TASK = "click-test-2"
EMPTY_SPOT = (5, 205)  # bottom-left corner of the task area: no element there


def _official_env() -> gymnasium.Env:
    chromedriver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    if not os.path.exists(chromedriver):
        raise RuntimeError("the official MiniWoB++ env needs chromedriver: apt-get install chromium-driver")
    os.environ.setdefault("MINIWOB_CHROME_BINARY", str(find_chromium()))
    os.environ.setdefault("MINIWOB_CHROMEDRIVER", chromedriver)
    import miniwob  # noqa: F401  (registers the official ids)

    return gymnasium.make(f"miniwob/{TASK}-v1")


def _all_cpu_ms() -> float:
    """CPU ms so far of this process and every descendant alive now."""
    pids = {os.getpid()} | {p.pid for p in psutil.Process().children(recursive=True)}
    return sum(cpu_ms(pids).values())


class Side:
    """One env and its reset/step calls, with per-call wall and CPU samples."""

    def __init__(self, name: str, env: gymnasium.Env, click: object) -> None:
        self.name, self.env, self.click = name, env, click
        self.samples: dict[str, list[tuple[float, float]]] = {"reset": [], "step": []}

    def timed(self, what: str, call: Callable[[], object]) -> None:
        cpu = _all_cpu_ms()
        started = time.perf_counter()
        call()
        wall = (time.perf_counter() - started) * 1000
        self.samples[what].append((wall, _all_cpu_ms() - cpu))

    def reset(self, seed: int) -> None:
        self.timed("reset", lambda: self.env.reset(seed=seed))

    def step(self) -> None:
        self.timed("step", lambda: self.env.step(self.click))

    def wall(self, what: str) -> float:
        """Median wall ms of the calls."""
        return statistics.median(s[0] for s in self.samples[what])

    def cpu(self, what: str) -> float:
        """Mean CPU ms of the calls (``/proc`` counts in 10 ms ticks: a median would round)."""
        return statistics.fmean(s[1] for s in self.samples[what])


def _sides(captures: list[str]) -> list[Side]:
    from miniwob.action import ActionTypes

    sides = []
    for capture in captures:
        env = gymnasium.make(
            "hud/Browser-v0",
            task=f"miniwob/{TASK}",
            observation_crop=MINIWOB_TASK_AREA,
            screen_size=(500, 320),
            capture=capture,
        )
        sides.append(Side(f"hud-gym {capture}", env, hud_gym.ClickAction(point=EMPTY_SPOT)))
    official = _official_env()
    click = official.unwrapped.create_action(ActionTypes.CLICK_COORDS, coords=np.array(EMPTY_SPOT))
    sides.append(Side("official", official, click))
    return sides


def main(argv: list[str] | None = None) -> None:
    """Print the table of medians and ratios to the official env."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40, help="resets per side (2 steps after each)")
    parser.add_argument("--captures", nargs="+", default=["cdp", "headed"], choices=["cdp", "headed"])
    args = parser.parse_args(argv)
    sides = _sides(args.captures)
    try:
        for side in sides:
            side.env.reset(seed=0)
            side.env.step(side.click)
        for i in range(args.n):
            for side in sides:
                side.reset(i + 1)
            for _ in range(2):
                for side in sides:
                    side.step()
        official = sides[-1]
        print(
            f"MiniWoB++ {TASK}, {args.n} resets + {2 * args.n} steps per side, interleaved (wall: median, CPU: mean); "
            f"load {os.getloadavg()[0]:.1f}"
        )
        print(f"{'':<18} {'reset ms':>9} {'CPU-ms':>7} {'step ms':>8} {'CPU-ms':>7} {'reset x':>8} {'step x':>7}")
        for side in sides:
            reset, step = side.wall("reset"), side.wall("step")
            print(
                f"{side.name:<18} {reset:>9.1f} {side.cpu('reset'):>7.1f} {step:>8.1f} {side.cpu('step'):>7.1f} "
                f"{reset / official.wall('reset'):>8.2f} {step / official.wall('step'):>7.2f}"
            )
    finally:
        for side in sides:
            side.env.close()


if __name__ == "__main__":
    main()
