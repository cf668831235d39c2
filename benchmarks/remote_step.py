"""One browser step with the controller in this process vs in a controller server on loopback.

``hud/Browser-v0`` with ``controller="local"`` (the default) and with ``controller="subprocess"``
(a ``hud_gym.controllers.remote.server`` process of its own, with its own Chromium), the same
article-with-form page as ``benchmarks.browser_step`` (its toggle button moved to the top left so
that it is on screen at every size), one ``ClickAction`` on the button per step (each frame
differs from the previous one), observed at 1280x720 and at 480x320. The two envs are stepped in
turn (local, remote, remote, local, ...), medians over ``--steps`` steps per round; the ratio
remote / local is computed within the run. Target: <= 1.3 at 1280x720.

Run: ``python -m benchmarks.remote_step [--steps N] [--rounds R]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import gymnasium

import hud_gym  # noqa: F401  (registers the ids)
from benchmarks.browser_step import HTML as ARTICLE
from hud_gym import Task
from hud_gym.actions import ClickAction

SIZES: tuple[tuple[int, int], ...] = ((1280, 720), (480, 320))
HTML = ARTICLE.replace("</head>", "<style>#toggle { left: 20px; top: 60px; }</style></head>")
BUTTON = (80, 90)
TARGET = 1.3


def _make(size: tuple[int, int], controller: str) -> Any:
    env = gymnasium.make("hud/Browser-v0", screen_size=size, controller=controller, max_steps=1_000_000)
    _, info = env.reset(seed=0, options={"task": Task(prompt="Toggle", setup=[("load_html_content", HTML)])})
    assert info["status"] == "ok", info
    return env


def _step(env: Any, samples: dict[str, list[float]], key: str) -> None:
    started = time.perf_counter()
    _, _, _, _, info = env.step(ClickAction(point=BUTTON))
    elapsed = (time.perf_counter() - started) * 1000
    assert info["status"] == "ok", info
    samples.setdefault(key, []).append(elapsed)
    samples.setdefault(f"{key}_action", []).append(info["timings"]["action"] * 1000)
    samples.setdefault(f"{key}_observe", []).append(info["timings"]["observe"] * 1000)


def run(steps: int = 60, rounds: int = 2, sizes: tuple[tuple[int, int], ...] = SIZES) -> dict[str, dict[str, float]]:
    """Median ms per size: ``local``, ``remote`` (whole step), their ``_action``/``_observe``
    parts, and ``ratio`` = remote / local."""
    results: dict[str, dict[str, float]] = {}
    for size in sizes:
        local, remote = _make(size, "local"), _make(size, "subprocess")
        samples: dict[str, list[float]] = {}
        try:
            for _ in range(5):  # warm-up, not counted
                local.step(ClickAction(point=BUTTON))
                remote.step(ClickAction(point=BUTTON))
            for i in range(steps * rounds):
                order = ((local, "local"), (remote, "remote")) if i % 2 == 0 else ((remote, "remote"), (local, "local"))
                for env, key in order:
                    _step(env, samples, key)
        finally:
            remote.close()
            local.close()
        medians = {key: statistics.median(values) for key, values in samples.items()}
        medians["ratio"] = medians["remote"] / medians["local"]
        results[f"{size[0]}x{size[1]}"] = medians
    return results


def main(argv: list[str] | None = None) -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    results = run(args.steps, args.rounds)
    print(
        f"{'size':>10} | {'local ms':>9} | {'subprocess ms':>13} | {'ratio':>5} | "
        f"{'local act/obs':>13} | {'remote act/obs':>14}"
    )
    for size, m in results.items():
        print(
            f"{size:>10} | {m['local']:9.1f} | {m['remote']:13.1f} | {m['ratio']:5.2f} | "
            f"{m['local_action']:5.1f} / {m['local_observe']:5.1f} | {m['remote_action']:6.1f} / {m['remote_observe']:5.1f}"
        )
    worst = results["1280x720"]["ratio"] if "1280x720" in results else max(m["ratio"] for m in results.values())
    print(f"subprocess / local at 1280x720 = {worst:.2f} (target <= {TARGET})")


if __name__ == "__main__":
    main()
