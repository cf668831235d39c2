"""How long a desktop task family's task takes to make and to reset (issue 26's speed target:
an office task, file made and app opened, <= 3 s).

One ``hud/Ubuntu-v0`` env (1280x720, openbox, the default sandbox). Per family, for a few seeds
(at the family's levels in turn): **generate** = ``generate_task(family, seed, level)`` (the
task's parameters and its setup calls); **reset** = ``env.reset(options={"task": task})``: a
fresh episode's home, the task's files written (an office task: its ``.xlsx``/``.docx`` made
with openpyxl / python-docx) and, for an office task, LibreOffice started until the document's
window shows (the setup's ``launch`` waits for it); for a files task, the terminal's window.

**reset CPU** = the CPU time of that reset summed over this process and every descendant (Xvfb,
the sandboxes, LibreOffice; ended ones included through their reapers): the figure that does
not grow with other work on the machine (LibreOffice goes on working after its window shows: that
part is not counted).

Run: ``python -m benchmarks.families_desktop [--kinds office,files] [--seeds 3]``. Prints a
Markdown table (medians and maxima, ms) and the load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import gymnasium

import hud_gym  # noqa: F401  (registers the ids and the families)
from benchmarks.ubuntu_sandbox import tree_cpu_seconds
from hud_gym.core.family import families, generate_task


def measure(env: gymnasium.Env, name: str, seeds: int) -> tuple[list[float], list[float], list[float]]:
    """(generate ms, reset ms, reset CPU ms summed over the process tree) of ``seeds`` tasks of
    the family ``name``."""
    family = next(f for f in families() if f.name == name)
    generated, reset, cpu = [], [], []
    for index in range(seeds):
        began = time.perf_counter()
        task = generate_task(family, 1000 + index, family.difficulties[index % len(family.difficulties)])
        generated.append((time.perf_counter() - began) * 1000)
        began, cpu_began = time.perf_counter(), tree_cpu_seconds()
        env.reset(options={"task": task})
        reset.append((time.perf_counter() - began) * 1000)
        cpu.append((tree_cpu_seconds() - cpu_began) * 1000)
    return generated, reset, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", default="office,files", help="comma-separated kinds of family")
    parser.add_argument("--seeds", type=int, default=3, help="tasks per family")
    args = parser.parse_args()
    env = gymnasium.make("hud/Ubuntu-v0", max_steps=100_000, in_container=False, step_timeout=120, reset_timeout=300)
    try:
        env.reset(seed=0)
        load = os.getloadavg()
        print(
            "| family | generate ms (median / max) | reset ms (median / max) | reset CPU ms (median) |"
            "\n|---|---:|---:|---:|"
        )
        for kind in args.kinds.split(","):
            for family in families(kind):
                generated, reset, cpu = measure(env, family.name, args.seeds)
                print(
                    f"| {family.name} | {statistics.median(generated):.1f} / {max(generated):.1f} "
                    f"| {statistics.median(reset):.0f} / {max(reset):.0f} | {statistics.median(cpu):.0f} |",
                    flush=True,
                )
        after = os.getloadavg()
        print(f"\nload average (1 min) {load[0]:.1f} before, {after[0]:.1f} after; {os.cpu_count()} cores")
    finally:
        env.close()


if __name__ == "__main__":
    main()
