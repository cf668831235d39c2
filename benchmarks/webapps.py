"""Generating and resetting a web-app task (target: <= 100 ms).

Per family, over ``--tasks`` seeds: the time to generate the task (:func:`generate_task`), to make
its episode's database (a new SQLite file from the seed, :func:`start_episode`), and a whole
``env.reset`` onto it (the database made, the app's page loaded and bound), in one browser env.
Prints the medians and 90th percentiles per family and overall. Then ``--check N`` (100 by
default, as ``make bench`` runs it; 0: skip): ``hud-gym tasksets check webapps --seeds N``.

Run: ``python -m benchmarks.webapps [--tasks 20] [--check 100]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium

import hud_gym  # noqa: F401  (registers the suites and families)
from hud_gym.core.family import families, generate_task
from hud_gym.core.gym_type import import_path
from hud_gym.suites.webapps.families import ENV_OPTIONS
from hud_gym.suites.webapps.functions import APPS
from hud_gym.suites.webapps.server import end_episode, start_episode


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    return f"{statistics.median(ordered) * 1000:7.1f} ms (p90 {ordered[int(0.9 * (len(ordered) - 1))] * 1000:.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, default=20, help="seeds per family")
    parser.add_argument("--check", type=int, default=100, help="then prove every family on this many seeds (0: no)")
    args = parser.parse_args()
    env = gymnasium.make("hud/Browser-v0", **ENV_OPTIONS)
    totals: dict[str, list[float]] = {"generate": [], "database": [], "generate + reset": []}
    print(f"| family | generate | database | generate + env.reset | ({args.tasks} seeds each)")
    print("|---|---:|---:|---:|")
    try:
        for family in families("webapps"):
            times: dict[str, list[float]] = {k: [] for k in totals}
            for seed in range(args.tasks):
                start = time.perf_counter()
                task = generate_task(family, 10_000 + seed, family.difficulties[seed % len(family.difficulties)])
                generated = time.perf_counter()
                setup = task.setup[0]  # type: ignore[index]
                episode = start_episode(import_path(APPS[setup.args[0]]), setup.args[1], owner=-1)
                times["database"].append(time.perf_counter() - generated)
                end_episode(episode.token)
                reset_start = time.perf_counter()
                env.reset(options={"task": task})
                times["generate"].append(generated - start)
                times["generate + reset"].append(generated - start + time.perf_counter() - reset_start)
            for key, samples in times.items():
                totals[key] += samples
            print(f"| {family.name} | {' | '.join(_ms(times[k]) for k in totals)} |", flush=True)
        print(f"| **all** | {' | '.join(_ms(totals[k]) for k in totals)} |")
    finally:
        env.close()
    if args.check:
        from hud_gym.cli import main as cli

        cli(["tasksets", "check", "webapps", "--seeds", str(args.check)])


if __name__ == "__main__":
    main()
