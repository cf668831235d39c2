"""Memory of 8 browser envs sharing one Chromium vs 8 envs with a Chromium each.

Each side runs in child processes that make their envs, reset them onto the same page, and
wait; we then sum the proportional set size (PSS, from ``/proc/<pid>/smaps_rollup``) of every
Chromium process under each child. PSS splits shared pages fairly between processes, so the sum
is the real memory cost. Run: ``python -m benchmarks.browser_memory``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

N_ENVS = 8

CHILD = r"""
import sys, gymnasium, hud_gym
from hud_gym import Task
n = int(sys.argv[1])
html = "<h1>memory</h1>" + "<p>lorem ipsum dolor sit amet</p>" * 200
envs = [gymnasium.make("hud/Browser-v0") for _ in range(n)]
for env in envs:
    env.reset(seed=0, options={"task": Task(prompt="x", gym="hud-browser", setup=("load_html_content", html))})
print("ready", flush=True)
sys.stdin.readline()
for env in envs:
    env.close()
"""


def _children(pid: int) -> list[int]:
    out = []
    for task_dir in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out.extend(int(c) for c in (task_dir / "children").read_text().split())
        except OSError:
            pass
    return out


def _descendants(pid: int) -> list[int]:
    found, stack = [], [pid]
    while stack:
        for child in _children(stack.pop()):
            found.append(child)
            stack.append(child)
    return found


def _pss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _is_chromium(pid: int) -> bool:
    try:
        return "chrom" in Path(f"/proc/{pid}/comm").read_text() or "headless" in Path(f"/proc/{pid}/comm").read_text()
    except OSError:
        return False


def measure(processes: int, envs_per_process: int) -> tuple[float, int]:
    """Start ``processes`` children with ``envs_per_process`` envs each; return (MiB of
    Chromium PSS, number of Chromium processes)."""
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(envs_per_process)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(processes)
    ]
    try:
        for child in children:
            line = child.stdout.readline() if child.stdout else ""
            if line.strip() != "ready":
                raise RuntimeError(f"benchmark child failed to start: {line!r}")
        time.sleep(1.0)  # let the renderers settle after the first paint before sampling memory
        chromium = [p for c in children for p in _descendants(c.pid) if _is_chromium(p)]
        total_kib = sum(_pss_kib(p) for p in chromium)
        return total_kib / 1024, len(chromium)
    finally:
        for child in children:
            if child.stdin:
                child.stdin.write("\n")
                child.stdin.flush()
        for child in children:
            child.wait(timeout=60)


def main() -> None:
    """Print the table."""
    shared_mib, shared_n = measure(1, N_ENVS)
    separate_mib, separate_n = measure(N_ENVS, 1)
    print(f"{'setup':<32} {'Chromium PSS':>12} {'per env':>9} {'processes':>9}")
    print(
        f"{f'{N_ENVS} envs, one shared browser':<32} {shared_mib:>9.0f} MiB {shared_mib / N_ENVS:>5.0f} MiB {shared_n:>9}"
    )
    print(
        f"{f'{N_ENVS} envs, {N_ENVS} browsers':<32} {separate_mib:>9.0f} MiB {separate_mib / N_ENVS:>5.0f} MiB {separate_n:>9}"
    )
    print(f"ratio shared / separate: {shared_mib / separate_mib:.2f}x (target <= 0.6x)")


if __name__ == "__main__":
    if not os.path.isdir("/proc"):
        sys.exit("needs Linux /proc")
    main()
