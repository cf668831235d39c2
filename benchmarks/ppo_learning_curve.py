"""PPO from pixels on MiniWoB++ click-test vs a random policy: the learning curve.

Runs ``examples/ppo_miniwob.py`` for a fixed budget (``STEPS`` env steps, 4 browser envs in one
Chromium, evaluation of the deterministic policy and of a random one on the same 100 held-out
instances every 500 steps), then writes ``benchmarks/results/ppo_learning_curve.png``,
``ppo_learning_curve.csv`` and ``ppo_learning_curve.md`` (the table).

Run: ``python -m benchmarks.ppo_learning_curve`` (about 6 to 10 minutes on the 2-core box,
depending on its load). ``--seeds 0 1 2 3 4`` trains once per seed and writes the spread over
seeds instead (``ppo_learning_curve_seeds.md``: mean ± std, min-max per checkpoint, PPO and
random); ``--from DIR`` aggregates ``DIR/seed<N>/learning_curve.csv`` of runs made already.
"""

from __future__ import annotations

import csv
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
EXAMPLE = ROOT / "examples" / "ppo_miniwob.py"
TASK = "click-test"
STEPS = 4000
ENVS = 4
EVAL_EVERY = 500
EVAL_EPISODES = 100
SEED = 0


def wilson_interval(rate: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a success rate measured on ``n`` episodes."""
    centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def run_training(out: Path, seed: int = SEED) -> list[dict[str, float]]:
    """Train with the example script; its learning-curve rows."""
    command = [
        sys.executable,
        str(EXAMPLE),
        "--task",
        TASK,
        "--steps",
        str(STEPS),
        "--envs",
        str(ENVS),
        "--seed",
        str(seed),
        "--eval-every",
        str(EVAL_EVERY),
        "--eval-episodes",
        str(EVAL_EPISODES),
        "--out",
        str(out),
    ]
    subprocess.run(command, check=True, timeout=3600)
    return read_curve(out)


def read_curve(out: Path) -> list[dict[str, float]]:
    """The learning-curve rows ``examples/ppo_miniwob.py`` wrote to ``out``."""
    with open(out / "learning_curve.csv", newline="") as file:
        return [
            {key: int(value) if key == "steps" else float(value) for key, value in row.items()}
            for row in csv.DictReader(file)
        ]


def markdown_table(rows: list[dict[str, float]]) -> str:
    """The learning curve as a markdown table (success rates with 95% Wilson intervals)."""
    lines = ["| training steps | wall s | PPO success | random success |", "|---:|---:|---:|---:|"]
    for row in rows:
        cells = []
        for key in ("ppo", "random"):
            low, high = wilson_interval(row[key], EVAL_EPISODES)
            cells.append(f"{row[key]:.2f} ({low:.2f}-{high:.2f})")
        lines.append(f"| {int(row['steps'])} | {row['seconds']:.0f} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict[str, float]], path: Path) -> None:
    """Success rate vs training steps, PPO and random, with 95% intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [row["steps"] for row in rows]
    figure, axes = plt.subplots(figsize=(6.4, 4.0), dpi=120)
    for key, label, colour in (("ppo", "PPO (deterministic)", "tab:blue"), ("random", "random policy", "tab:gray")):
        rates = [row[key] for row in rows]
        intervals = [wilson_interval(rate, EVAL_EPISODES) for rate in rates]
        axes.plot(steps, rates, marker="o", color=colour, label=label)
        axes.fill_between(
            steps, [low for low, _ in intervals], [high for _, high in intervals], color=colour, alpha=0.15
        )
    axes.set_xlabel("training steps (one click each)")
    axes.set_ylabel(f"success rate ({EVAL_EPISODES} held-out episodes)")
    axes.set_ylim(0, 1)
    axes.set_title(f"PPO from 64x64 pixels on MiniWoB++ {TASK}, {ENVS} browser envs", fontsize=10)
    axes.grid(alpha=0.3)
    axes.legend(loc="upper left")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def seeds_table(curves: dict[int, list[dict[str, float]]]) -> str:
    """Per checkpoint over seeds: PPO and random success as mean ± std (min-max), and wall time."""
    import statistics

    def cell(values: list[float]) -> str:
        spread = statistics.stdev(values) if len(values) > 1 else 0.0
        return f"{statistics.mean(values):.2f} ± {spread:.2f} ({min(values):.2f}-{max(values):.2f})"

    lines = [
        "| training steps | wall s (mean) | PPO success | random success |",
        "|---:|---:|---:|---:|",
    ]
    for i in range(min(len(rows) for rows in curves.values())):
        rows = [curve[i] for curve in curves.values()]
        lines.append(
            f"| {int(rows[0]['steps'])} | {statistics.mean(r['seconds'] for r in rows):.0f} "
            f"| {cell([r['ppo'] for r in rows])} | {cell([r['random'] for r in rows])} |"
        )
    return "\n".join(lines) + "\n"


def main_seeds(seeds: list[int], source: Path | None) -> None:
    """Train once per seed (or read ``source``), then write ``ppo_learning_curve_seeds.md``."""
    curves = {}
    for seed in seeds:
        out = (source or RESULTS / "ppo_seed_runs") / f"seed{seed}"
        if (out / "learning_curve.csv").exists():
            curves[seed] = read_curve(out)
        elif source is None:
            curves[seed] = run_training(out, seed)
    table = seeds_table(curves)
    (RESULTS / "ppo_learning_curve_seeds.md").write_text(
        f"PPO vs random on MiniWoB++ {TASK}, seeds {', '.join(map(str, curves))}: {STEPS} training steps, "
        f"{ENVS} envs, {EVAL_EPISODES} evaluation episodes per point; mean ± std (min-max) over seeds.\n\n{table}"
    )
    print(table)


def main() -> None:
    """Train, then write the plot, the CSV and the markdown table to ``benchmarks/results``."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="*", help="train once per seed and report the spread")
    parser.add_argument("--from", dest="source", type=Path, help="aggregate DIR/seed<N>/learning_curve.csv")
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    if args.seeds or args.source:
        main_seeds(args.seeds or [0, 1, 2, 3, 4], args.source)
        return
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ppo-miniwob-") as out:
        rows = run_training(Path(out))
    elapsed = time.perf_counter() - started
    with open(RESULTS / "ppo_learning_curve.csv", "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    table = markdown_table(rows)
    (RESULTS / "ppo_learning_curve.md").write_text(
        f"PPO vs random on MiniWoB++ {TASK}: {STEPS} training steps, {ENVS} envs, "
        f"{EVAL_EPISODES} evaluation episodes per point, {elapsed:.0f} s in all.\n\n{table}"
    )
    plot(rows, RESULTS / "ppo_learning_curve.png")
    print(table)
    print(f"total {elapsed:.0f} s; wrote {RESULTS / 'ppo_learning_curve.png'} and ppo_learning_curve.md/.csv")


if __name__ == "__main__":
    main()
