"""Generating and resetting a web-app task (target: <= 100 ms), against baselines in the same run.

One browser env (the families' ``ENV_OPTIONS``). For every family and ``--tasks`` seeds, in turn
(the order rotating per seed):

- **blank**: ``env.reset()`` with no task: the browser's own reset (tabs, cookies, storage, page
  at ``about:blank``) and a blank page's observation: the floor every reset pays;
- **before**: ``generate_task`` + ``env.reset`` the way it was done before: the database made from
  the seed (``app.create`` rows, the template cache emptied) and the page reset to ``about:blank``
  before the app's page is loaded (``keep_page`` off);
- **now**: ``generate_task`` + ``env.reset`` as shipped: the database a copy of the seed's template,
  the app's page loaded in place of the previous one.

Each is timed in wall ms and in CPU ms summed over this process and every descendant (Chromium's
processes, Playwright's driver; :func:`benchmarks.ubuntu_sandbox.tree_cpu_seconds`): on a shared
machine the CPU figure is the stable one. The **task's share** is ``now - blank``: what generating
the task, making its database and loading the app's page add to a reset. Then the database alone:
made from the seed in a new file vs copied from the template.

Run: ``python -m benchmarks.webapps [--tasks 5]``. The 100-seed proof of the families is
``python -m benchmarks.families_check`` (``make bench`` runs both).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium

import hud_gym  # noqa: F401  (registers the suites and families)
from benchmarks.ubuntu_sandbox import tree_cpu_seconds
from hud_gym.core.family import families, generate_task
from hud_gym.core.gym_type import import_path
from hud_gym.suites.webapps.families import ENV_OPTIONS
from hud_gym.suites.webapps.functions import APPS
from hud_gym.suites.webapps.server import end_episode, start_episode, template

VARIANTS = ("blank", "before", "now")


def _timed(run: Callable[[], Any]) -> tuple[float, float]:
    """(wall ms, CPU ms of the process tree) of ``run()``."""
    cpu, wall = tree_cpu_seconds(), time.perf_counter()
    run()
    return (time.perf_counter() - wall) * 1000, (tree_cpu_seconds() - cpu) * 1000


def _reset(env: gymnasium.Env, variant: str, family: Any, seed: int) -> None:
    if variant == "blank":
        env.reset()
        return
    if variant == "before":
        template.cache_clear()
    task = generate_task(family, seed, family.difficulties[seed % len(family.difficulties)])
    if variant == "before":
        task = task.model_copy(update={"config": {**(task.config or {}), "keep_page": False}})
    env.reset(options={"task": task})


def _seeded_file(app: Any, seed: int, folder: Path) -> None:
    """The old way: a new SQLite file, the app's rows inserted from the seed."""
    path = folder / f"{seed}.sqlite"
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA journal_mode=MEMORY")
        conn.execute("PRAGMA synchronous=OFF")
        with conn:
            app.create(conn, seed)
    finally:
        conn.close()
    path.unlink()


def measure_resets(tasks: int) -> dict[str, list[tuple[float, float]]]:
    """Per variant, (wall ms, CPU ms) of every reset (see the module docstring)."""
    env = gymnasium.make("hud/Browser-v0", **ENV_OPTIONS)
    samples: dict[str, list[tuple[float, float]]] = {v: [] for v in VARIANTS}
    try:
        env.reset()
        for family in families("webapps"):
            for index in range(tasks):
                seed = 10_000 + index
                shift = index % len(VARIANTS)
                for variant in VARIANTS[shift:] + VARIANTS[:shift]:
                    samples[variant].append(_timed(lambda v=variant, f=family, s=seed: _reset(env, v, f, s)))
    finally:
        env.close()
    return samples


def measure_databases(rounds: int) -> dict[str, list[tuple[float, float]]]:
    """(wall ms, CPU ms) of making an episode's database from the seed vs from the cached template."""
    samples: dict[str, list[tuple[float, float]]] = {"seeded": [], "template copy": []}
    with tempfile.TemporaryDirectory() as folder:
        for index in range(rounds):
            seed = 20_000 + index
            for name in APPS:
                app = import_path(APPS[name])
                samples["seeded"].append(_timed(lambda a=app, s=seed: _seeded_file(a, s, Path(folder))))
                template(app, seed)  # the first episode of a seed makes its template
                samples["template copy"].append(
                    _timed(lambda a=app, s=seed: end_episode(start_episode(a, s, owner=-1).token))
                )
    return samples


def _row(name: str, values: list[tuple[float, float]]) -> str:
    walls, cpus = [w for w, _ in values], [c for _, c in values]
    return f"| {name} | {statistics.median(walls):.1f} | {statistics.median(cpus):.1f} | {len(values)} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=5, help="seeds per family")
    args = parser.parse_args([] if __name__ != "__main__" else None)
    load = os.getloadavg()[0]
    resets = measure_resets(args.tasks)
    databases = measure_databases(10)
    print("| measure | wall ms (median) | CPU ms (median, process tree) | n |\n|---|---:|---:|---:|")
    for variant in VARIANTS:
        print(_row(f"reset: {variant}", resets[variant]))
    for name, values in databases.items():
        print(_row(f"database: {name}", values))
    share = [(n[0] - b[0], n[1] - b[1]) for n, b in zip(resets["now"], resets["blank"], strict=True)]
    before = [(n[0] - b[0], n[1] - b[1]) for n, b in zip(resets["before"], resets["blank"], strict=True)]
    print(_row("task's share now (now - blank, paired)", share))
    print(_row("task's share before (before - blank, paired)", before))
    print(f"\nload average (1 min) {load:.1f} before, {os.getloadavg()[0]:.1f} after; {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
