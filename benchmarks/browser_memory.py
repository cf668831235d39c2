"""Memory of 8 browser envs: sharing one Chromium (each capture path) vs a Chromium each.

Each setup runs in child processes that make their envs, reset them onto the same page, and
wait; we then sum the proportional set size (PSS, from ``/proc/<pid>/smaps_rollup``) of the
processes under each child: every Chromium process (the first table's column), and everything
the envs run (the Playwright driver, Chromium, the headed path's Xvfb) with and without the
child Pythons themselves. PSS splits shared pages fairly between processes, so the sum is the real
memory cost. Setups: ``capture="cdp"`` in one process (one shared headless browser),
``capture="headed"`` in one process (one shared headed browser, the envs' windows tiled on its
Xvfb), and 8 processes with one env each (8 headless browsers; and 8 headed browsers, each with
its own Xvfb). Run: ``python -m benchmarks.browser_memory [--size 1280x720]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

N_ENVS = 8

CHILD = r"""
import sys, gymnasium, hud_gym
from hud_gym import Task
n, capture, width, height = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
html = "<h1>memory</h1>" + "<p>lorem ipsum dolor sit amet</p>" * 200
envs = [gymnasium.make("hud/Browser-v0", capture=capture, screen_size=(width, height)) for _ in range(n)]
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


def measure(
    processes: int,
    envs_per_process: int,
    capture: str = "cdp",
    size: tuple[int, int] = (1280, 720),
    tiles: int = 8,
) -> dict[str, float]:
    """Start ``processes`` children with ``envs_per_process`` envs each; return MiB of PSS
    (``chromium``, ``all``: every descendant, ``python``: the children) and process counts
    (``n_chromium``, ``n_all``)."""
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(envs_per_process), capture, str(size[0]), str(size[1])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "HUD_GYM_HEADED_TILES": str(tiles)},
        )
        for _ in range(processes)
    ]
    try:
        for child in children:
            line = child.stdout.readline() if child.stdout else ""
            if line.strip() != "ready":
                raise RuntimeError(f"benchmark child failed to start: {line!r}")
        time.sleep(1.0)  # let the renderers settle after the first paint before sampling memory
        every = [p for c in children for p in _descendants(c.pid)]
        chromium = [p for p in every if _is_chromium(p)]
        return {
            "chromium": sum(_pss_kib(p) for p in chromium) / 1024,
            "all": sum(_pss_kib(p) for p in every) / 1024,
            "python": sum(_pss_kib(c.pid) for c in children) / 1024,
            "n_chromium": len(chromium),
            "n_all": len(every),
        }
    finally:
        for child in children:
            if child.stdin:
                child.stdin.write("\n")
                child.stdin.flush()
        for child in children:
            child.wait(timeout=60)


def main(argv: list[str] | None = None) -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="1280x720")
    args = parser.parse_args(argv)
    size = tuple(int(v) for v in args.size.split("x"))
    assert len(size) == 2
    setups = {
        f"{N_ENVS} envs, cdp, one shared browser": (1, N_ENVS, "cdp"),
        f"{N_ENVS} envs, headed, one shared browser": (1, N_ENVS, "headed", N_ENVS),
        f"{N_ENVS} envs, headed, 4 per browser": (1, N_ENVS, "headed", 4),
        f"{N_ENVS} envs, {N_ENVS} headless browsers": (N_ENVS, 1, "cdp"),
        f"{N_ENVS} envs, {N_ENVS} headed browsers": (N_ENVS, 1, "headed"),
    }
    rows = {name: measure(p, e, c, (size[0], size[1]), *t) for name, (p, e, c, *t) in setups.items()}
    print(f"{args.size}: PSS MiB (processes)")
    print(f"{'setup':<40} {'Chromium':>16} {'all but Python':>16} {'with Python':>12}")
    for name, r in rows.items():
        chromium = f"{r['chromium']:.0f} ({r['n_chromium']:.0f})"
        envs = f"{r['all']:.0f} ({r['n_all']:.0f})"
        print(f"{name:<40} {chromium:>16} {envs:>16} {r['all'] + r['python']:>12.0f}")
    base = rows[f"{N_ENVS} envs, {N_ENVS} headless browsers"]
    for name, r in rows.items():
        ratios = (r["chromium"] / base["chromium"], r["all"] / base["all"])
        with_python = (r["all"] + r["python"]) / (base["all"] + base["python"])
        print(
            f"{name:<40} / 8 headless: Chromium {ratios[0]:.2f}x, all {ratios[1]:.2f}x, with Python {with_python:.2f}x"
        )


if __name__ == "__main__":
    if not os.path.isdir("/proc"):
        sys.exit("needs Linux /proc")
    main()
