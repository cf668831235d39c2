"""8 browser envs stepped together (``gymnasium.make_vec``: one process, one event loop), with each
capture path: env steps per second and CPU-ms per env step summed over every process (this one,
the Playwright driver, every Chromium process, the Xvfbs), in alternating blocks within one run.

Each env shows a page whose every click toggles its colour (the article page of
:mod:`benchmarks.browser_step` at 1280x720, a plain body at 160x210). Run:
``python -m benchmarks.browser_vector_capture [--size 160x210] [--steps 40] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import urllib.parse

import gymnasium
import numpy as np
import psutil

import hud_gym
from benchmarks.browser_capture import SMALL_HTML, cpu_ms
from benchmarks.browser_step import HTML

N = 8


def tree() -> set[int]:
    return {os.getpid(), *(p.pid for p in psutil.Process().children(recursive=True))}


def make(capture: str, size: tuple[int, int], html: str) -> gymnasium.vector.VectorEnv:
    envs = gymnasium.make_vec("hud/Browser-v0", num_envs=N, screen_size=size, max_steps=10**9, capture=capture)
    envs.reset(seed=0)
    url = "data:text/html," + urllib.parse.quote(html)
    goto = hud_gym.CustomAction(action="goto", args={"url": url})
    envs.step([goto] * N)
    return envs


def block(envs: gymnasium.vector.VectorEnv, point: tuple[int, int], steps: int) -> tuple[float, float]:
    """(env steps per second, CPU ms per env step)."""
    click = [hud_gym.ClickAction(point=point)] * N
    envs.step(click)
    pids = tree()
    before = cpu_ms(pids)
    started = time.perf_counter()
    for _ in range(steps):
        _, _, _, _, info = envs.step(click)
    wall = time.perf_counter() - started
    after = cpu_ms(pids)
    assert all(s == "ok" for s in np.asarray(info["status"]).tolist()), info["status"]
    cpu = sum(after[p] - before[p] for p in after if p in before)
    return N * steps / wall, cpu / (N * steps)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="160x210")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.split("x"))
    size = (width, height)
    html, point = (HTML, (640, 130)) if width >= 500 else (SMALL_HTML, (width // 2, height // 2))
    results: dict[str, list[tuple[float, float]]] = {"cdp": [], "headed": []}
    for r in range(args.rounds):
        for capture in ("cdp", "headed") if r % 2 == 0 else ("headed", "cdp"):
            envs = make(capture, size, html)
            try:
                results[capture].append(block(envs, point, args.steps))
            finally:
                envs.close()
    print(f"{N} envs, {width}x{height}, {args.rounds} rounds x {args.steps} vector steps; median (min-max)")
    for capture, rows in results.items():
        rates, cpus = [r[0] for r in rows], [r[1] for r in rows]
        print(
            f"{capture:<7} env steps/s {statistics.median(rates):6.1f} ({min(rates):.1f}-{max(rates):.1f})"
            f"   CPU ms/env step {statistics.median(cpus):5.1f} ({min(cpus):.1f}-{max(cpus):.1f})"
        )


if __name__ == "__main__":
    main()
