"""TRL GRPO on MiniWoB++ click-test with a tiny tool-calling LM built in code: does success rise?

Runs ``examples/trl_grpo_miniwob.py --mode grid`` (40 GRPO steps x 8 rollouts, one click per episode on a 3x3
grid of tool calls, real Chromium, CPU) for seeds 0-4, and measures the random policy on the same
grid (a uniformly random one of the 9 clicks) on 200 instances. Writes
``benchmarks/results/trl_grpo_curve.png``, ``.csv`` (success per step and seed) and ``.md`` (the
table: success over the first and the last 10 steps per seed, with the random baseline).

Run: ``python -m benchmarks.trl_grpo_curve`` (about 4 minutes per seed on the 2-core box), or
``--from DIR`` to aggregate the ``DIR/seed<N>/summary.json`` of runs made already.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
EXAMPLE = ROOT / "examples" / "trl_grpo_miniwob.py"
SEEDS = (0, 1, 2, 3, 4)
WINDOW = 10


def random_baseline(episodes: int = 200) -> float:
    """Success of a uniformly random click among the example's 9 grid points on click-test."""
    import gymnasium

    import hud_gym  # noqa: F401  (registers the ids)

    sys.path.insert(0, str(ROOT / "examples"))
    from trl_grpo_miniwob import POINTS

    env = gymnasium.make(
        "hud/Browser-v0", task="miniwob/click-test", screen_size=(500, 320), observation_crop=(0, 50, 160, 160),
        observation_size=(160, 160), max_steps=1,
    )  # fmt: skip
    rng = random.Random(0)
    wins = 0
    try:
        for seed in range(episodes):
            env.reset(seed=1_000_000 + seed)
            x, y = rng.choice(POINTS)
            _, reward, *_ = env.step({"type": "click", "point": {"x": x, "y": y}})
            wins += int((reward or 0.0) > 0)
    finally:
        env.close()
    return wins / episodes


def run(seed: int, out: Path) -> dict[str, Any]:
    command = [sys.executable, str(EXAMPLE), "--mode", "grid", "--steps", "40", "--seed", str(seed), "--out", str(out)]
    subprocess.run(command, check=True, cwd=ROOT)
    return json.loads((out / "summary.json").read_text())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="source", type=Path, help="aggregate DIR/seed<N>/summary.json")
    args = parser.parse_args(argv)
    summaries = {}
    for seed in SEEDS:
        out = (args.source or RESULTS / "trl_grpo_runs") / f"seed{seed}"
        path = out / "summary.json"
        if path.exists():
            summaries[seed] = json.loads(path.read_text())
        elif args.source is None:
            summaries[seed] = run(seed, out)
    baseline = random_baseline()
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / "trl_grpo_curve.csv", "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["seed", "step", "success"])
        for seed, summary in summaries.items():
            for step, reward in enumerate(summary["rewards"], 1):
                writer.writerow([seed, step, reward])
    lines = [
        "| seed | steps | wall s | success, first 10 steps | success, last 10 steps |",
        "|---:|---:|---:|---:|---:|",
    ]
    firsts, lasts = [], []
    for seed, summary in summaries.items():
        rewards = summary["rewards"]
        first, last = statistics.fmean(rewards[:WINDOW]), statistics.fmean(rewards[-WINDOW:])
        firsts.append(first)
        lasts.append(last)
        lines.append(f"| {seed} | {summary['steps']} | {summary['seconds']:.0f} | {first:.2f} | {last:.2f} |")
    spread = (lambda v: f"{statistics.fmean(v):.2f} ± {statistics.stdev(v):.2f}") if len(firsts) > 1 else str
    lines.append(f"| mean ± sd | | | {spread(firsts)} | {spread(lasts)} |")
    lines.append(f"\nRandom click among the 9 grid points: {baseline:.2f} (200 instances).")
    (RESULTS / "trl_grpo_curve.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for seed, summary in summaries.items():
        ax.plot(range(1, len(summary["rewards"]) + 1), summary["rewards"], alpha=0.35, label=f"seed {seed}")
    length = min(len(s["rewards"]) for s in summaries.values())
    mean = [statistics.fmean(s["rewards"][i] for s in summaries.values()) for i in range(length)]
    ax.plot(range(1, length + 1), mean, color="black", linewidth=2, label="mean over seeds")
    ax.axhline(baseline, color="red", linestyle="--", label="random click")
    ax.set_xlabel("GRPO step (8 rollouts each)")
    ax.set_ylabel("click-test success (TRL-logged env reward)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(RESULTS / "trl_grpo_curve.png", dpi=120)


if __name__ == "__main__":
    main()
