"""The cost per step of the browser's opt-in element keys against a plain step, in one run:
``elements=True`` (``info["elements"]``), ``axtree=True`` (``obs["axtree"]``), ``som=True``
(``obs["som"]`` and ``info["som"]``) and the two together, each an env of its own on the one shared
Chromium (capture ``"cdp"``), all on the article page of :mod:`benchmarks.browser_step` at 1280x720
(about 60 elements kept), or with ``--page miniwob``, MiniWoB++'s ``click-color`` at 160x210.

A step is a click that toggles a button's colour (on MiniWoB, a ``wait`` of 0 ms). Blocks of
``--steps`` steps per variant, the order rotating every round, ``--rounds`` rounds; reported: the
median over rounds of the wall ms per step and of the CPU-ms per step summed over this process,
the Playwright driver and every Chromium process (``/proc/<pid>/stat``), and each one's extra over
the plain step of the same round. Run: ``python -m benchmarks.browser_nodes [--page article|miniwob]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import urllib.parse
from typing import Any

import psutil

import hud_gym  # noqa: F401  (registers the ids)
from benchmarks.browser_capture import cpu_ms
from benchmarks.browser_step import HTML
from hud_gym.actions import ClickAction, CustomAction, WaitAction
from hud_gym.envs.browser import BrowserEnv

VARIANTS: dict[str, dict[str, bool]] = {
    "plain": {},
    "elements": {"elements": True},
    "axtree": {"axtree": True},
    "som": {"som": True},
    "axtree+som": {"axtree": True, "som": True},
}


def _env(page: str, options: dict[str, bool]) -> BrowserEnv:
    if page == "miniwob":
        env = BrowserEnv(task="miniwob/click-color", max_steps=10**9, capture="cdp", **options)
        env.reset(seed=0)
        return env
    env = BrowserEnv(screen_size=(1280, 720), max_steps=10**9, capture="cdp", **options)
    env.reset(seed=0)
    _, _, _, _, info = env.step(CustomAction(action="goto", args={"url": "data:text/html," + urllib.parse.quote(HTML)}))
    assert info["status"] == "ok", info
    return env


def _block(env: BrowserEnv, page: str, steps: int) -> tuple[float, float]:
    """Wall ms and CPU-ms per step of ``steps`` steps."""
    action: Any = WaitAction(time=0) if page == "miniwob" else ClickAction(point=(640, 130))
    pids = {os.getpid(), *(p.pid for p in psutil.Process().children(recursive=True))}
    before, started = cpu_ms(pids), time.perf_counter()
    for _ in range(steps):
        _, _, _, _, info = env.step(action)
        assert info["status"] == "ok", info
    wall = (time.perf_counter() - started) * 1000 / steps
    after = cpu_ms(pids)
    cpu = sum(after[pid] - before[pid] for pid in after if pid in before) / steps
    return wall, cpu


def run(
    page: str = "article", steps: int = 30, rounds: int = 3, only: tuple[str, ...] = ()
) -> dict[str, dict[str, float]]:
    variants = {name: options for name, options in VARIANTS.items() if not only or name in only or name == "plain"}
    envs = {name: _env(page, options) for name, options in variants.items()}
    try:
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
        names = list(variants)
        for r in range(rounds):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                _block(envs[name], page, 3)  # warm
                results[name].append(_block(envs[name], page, steps))
        report = {}
        for name, samples in results.items():
            extra = [cpu - results["plain"][i][1] for i, (_, cpu) in enumerate(samples)]
            report[name] = {
                "wall_ms": statistics.median(w for w, _ in samples),
                "cpu_ms": statistics.median(c for _, c in samples),
                "extra_cpu_ms": statistics.median(extra),
            }
        return report
    finally:
        for env in envs.values():
            env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", choices=("article", "miniwob"), default="article")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", nargs="*", default=(), choices=list(VARIANTS), help="these variants (and plain)")
    args = parser.parse_args()
    report = run(args.page, args.steps, args.rounds, tuple(args.only))
    print(f"{'variant':<12} {'wall ms':>8} {'CPU-ms':>8} {'extra CPU-ms':>13}")
    for name, row in report.items():
        print(f"{name:<12} {row['wall_ms']:8.1f} {row['cpu_ms']:8.1f} {row['extra_cpu_ms']:13.1f}")


if __name__ == "__main__":
    main()
