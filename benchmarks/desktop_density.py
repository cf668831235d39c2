"""Density against OSWorld's anchor: N concurrent ``hud/Ubuntu-v0`` envs, each with LibreOffice
Calc open on a task file, in one process on this machine.

Each env (1280x720, openbox, the default sandbox) resets onto a task whose setup writes a fresh
``.xlsx`` (made with openpyxl, 200 rows, different at every reset) into the episode's home
(:func:`density_workbook`, through the home's safe file access) and opens it with the gym's own
``open_file`` setup (Calc starts in the episode's sandbox, as its uid); the reset returns once the
document's window is up. The baseline is the same envs and tasks with ``xterm`` in place of Calc
(the file is written all the same). Per variant, all N envs open at once:

- **PSS per env**: ``/proc/<pid>/smaps_rollup`` summed over every process of the env's three
  sandboxes (Xvfb, openbox, the episode's: bwrap, its init and supervisor, the app and its
  helpers; :mod:`benchmarks.density_probe`), a few seconds after the last reset; and by program.
  The benchmark's Python (shared by all N envs) is reported apart.
- **reset**: ``env.reset`` onto a fresh file, one env at a time while the others stay open:
  killing the episode, emptying and refilling the home, writing the file, starting the app, its
  window (wall time; CPU of this process's whole tree, reaped processes included).
- **step**: ``env.step`` typing one character (into the cell, or the terminal), envs in turn:
  wall time, and CPU = ``utime + stime`` of the env's processes and of this process.

Run: ``python -m benchmarks.desktop_density [--envs 8] [--resets 3] [--steps 20]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import statistics
import time
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import openpyxl
import psutil

import hud_gym  # noqa: F401  (registers the ids)
from benchmarks.density_probe import cpu_seconds, env_processes, pss_kib
from benchmarks.ubuntu_sandbox import tree_cpu_seconds
from hud_gym import Task
from hud_gym.actions import TypeAction
from hud_gym.controllers.ubuntu import profile
from hud_gym.controllers.ubuntu.homefs import HomeFiles
from hud_gym.envs.ubuntu import UbuntuEnv
from hud_gym.evaluation import FunctionContext, setup_function

SIZE = (1280, 720)
APPS = ("libreoffice-calc", "xterm")
"""The measured app, then the baseline."""
OPEN_TIMEOUT = 180.0
"""Seconds a reset's app may take to show its window (8 starting at once on a loaded box)."""


@setup_function("ubuntu", name="density_workbook")
def density_workbook(ctx: FunctionContext, path: str, seed: int = 0, rows: int = 200) -> str:
    """Write a fresh ``.xlsx`` (``rows`` rows of ``seed``'s numbers) to ``path`` in the env's home."""
    controller = ctx.controller
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["item", "quantity", "price", "total"])
    draw = random.Random(seed)
    for row in range(2, rows + 2):
        sheet.append([f"item {row - 1}", draw.randint(1, 50), draw.randint(100, 9999) / 100, f"=B{row}*C{row}"])
    data = io.BytesIO()
    book.save(data)
    resolved = controller.resolve_path(path)
    HomeFiles(controller.home, getattr(controller, "file_owner", None)).write_bytes(resolved, data.getvalue())
    return str(resolved)


def task_for(app: str, env_index: int, episode: int) -> Task:
    """The task of ``env_index``'s ``episode``: a fresh workbook, opened in ``app`` (Calc), or the
    workbook and a terminal (``xterm``)."""
    name = f"task-{env_index}-{episode}.xlsx"
    path = f"Documents/{name}"
    write = {"function": "density_workbook", "kwargs": {"path": path, "seed": env_index * 1000 + episode}}
    if app == "xterm":
        opening: dict[str, Any] = {"function": "launch", "kwargs": {"app": "xterm", "timeout": OPEN_TIMEOUT}}
    else:
        wait = name.replace(".", r"\.")
        opening = {
            "function": "open_file",
            "kwargs": {"path": path, "app": app, "wait": wait, "timeout": OPEN_TIMEOUT},
        }
    return Task(id=f"density-{app}-{env_index}", prompt="", gym="hud-ubuntu", setup=[write, opening])


def env_memory(env: Any) -> dict[str, Any]:
    """``{"pss_kib", "by_program": {name: KiB}, "pids": {pid: sandbox}}`` of ``env``'s processes."""
    found = env_processes(env)
    by_program: dict[str, int] = defaultdict(int)
    total = 0
    for process in found.processes():
        pss = pss_kib(process.pid).get("Pss", 0)
        try:
            name = process.name()
        except psutil.Error:
            continue
        by_program[name] += pss
        total += pss
    return {"pss_kib": total, "by_program": dict(by_program), "pids": dict(found.members)}


def timed_step(env: Any, text: str) -> tuple[float, float]:
    """Wall ms and CPU ms (the env's processes and this process) of one typing step."""
    processes = env_processes(env).processes()
    me = psutil.Process()
    cpu_before = cpu_seconds(processes)
    own_before = sum(me.cpu_times()[:2])
    started = time.perf_counter()
    env.step(TypeAction(text=text))
    wall = time.perf_counter() - started
    own_after = sum(me.cpu_times()[:2])
    cpu = cpu_seconds(processes) - cpu_before + own_after - own_before
    return wall * 1000, cpu * 1000


def timed_reset(env: Any, task: Task) -> tuple[float, float]:
    """Wall ms and CPU ms (this process's tree, reaped processes included) of a reset onto ``task``."""
    cpu_before, started = tree_cpu_seconds(), time.perf_counter()
    env.reset(options={"task": task})
    return (time.perf_counter() - started) * 1000, (tree_cpu_seconds() - cpu_before) * 1000


