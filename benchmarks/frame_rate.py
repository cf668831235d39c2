"""What Chromium's unlimited frame rate costs and buys: a page that animates, idle between steps,
at Chromium's 60 Hz frame clock (the default) and with
:data:`~hud_gym.controllers.browser.binary.UNLIMITED_FRAME_RATE_ARGS` (``--disable-frame-rate-limit
--disable-gpu-vsync``, the default until 2026-11-24), on both capture paths.

For each capture path and each flag set (a browser of its own per block, blocks alternating,
``--rounds`` rounds): ``--steps`` click steps on a page whose every click toggles its colour (wall
and CPU-ms per step, CPU summed over every process as in :mod:`benchmarks.browser_capture`), then
the env goes to a page with one CSS-rotating square and is left idle for ``--idle`` seconds (CPU-ms
per second of every process of the variant).
Run: ``python -m benchmarks.frame_rate [--size 160x210] [--steps 60] [--idle 3] [--rounds 2]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
import urllib.parse

from benchmarks.browser_capture import SMALL_HTML, Variant, block, cpu_ms
from hud_gym.actions import CustomAction
from hud_gym.controllers.browser.binary import UNLIMITED_FRAME_RATE_ARGS

ANIMATED = "data:text/html," + urllib.parse.quote(
    "<body style='margin:0'><div style='width:50px;height:50px;background:red;"
    "animation:spin 1s linear infinite'></div><style>@keyframes spin{to{transform:rotate(360deg)}}</style>"
)


def measure(capture: str, args: tuple[str, ...], size: tuple[int, int], steps: int, idle: float) -> tuple[float, ...]:
    """(wall ms per step, CPU ms per step, CPU ms per idle second on the animated page); ``args``:
    Chromium flags on top of the default ones."""
    variant = Variant(capture, size, (size[0] // 2, size[1] // 2), SMALL_HTML, launch_args=args)
    variant.start(None)
    try:
        wall, cpu, _ = block(variant, steps)
        assert variant.env is not None
        variant.env.step(CustomAction(action="goto", args={"url": ANIMATED}))
        pids = variant.pids()
        time.sleep(0.5)
        before = cpu_ms(pids)
        time.sleep(idle)
        after = cpu_ms(pids)
    finally:
        variant.close()
    return wall, cpu, sum(after[p] - before[p] for p in after if p in before) / idle


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="160x210")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--idle", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.split("x"))
    flag_sets: dict[str, tuple[str, ...]] = {"unlimited": UNLIMITED_FRAME_RATE_ARGS, "60 Hz": ()}
    rows: dict[tuple[str, str], list[tuple[float, ...]]] = {}
    for r in range(args.rounds):
        for capture in ("cdp", "headed"):
            names = list(flag_sets) if r % 2 == 0 else list(flag_sets)[::-1]
            for name in names:
                out = measure(capture, flag_sets[name], (width, height), args.steps, args.idle)
                rows.setdefault((capture, name), []).append(out)
                print(
                    f"round {r} {capture:<6} {name:<9} step {out[0]:.1f} ms wall, {out[1]:.1f} CPU-ms; "
                    f"animated page idle {out[2]:.0f} CPU-ms/s",
                    flush=True,
                )
    print(f"{args.size}, medians of {args.rounds} rounds:")
    for (capture, name), values in rows.items():
        wall, cpu, idle = (statistics.median(v[i] for v in values) for i in range(3))
        print(f"{capture:<6} {name:<9} step {wall:.1f} ms wall, {cpu:.1f} CPU-ms; animated idle {idle:.0f} CPU-ms/s")


if __name__ == "__main__":
    main()
