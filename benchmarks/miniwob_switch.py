"""A reset onto a different MiniWoB++ task: onto a warm page (the task's page kept, paused in a
parked context: ``warm_pages``, the default 4) vs the page loaded again (``warm_pages=0``, as
before; the scripts from the HTTP cache), and a reset onto the same task (the page kept, the
episode restarted in it: the floor a switch can reach), in alternating blocks within one run.

Each reset switches between four tasks (click-test-2, click-button, click-checkboxes,
enter-text), so every switch lands on another task's page; the controller's ``warm_pages`` is
changed between blocks. It also prints the median time of a step (a click on an empty spot) after
each kind of reset, and the summed PSS of every Chromium process with 4 warm pages and with none.
Run: ``python -m benchmarks.miniwob_switch [--resets 16] [--rounds 3] [--capture cdp|headed]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import gymnasium

import hud_gym  # noqa: F401  (registers the ids)
from benchmarks.browser_memory import _descendants, _is_chromium, _pss_kib
from hud_gym import ClickAction, Point
from hud_gym.tasksets import load_taskset

TASKS = ("click-test-2", "click-button", "click-checkboxes", "enter-text")
MODES = ("warm", "reload", "same task")


def chromium_pss_mib() -> float:
    import os

    return sum(_pss_kib(p) for p in _descendants(os.getpid()) if _is_chromium(p)) / 1024


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--resets", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--capture", default="cdp")
    args = parser.parse_args(argv)
    tasks = {t.id: t for t in load_taskset("miniwob").tasks}
    env = gymnasium.make("hud/Browser-v0", screen_size=(160, 210), capture=args.capture)
    controller: Any = None
    medians: dict[str, list[float]] = {mode: [] for mode in MODES}
    steps: dict[str, list[float]] = {mode: [] for mode in MODES}
    memory: dict[int, float] = {}
    try:
        env.reset(seed=0, options={"task": tasks[TASKS[0]]})
        controller = env.unwrapped.controller  # type: ignore[attr-defined]
        i = 0
        for r in range(args.rounds):
            for mode in MODES if r % 2 == 0 else MODES[::-1]:
                controller.state.options = controller.state.options.model_copy(
                    update={"warm_pages": 0 if mode == "reload" else 4}
                )
                times, step_times = [], []
                for _ in range(args.resets + len(TASKS)):
                    i += 1
                    task = TASKS[0] if mode == "same task" else TASKS[i % len(TASKS)]
                    started = time.perf_counter()
                    env.reset(seed=i, options={"task": tasks[task]})
                    times.append((time.perf_counter() - started) * 1000)
                    started = time.perf_counter()
                    env.step(ClickAction(point=Point(x=150, y=200)))
                    step_times.append((time.perf_counter() - started) * 1000)
                medians[mode].append(statistics.median(times[len(TASKS) :]))
                steps[mode].append(statistics.median(step_times[len(TASKS) :]))
                if mode != "same task":
                    time.sleep(1.0)
                    memory[controller.state.options.warm_pages] = chromium_pss_mib()
    finally:
        env.close()
    print(f"reset onto a MiniWoB++ task ({args.capture}), median ms per block of {args.resets}:")
    labels = {"warm": "switch, warm page", "reload": "switch, page loaded", "same task": "same task"}
    for mode in MODES:
        values = medians[mode]
        print(
            f"  {labels[mode]:<20} {statistics.median(values):7.1f} ms ({min(values):.1f}-{max(values):.1f})"
            f"   next step {statistics.median(steps[mode]):5.1f} ms"
        )
    ratios = [w / s for w, s in zip(medians["warm"], medians["same task"], strict=True)]
    print(f"  warm switch / same task {statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})")
    print(f"  Chromium PSS: {memory.get(4, 0):.0f} MiB with 4 warm pages, {memory.get(0, 0):.0f} MiB without")


if __name__ == "__main__":
    main()
