"""TRL GRPO reading the element list as text: does a tiny model's success rise? (issue 16, item 5b)

Runs ``examples/trl_grpo_miniwob.py`` in its default ``elements`` mode (MiniWoB++ ``focus-text-2``:
"Focus into the 2nd input textbox."; the instruction and the task area's elements as numbered text
lines; the tiny Qwen3's moves are ``click_element(index)``, one token each; ``STEPS`` GRPO steps x 8
rollouts, real Chromium, CPU) for seeds 0-4, and measures the random policy (a uniformly random
listed element) on ``EPISODES`` held-out instances. Success = the env's reward > 0. Prints and writes
``benchmarks/results/trl_learning.md`` (per seed: success over the first and the last ``WINDOW``
steps), ``.csv`` (success per step and seed) and ``.png`` (if matplotlib is installed).

Run: ``python -m benchmarks.trl_learning`` (about 5 minutes per seed on the loaded 2-core box), or
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
TASK = "focus-text-2"
SEEDS = (0, 1, 2, 3, 4)
STEPS = 24
WINDOW = 8
EPISODES = 100


def random_baseline(episodes: int = EPISODES) -> float:
    """Success of a uniformly random ``click_element`` among the listed elements."""
    sys.path.insert(0, str(ROOT / "examples"))
    from trl_grpo_miniwob import ELEMENT_ENV

    from hud_gym.wrappers.integrations.trl import close_all, trl_environment_factory

    env = trl_environment_factory("hud-browser", elements=True, max_steps=1, **ELEMENT_ENV)()
    rng = random.Random(0)
    wins = 0
    try:
        for i in range(episodes):
            listing = env.reset(task=f"miniwob/{TASK}", seed=1_000_000 + i)
            count = sum(1 for line in listing.splitlines() if line.startswith("["))
            env.click_element(rng.randrange(count))
            wins += int(env.get_reward() > 0)
    finally:
        close_all()
    return wins / episodes


def targets(seed: int, steps: int) -> list[str]:
    """The ordinal ("1st", "2nd", "3rd") each training step of ``seed`` asked for (the example seeds
    step ``i``'s instance with ``10_000 * seed + i``)."""
    import hud_gym

    env = hud_gym.make("hud/Browser-v0", task=f"miniwob/{TASK}", max_steps=1)
    try:
        return [str(env.reset(seed=10_000 * seed + i)[1]["prompt"]).split()[3] for i in range(steps)]
    finally:
        env.close()


def by_target(success: list[float], asked: list[str]) -> str:
    """Success per asked ordinal over the given steps: a policy that reads the instruction does well
    on each; a constant move does well on one only (and 1/3 overall at best)."""
    cells = []
    for ordinal in ("1st", "2nd", "3rd"):
        values = [value for value, target in zip(success, asked, strict=True) if target == ordinal]
        cells.append(f"{statistics.mean(values):.2f}" if values else "-")
    return " / ".join(cells)


def run(seed: int, out: Path) -> dict[str, Any]:
    command = [sys.executable, str(EXAMPLE), "--seed", str(seed), "--steps", str(STEPS), "--out", str(out)]
    subprocess.run(command, check=True, cwd=ROOT, timeout=1800)
    return json.loads((out / "summary.json").read_text())


def mean_std(values: list[float]) -> str:
    return f"{statistics.mean(values):.2f} ± {statistics.stdev(values) if len(values) > 1 else 0.0:.2f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="source", type=Path, help="aggregate DIR/seed<N>/summary.json")
    args = parser.parse_args(argv)
    runs: dict[int, dict[str, Any]] = {}
    for seed in SEEDS:
        out = (args.source or RESULTS / "trl_learning_runs") / f"seed{seed}"
        if (out / "summary.json").exists():
            runs[seed] = json.loads((out / "summary.json").read_text())
        elif args.source is None:
            runs[seed] = run(seed, out)
    baseline = random_baseline()
    first = {s: statistics.mean(r["success"][:WINDOW]) for s, r in runs.items()}
    last = {s: statistics.mean(r["success"][-WINDOW:]) for s, r in runs.items()}
    lines = [
        f"TRL {TASK}, element list as text: {STEPS} GRPO steps x 8 rollouts per seed; success = reward > 0; "
        f"random policy (uniform over the listed elements, {EPISODES} held-out instances): {baseline:.2f}.",
        "",
        f"| seed | steps | wall s | success, first {WINDOW} steps | success, last {WINDOW} steps "
        f"| last {WINDOW} by target 1st / 2nd / 3rd | random |",
        "|---:|---:|---:|---:|---:|---|---:|",
    ]
    for seed, summary in runs.items():
        asked = targets(seed, len(summary["success"]))
        split = by_target(summary["success"][-WINDOW:], asked[-WINDOW:])
        lines.append(
            f"| {seed} | {summary['steps']} | {summary['seconds']:.0f} | {first[seed]:.2f} | {last[seed]:.2f} "
            f"| {split} | {baseline:.2f} |"
        )
    lines.append(
        f"| mean ± std | | {statistics.mean(r['seconds'] for r in runs.values()):.0f} "
        f"| {mean_std(list(first.values()))} | {mean_std(list(last.values()))} | | {baseline:.2f} |"
    )
    table = "\n".join(lines) + "\n"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "trl_learning.md").write_text(table)
    with open(RESULTS / "trl_learning.csv", "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["seed", "step", "success"])
        for seed, summary in runs.items():
            writer.writerows([seed, step, value] for step, value in enumerate(summary["success"], 1))
    plot(runs, baseline)
    print(table)


def plot(runs: dict[int, dict[str, Any]], baseline: float) -> None:
    """Success per step, mean over seeds with min-max band, beside the random policy."""
    try:
        import matplotlib
    except ImportError:
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = min(len(r["success"]) for r in runs.values())
    columns = [[r["success"][i] for r in runs.values()] for i in range(steps)]
    xs = list(range(1, steps + 1))
    figure, axes = plt.subplots(figsize=(6.4, 4.0), dpi=120)
    axes.plot(xs, [statistics.mean(c) for c in columns], marker="o", label=f"GRPO, mean of {len(runs)} seeds")
    axes.fill_between(xs, [min(c) for c in columns], [max(c) for c in columns], alpha=0.15, label="min-max")
    axes.axhline(baseline, color="tab:gray", linestyle="--", label="random policy")
    axes.set_xlabel("GRPO step (8 rollouts each)")
    axes.set_ylabel("success rate of the step's rollouts")
    axes.set_ylim(0, 1)
    axes.set_title(f"TRL GRPO, tiny LM reading the element list, MiniWoB++ {TASK}", fontsize=10)
    axes.grid(alpha=0.3)
    axes.legend(loc="upper left")
    figure.tight_layout()
    figure.savefig(RESULTS / "trl_learning.png")
    plt.close(figure)


if __name__ == "__main__":
    main()
