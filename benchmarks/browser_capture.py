"""CPU-ms per browser step, summed over every process, and where it goes: the two capture paths of
``hud/Browser-v0`` against the common way, in one run.

Variants (each on its own browser; blocks of ``--steps`` click steps, the order rotating every
round, ``--rounds`` rounds):

- ``common``: Playwright ``page.mouse.click`` + ``page.screenshot()`` PNG + Pillow decode (a headless
  Chromium of its own);
- ``cdp``: ``env.step(ClickAction)`` with ``capture="cdp"`` (CDP JPEG + simplejpeg);
- ``headed``: ``env.step(ClickAction)`` with ``capture="headed"`` (Chromium on a private Xvfb,
  MIT-SHM grab).

CPU is read from ``/proc/<pid>/stat`` (utime + stime) of the processes a variant uses: this Python
process, the Playwright driver (node), every process of the variant's Chromium, and its Xvfb.
Wall and CPU are medians over rounds (ratios within one round); the spread is min-max over rounds.
Every click toggles a button's colour on the article page of :mod:`benchmarks.browser_step` (at
1280x720) or the whole body of a plain page (at 160x210). Run:
``python -m benchmarks.browser_capture [--size 1280x720] [--steps 100] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import psutil
from PIL import Image

import hud_gym  # noqa: F401  (registers the ids)
from benchmarks.browser_step import HTML
from hud_gym.actions import ClickAction, CustomAction
from hud_gym.controllers.browser.chromium import MANAGER, _entry_pids
from hud_gym.envs.browser import BrowserEnv

TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")
SMALL_HTML = (
    "<title>toggle</title><body style='margin:0;height:100vh;background:#2a9d8f' "
    "onclick=\"this.style.background = this.style.background === 'crimson' ? '#2a9d8f' : 'crimson'\"></body>"
)


def cpu_ms(pids: set[int]) -> dict[int, float]:
    """utime + stime of each live pid, in ms."""
    out = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            out[pid] = (int(fields[11]) + int(fields[12])) * TICK_MS
        except (OSError, IndexError):
            pass
    return out


def role(pid: int) -> str:
    """What a process is: python, driver, xvfb, chromium-browser, chromium-<type>."""
    if pid == os.getpid():
        return "python"
    try:
        cmd = psutil.Process(pid).cmdline()
    except psutil.Error:
        return "gone"
    name = Path(cmd[0]).name if cmd else ""
    if name == "node" or "playwright" in " ".join(cmd[:2]):
        return "driver"
    if name == "Xvfb":
        return "xvfb"
    kind = next((a.split("=", 1)[1] for a in cmd if a.startswith("--type=")), "browser")
    return f"chromium-{kind}"


def driver_pids() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True) if role(p.pid) == "driver"}


class Variant:
    """One way of taking a click step, with the processes it runs on."""

    def __init__(
        self, name: str, size: tuple[int, int], point: tuple[int, int], html: str, launch_args: tuple[str, ...] = ()
    ) -> None:
        self.name = name
        self.launch_args = launch_args
        self.size = size
        self.point = point
        self.html = html
        self.env: BrowserEnv | None = None
        self.page: Any = None

    def start(self, runner_env: BrowserEnv | None) -> None:
        if self.name == "common":
            assert runner_env is not None
            self.runner = runner_env.unwrapped._runner
            self.page = self.runner.run(self._common_page())
            return
        self.env = BrowserEnv(screen_size=self.size, max_steps=10**9, capture=self.name, launch_args=self.launch_args)
        self.env.reset(seed=0)
        url = "data:text/html," + urllib.parse.quote(self.html)
        _, _, _, _, info = self.env.step(CustomAction(action="goto", args={"url": url}))
        assert info["status"] == "ok", info
        self.runner = self.env.unwrapped._runner

    async def _common_page(self) -> Any:
        from playwright.async_api import async_playwright

        from hud_gym.controllers.browser.binary import LAUNCH_ARGS, find_chromium

        self._pw = await async_playwright().start()
        self._browser = await self._pw.chromium.launch(executable_path=str(find_chromium()), args=list(LAUNCH_ARGS))
        context = await self._browser.new_context(viewport={"width": self.size[0], "height": self.size[1]})
        page = await context.new_page()
        await page.set_content(self.html)
        return page

    async def _common_step(self) -> np.ndarray:
        await self.page.mouse.click(*self.point)
        png = await self.page.screenshot()
        return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))

    def step(self) -> None:
        if self.env is None:
            self.runner.run(self._common_step())
            return
        _, _, _, _, info = self.env.step(ClickAction(point=self.point))
        assert info["status"] == "ok", info

    def pids(self) -> set[int]:
        pids = {os.getpid()}
        if self.env is None:
            pids |= {p.pid for p in psutil.Process().children(recursive=True) if role(p.pid) != "xvfb"}
            pids -= self._env_browser_pids()
            return pids
        lease = self.env.unwrapped.controller.state.lease
        entry = MANAGER._entries.get(lease.key)
        if entry is not None:
            pids |= _entry_pids(entry)
            if entry.display is not None and entry.display.xvfb is not None:
                pids.add(entry.display.xvfb.process.pid)
        return pids | driver_pids()

    @staticmethod
    def _env_browser_pids() -> set[int]:
        out: set[int] = set()
        for entry in MANAGER._entries.values():
            out |= _entry_pids(entry)
            if entry.display is not None and entry.display.xvfb is not None:
                out.add(entry.display.xvfb.process.pid)
        return out

    def close(self) -> None:
        if self.env is not None:
            self.env.close()
        else:
            self.runner.run(self._browser.close())
            self.runner.run(self._pw.stop())


def block(variant: Variant, steps: int) -> tuple[float, float, dict[str, float]]:
    """``steps`` steps: (wall ms per step, CPU ms per step, CPU ms per step by role)."""
    for _ in range(3):
        variant.step()
    pids = variant.pids()
    before = cpu_ms(pids)
    started = time.perf_counter()
    for _ in range(steps):
        variant.step()
    wall = (time.perf_counter() - started) * 1000 / steps
    after = cpu_ms(pids)
    split: dict[str, float] = {}
    for pid, value in after.items():
        if pid in before:
            key = role(pid)
            split[key] = split.get(key, 0.0) + (value - before[pid]) / steps
    return wall, sum(split.values()), split


def run(size: tuple[int, int], steps: int, rounds: int) -> dict[str, Any]:
    """Per variant: medians and spreads of wall and CPU, the CPU split, and the per-round ratios."""
    big = size[0] >= 500
    html, point = (HTML, (640, 130)) if big else (SMALL_HTML, (size[0] // 2, size[1] // 2))
    variants = [Variant(n, size, point, html) for n in ("cdp", "headed", "common")]
    results: dict[str, dict[str, list[Any]]] = {v.name: {"wall": [], "cpu": [], "split": []} for v in variants}
    ratios: dict[str, list[float]] = {}
    try:
        variants[0].start(None)
        variants[1].start(None)
        variants[2].start(variants[0].env)
        for r in range(rounds):
            order = variants[r % 3 :] + variants[: r % 3]
            row: dict[str, tuple[float, float]] = {}
            for variant in order:
                wall, cpu, split = block(variant, steps)
                results[variant.name]["wall"].append(wall)
                results[variant.name]["cpu"].append(cpu)
                results[variant.name]["split"].append(split)
                row[variant.name] = (wall, cpu)
            for a, b in (("headed", "common"), ("cdp", "common"), ("headed", "cdp")):
                ratios.setdefault(f"{a}/{b} wall", []).append(row[a][0] / row[b][0])
                ratios.setdefault(f"{a}/{b} cpu", []).append(row[a][1] / row[b][1])
    finally:
        for variant in reversed(variants):
            variant.close()
    return {"results": results, "ratios": ratios}


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"


def report(size: tuple[int, int], steps: int, rounds: int, out: dict[str, Any], show: Callable[[str], None]) -> None:
    show(f"one env, {size[0]}x{size[1]}, {rounds} rounds x {steps} click steps; median (min-max over rounds)")
    show(f"{'variant':<8} {'wall ms/step':>20} {'CPU ms/step':>20}   CPU split (median ms/step)")
    for name, r in out["results"].items():
        roles = sorted({k for s in r["split"] for k in s})
        split = ", ".join(f"{k} {statistics.median([s.get(k, 0.0) for s in r['split']]):.1f}" for k in roles)
        show(f"{name:<8} {_spread(r['wall']):>20} {_spread(r['cpu']):>20}   {split}")
    for key, values in out["ratios"].items():
        show(f"{key:<22} {statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="1280x720")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    size = tuple(int(v) for v in args.size.split("x"))
    assert len(size) == 2
    out = run((size[0], size[1]), args.steps, args.rounds)
    report((size[0], size[1]), args.steps, args.rounds, out, print)


if __name__ == "__main__":
    main()
