"""Density against OSWorld's anchor: N concurrent ``hud/Ubuntu-v0`` envs, each with LibreOffice
Calc open on a task file, in one process on this machine.

Each env (1280x720, openbox, the default sandbox) resets onto a task whose setup writes a fresh
``.xlsx`` (made with openpyxl, 200 rows, different at every reset) into the episode's home
(:func:`density_workbook`, through the home's safe file access) and opens it with the gym's own
``open_file`` setup (Calc starts in the episode's sandbox, as its uid); the reset returns once the
document's window is up. The baseline is the same envs and tasks with ``xterm`` in place of Calc
(the file is written all the same). Per variant, all N envs open at once:

- **PSS per env**: ``/proc/<pid>/smaps_rollup`` summed over every process of the env's sandboxes
  (Xvfb, openbox, the episode's bwrap, init, supervisor, app; :mod:`benchmarks.density_probe`),
  after the first resets; and by program. This Python (shared by the N envs) is reported apart.
- **reset**: ``env.reset`` onto a fresh file, one env at a time while the others stay open (the
  episode killed, the home emptied and refilled, the file written, the app started, its window):
  wall time; CPU of this process, the env's Xvfb and openbox, and the new episode's processes.
- **step**: ``env.step`` typing one character (into the cell, or the terminal), envs in turn:
  wall time, and CPU = ``utime + stime`` of the env's processes and of this process.

Run: ``python -m benchmarks.desktop_density [--envs 8] [--resets 3] [--steps 20] [--without-registry]``.
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
    resolved = controller.desktop.resolve_path(path)
    HomeFiles(controller.state.home, controller.state.file_owner).write_bytes(resolved, data.getvalue())
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
    """Wall ms and CPU ms of a reset onto ``task``: this process, the env's Xvfb and openbox, and
    the new episode's processes (not the reaped tree: it adds the old episode's whole CPU)."""
    me = psutil.Process()
    old = env_processes(env)
    lasting = [p for p in old.processes() if old.members[p.pid] != "episode"]
    own_before, started = sum(me.cpu_times()[:2]), time.perf_counter()
    lasting_before = cpu_seconds(lasting)
    env.reset(options={"task": task})
    wall = time.perf_counter() - started
    own = sum(me.cpu_times()[:2]) - own_before
    new = env_processes(env)
    episode = [p for p in new.processes() if new.members[p.pid] == "episode"]
    return wall * 1000, (own + cpu_seconds(lasting) - lasting_before + cpu_seconds(episode)) * 1000


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
    """Measure ``envs`` (from :func:`open_envs`) with ``app`` (see the module docstring)."""
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
    """Open ``n_envs`` envs with ``app``, measure them, close them; ``registry=False``: the home
    profile without LibreOffice's extension registry (before 2026-11-27)."""
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
        "reset_cpu_ms": statistics.mean(result["reset_cpu_ms"]) if result["reset_cpu_ms"] else float("nan"),
        "first_reset_ms": statistics.median(result["first_reset_ms"]),
        "step_ms": statistics.median(result["step_ms"]) if result["step_ms"] else float("nan"),
        "step_cpu_ms": statistics.mean(result["step_cpu_ms"]) if result["step_cpu_ms"] else float("nan"),
    }


def _programs(result: dict[str, Any]) -> str:
    """Mean PSS per env by program, largest first."""
    totals: dict[str, float] = defaultdict(float)
    for memory in result["memory"]:
        for name, kib in memory["by_program"].items():
            totals[name] += kib / 1024 / len(result["memory"])
    return ", ".join(f"{name} {mib:.1f}" for name, mib in sorted(totals.items(), key=lambda kv: -kv[1]))


LABELS = {
    "pss_mean_mib": "PSS per env, mean MiB",
    "pss_max_mib": "PSS per env, max MiB",
    "first_reset_ms": "first reset ms (median)",
    "reset_ms": "reset onto a fresh file ms (median)",
    "reset_max_ms": "reset ms (max)",
    "reset_cpu_ms": "reset CPU ms (mean)",
    "step_ms": "step ms (median)",
    "step_cpu_ms": "step CPU ms (mean)",
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--resets", type=int, default=3, help="resets per env after the first")
    parser.add_argument("--steps", type=int, default=20, help="steps per env")
    parser.add_argument("--without-registry", action="store_true", help="also Calc with the profile of before")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    variants = [(app, True) for app in APPS] + ([(APPS[0], False)] if args.without_registry else [])
    results: dict[str, dict[str, Any]] = {}
    for app, registry in variants:
        name = app if registry else f"{app}, no registry"
        results[name] = measure(app, args.envs, args.resets, args.steps, registry=registry)
        print(f"({name} done, load average {os.getloadavg()[0]:.1f})", flush=True)
    rows = {name: summary(result) for name, result in results.items()}
    calc, base = rows[APPS[0]], rows[APPS[1]]
    names = list(rows)
    print(f"| measure ({args.envs} envs) | {' | '.join(names)} | {APPS[0]} / {APPS[1]} |")
    print("|---|" + "---:|" * (len(names) + 1))
    for key, label in LABELS.items():
        cells = " | ".join(f"{rows[name][key]:.1f}" for name in names)
        print(f"| {label} | {cells} | {calc[key] / base[key]:.2f}x |")
    for name, result in results.items():
        print(f"\n{name}: PSS per env by program (MiB): {_programs(result)}")
        print(f"{name}: this process's PSS {result['python_pss_kib'] / 1024:.0f} MiB (shared by the {args.envs} envs)")
    after = os.getloadavg()
    print(f"\nload average (1 min) {load[0]:.1f} before, {after[0]:.1f} after; {os.cpu_count()} cores")
    print("targets: PSS per env <= 400 MB, reset <= 3 s")


if __name__ == "__main__":
    main()
