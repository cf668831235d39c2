"""A reset onto a different MiniWoB++ task: with the loopback server's HTTP cache kept (now) vs
emptied at every reset (before issue 13), and a reset onto the same task (the page kept, the
episode restarted in it: the floor a task switch could reach), in alternating blocks within one run.

Each reset switches between four tasks (click-test-2, click-button, click-checkboxes,
enter-text), so every reset navigates to another page. "emptied" takes the MiniWoB origin out
of :data:`~hud_gym.controllers.browser.tabs.CACHE_KEPT_ORIGINS`, so the clear reset empties the
HTTP cache as it did before. Run: ``python -m benchmarks.miniwob_switch [--resets 16] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym.controllers.browser.miniwob import miniwob_base_url
from hud_gym.controllers.browser.tabs import CACHE_KEPT_ORIGINS
from hud_gym.tasksets import load_taskset

TASKS = ("click-test-2", "click-button", "click-checkboxes", "enter-text")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--resets", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--capture", default="cdp")
    args = parser.parse_args(argv)
    tasks = {t.id: t for t in load_taskset("miniwob").tasks}
    origin = miniwob_base_url()
    env = gymnasium.make("hud/Browser-v0", screen_size=(160, 210), capture=args.capture)
    medians: dict[str, list[float]] = {"kept": [], "emptied": [], "same task": []}
    try:
        env.reset(seed=0, options={"task": tasks[TASKS[0]]})
        i = 0
        for r in range(args.rounds):
            modes = ("kept", "emptied", "same task")
            for mode in modes if r % 2 == 0 else modes[::-1]:
                if mode == "emptied":
                    CACHE_KEPT_ORIGINS.discard(origin)
                else:
                    CACHE_KEPT_ORIGINS.add(origin)
                times = []
                for _ in range(args.resets + 2):
                    i += 1
                    task = TASKS[0] if mode == "same task" else TASKS[i % len(TASKS)]
                    started = time.perf_counter()
                    env.reset(seed=i, options={"task": tasks[task]})
                    times.append((time.perf_counter() - started) * 1000)
                medians[mode].append(statistics.median(times[2:]))
    finally:
        CACHE_KEPT_ORIGINS.add(origin)
        env.close()
    print(f"reset onto another MiniWoB++ task ({args.capture}), median ms per block of {args.resets}:")
    for mode, values in medians.items():
        label = mode if mode == "same task" else f"switch, cache {mode}"
        print(f"  {label:<22} {statistics.median(values):7.1f} ms ({min(values):.1f}-{max(values):.1f})")
    ratios = [k / e for k, e in zip(medians["kept"], medians["emptied"], strict=True)]
    print(f"  kept/emptied {statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})")


if __name__ == "__main__":
    main()