@contextlib.contextmanager
def open_envs(n_envs: int) -> Iterator[list[UbuntuEnv]]:
    """``n_envs`` desktop envs (not reset yet), closed on exit."""
    envs = [UbuntuEnv(screen_size=SIZE, max_steps=10**9, in_container=False) for _ in range(n_envs)]
    try:
        yield envs
    finally:
        for env in envs:
            env.close()


def measure_open(envs: list[UbuntuEnv], app: str, resets: int, steps: int, settle: float = 5.0) -> dict[str, Any]:
    """Measure ``envs`` (fresh from :func:`open_envs`) with ``app``: the first resets, memory,
    steps, then resets onto fresh files (see the module docstring)."""
    result: dict[str, Any] = {"app": app, "first_reset_ms": [], "reset_ms": [], "reset_cpu_ms": []}
    for i, env in enumerate(envs):
        result["first_reset_ms"].append(timed_reset(env, task_for(app, i, 0))[0])
    time.sleep(settle)
    result["memory"] = [env_memory(env) for env in envs]
    result["python_pss_kib"] = pss_kib(os.getpid()).get("Pss", 0)
    walls, cpus = [], []
    for step in range(steps):
        for env in envs:
            wall, cpu = timed_step(env, "1234567890"[step % 10])
            walls.append(wall)
            cpus.append(cpu)
    result["step_ms"], result["step_cpu_ms"] = walls, cpus
    for episode in range(1, resets + 1):
        for i, env in enumerate(envs):
            wall, cpu = timed_reset(env, task_for(app, i, episode))
            result["reset_ms"].append(wall)
            result["reset_cpu_ms"].append(cpu)
    return result


def measure(app: str, n_envs: int, resets: int, steps: int, registry: bool = True) -> dict[str, Any]:
    """Open ``n_envs`` envs with ``app``, measure them, close them. ``registry=False``: the home
    profile without LibreOffice's extension registry (as before 2026-11-27), to see what it saves."""
    laid_down = profile._libreoffice_extension_files
    if not registry:
        profile._libreoffice_extension_files = dict
    try:
        with open_envs(n_envs) as envs:
            return measure_open(envs, app, resets, steps)
    finally:
        profile._libreoffice_extension_files = laid_down


def summary(result: dict[str, Any]) -> dict[str, float]:
    """Medians (and the PSS mean and max) of one variant's measures."""
    pss = [m["pss_kib"] / 1024 for m in result["memory"]]
    return {
        "pss_mean_mib": statistics.mean(pss),
        "pss_max_mib": max(pss),
        "reset_ms": statistics.median(result["reset_ms"]) if result["reset_ms"] else float("nan"),
        "reset_max_ms": max(result["reset_ms"], default=float("nan")),
        "reset_cpu_ms": statistics.median(result["reset_cpu_ms"]) if result["reset_cpu_ms"] else float("nan"),
        "first_reset_ms": statistics.median(result["first_reset_ms"]),
        "step_ms": statistics.median(result["step_ms"]) if result["step_ms"] else float("nan"),
        "step_cpu_ms": statistics.median(result["step_cpu_ms"]) if result["step_cpu_ms"] else float("nan"),
    }


def _programs(result: dict[str, Any]) -> str:
    """Mean PSS per env by program, largest first."""
    totals: dict[str, float] = defaultdict(float)
    for memory in result["memory"]:
        for name, kib in memory["by_program"].items():
            totals[name] += kib / 1024 / len(result["memory"])
    return ", ".join(f"{name} {mib:.1f}" for name, mib in sorted(totals.items(), key=lambda kv: -kv[1]))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--resets", type=int, default=3, help="resets per env after the first")
    parser.add_argument("--steps", type=int, default=20, help="steps per env")
    parser.add_argument(
        "--without-registry", action="store_true", help="also measure Calc with the profile of before 2026-11-27"
    )
    args = parser.parse_args(argv)
    load = os.getloadavg()
    results = {app: measure(app, args.envs, args.resets, args.steps) for app in APPS}
    if args.without_registry:
        result = measure(APPS[0], args.envs, args.resets, args.steps, registry=False)
        print(f"without the extension registry in the profile: {summary(result)}")
    rows = {app: summary(result) for app, result in results.items()}
    calc, base = rows[APPS[0]], rows[APPS[1]]
    print(f"| measure ({args.envs} envs) | {APPS[0]} | {APPS[1]} | ratio |\n|---|---:|---:|---:|")
    labels = {
        "pss_mean_mib": "PSS per env, mean MiB",
        "pss_max_mib": "PSS per env, max MiB",
        "first_reset_ms": "first reset ms (median)",
        "reset_ms": "reset onto a fresh file ms (median)",
        "reset_max_ms": "reset ms (max)",
        "reset_cpu_ms": "reset CPU ms (median)",
        "step_ms": "step ms (median)",
        "step_cpu_ms": "step CPU ms (median)",
    }
    for key, label in labels.items():
        print(f"| {label} | {calc[key]:.1f} | {base[key]:.1f} | {calc[key] / base[key]:.2f}x |")
    for app, result in results.items():
        print(f"\n{app}: PSS per env by program (MiB): {_programs(result)}")
        print(f"{app}: this process's PSS {result['python_pss_kib'] / 1024:.0f} MiB (shared by the {args.envs} envs)")
    after = os.getloadavg()
    print(f"\nload average (1 min) {load[0]:.1f} before, {after[0]:.1f} after; {os.cpu_count()} cores")
    print("targets: PSS per env <= 400 MB, reset <= 3 s")


if __name__ == "__main__":
    main()
