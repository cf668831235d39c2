"""MiniWoB++ click-test-2: hud/Browser-v0 vs the official ``miniwob`` env, side by side.

Both run the same task pages from the ``miniwob`` package on the same Debian Chromium: the
official env through Selenium and Debian's ``chromium-driver``, ours through Playwright/CDP.
Both observe the 160x210 task area. Resets are seeded; steps click an empty spot of the task area
(so the episode goes on). The two envs are measured interleaved, medians of N calls.

Run: ``python -m benchmarks.miniwob_vs_official`` (needs ``apt-get install chromium-driver``).
"""

from __future__ import annotations

import os
import shutil
import statistics
import time
from collections.abc import Callable

import gymnasium
import numpy as np

import hud_gym
from hud_gym.controllers.browser.chromium import find_chromium
from hud_gym.controllers.browser.miniwob import MINIWOB_TASK_AREA

N = 40
TASK = "click-test-2"
EMPTY_SPOT = (5, 205)  # bottom-left corner of the task area: no element there


def _official_env() -> gymnasium.Env:
    chromedriver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    if not os.path.exists(chromedriver):
        raise RuntimeError("the official MiniWoB++ env needs chromedriver: apt-get install chromium-driver")
    os.environ.setdefault("MINIWOB_CHROME_BINARY", str(find_chromium()))
    os.environ.setdefault("MINIWOB_CHROMEDRIVER", chromedriver)
    import miniwob  # noqa: F401  (registers the official ids)

    return gymnasium.make(f"miniwob/{TASK}-v1")


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main() -> None:
    """Print the table of medians and ratios."""
    ours = gymnasium.make(
        "hud/Browser-v0", task=f"miniwob/{TASK}", observation_crop=MINIWOB_TASK_AREA, screen_size=(500, 320)
    )
    official = _official_env()
    try:
        from miniwob.action import ActionTypes

        official_click = official.unwrapped.create_action(ActionTypes.CLICK_COORDS, coords=np.array(EMPTY_SPOT))
        our_click = hud_gym.ClickAction(point=EMPTY_SPOT)
        ours.reset(seed=0)
        official.reset(seed=0)
        timings: dict[str, list[float]] = {"ours reset": [], "official reset": [], "ours step": [], "official step": []}

        def timed(name: str, call: Callable[[], object]) -> None:
            started = time.perf_counter()
            call()
            timings[name].append(time.perf_counter() - started)

        for i in range(N):
            timed("ours reset", lambda i=i: ours.reset(seed=i))
            timed("official reset", lambda i=i: official.reset(seed=i))
            for _ in range(2):
                timed("ours step", lambda: ours.step(our_click))
                timed("official step", lambda: official.step(official_click))
        medians = {k: _median_ms(v) for k, v in timings.items()}
        print(f"MiniWoB++ {TASK}, medians of {N} resets and {2 * N} steps (ms)")
        print(f"{'':<10} {'hud-gym':>9} {'official':>9} {'ratio':>7}  target")
        for what in ("reset", "step"):
            ratio = medians[f"ours {what}"] / medians[f"official {what}"]
            print(
                f"{what:<10} {medians[f'ours {what}']:>9.1f} {medians[f'official {what}']:>9.1f} {ratio:>7.2f}  <= 0.5"
            )
    finally:
        ours.close()
        official.close()


if __name__ == "__main__":
    main()
