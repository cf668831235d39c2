"""Multi-task PPO from pixels through the SB3 wrappers on 5 MiniWoB++ click tasks (issue 16, item 5a).

One SB3 PPO learns ``--tasks`` (default ``TASKS``) at once: ``to_sb3_vec_env`` over
``hud/Browser-v0`` with ``taskset=`` the tasks (each reset draws a task with the env's seeded
generator). Observation (``--text words``, the default: "pixels + instruction text", as MiniWoB++
agents get the utterance): a ``Dict`` of the ``--crop`` of the page (default the 160x160 play area
below the instruction bar) resized to ``--size``, and the observation text (the instruction) as the
SB3 wrappers' hashed bag of words (``text="words"``), for ``MultiInputPolicy``; ``--text drop``:
the image alone, for ``CnnPolicy`` (then crop the whole 160x210 task area, ``--crop 0 0 160 210``,
so the instruction is in the pixels). Action: one click on a ``--grid`` grid (``Discrete``), up to
``--max-steps`` clicks per episode (click-option needs two: the option, then Submit).

Each seed trains for ``--steps`` env steps; every ``--eval-steps`` the deterministic policy plays
``--eval-episodes`` held-out episodes (the same instances each time) and its success (reward > 0) is
recorded per task with the wall time (training only) and the load average; a random policy plays
100 of the same episodes once per seed.

Run: ``python -m benchmarks.sb3_multitask --seeds 0 1 2 3 4 --steps 2048 --eval-steps 512``; writes
``benchmarks/results/<--name>.csv``, ``.md`` and ``.png`` (mean ± sd over seeds per evaluation point)
after every seed. ``--merge A B --name C`` merges the results of runs made in separate processes.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
TASKS = ("click-test", "click-button", "click-link", "click-option", "focus-text")
EVAL_SEED = 1_000_000
WORD_BUCKETS = 256  # hash buckets of the instruction's bag of words (--text words)


def make_venv(args: argparse.Namespace) -> Any:
    from hud_gym.wrappers.integrations.sb3_vec_env import to_sb3_vec_env

    return to_sb3_vec_env(
        "hud/Browser-v0",
        args.envs,
        taskset=[f"miniwob/{t}" for t in args.tasks],
        screen_size=(500, 320),
        observation_crop=tuple(args.crop),
        observation_size=tuple(args.size),
        max_steps=args.max_steps,
        action_mode="discrete",
        grid=tuple(args.grid),
        keys=(),
        texts=(),
        text=args.text,
        text_length=WORD_BUCKETS,
    )


def evaluate(venv: Any, act: Any, episodes: int) -> dict[str, float]:
    """Success per task (and ``"mean"`` over tasks) of ``act`` on ``episodes`` held-out episodes
    (the same instances at every call: the env is reseeded)."""
    venv.seed(EVAL_SEED)
    observations = venv.reset()
    outcomes: dict[str, list[bool]] = defaultdict(list)
    done_count = 0
    while done_count < episodes:
        observations, rewards, dones, infos = venv.step(act(observations))
        for i in np.flatnonzero(dones):
            task = str(infos[i].get("task_id", "?")).split("/")[-1]
            outcomes[task].append(bool(rewards[i] > 0))
            done_count += 1
    rates = {task: float(np.mean(values)) for task, values in sorted(outcomes.items())}
    rates["mean"] = statistics.mean(rates.values())
    return rates


def train(seed: int, args: argparse.Namespace, rows: list[dict[str, Any]]) -> None:
    """Train one seed for ``args.steps`` env steps, appending a row to ``rows`` (and writing the
    results) every ``args.eval_steps``: the success per task of the held-out evaluation
    (``args.eval_episodes`` > 0) or, with ``args.eval_episodes == 0``, of the training episodes that
    ended in those ``args.eval_steps`` steps (the stochastic policy as it learns; no extra env steps)."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback

    import hud_gym  # noqa: F401  (registers the ids)

    torch.set_num_threads(1)
    train_env = make_venv(args)
    eval_env = make_venv(args) if args.eval_episodes else None
    policy = "CnnPolicy" if args.text == "drop" else "MultiInputPolicy"
    model = PPO(
        policy, train_env, n_steps=64, batch_size=64, n_epochs=10, learning_rate=args.lr,
        gamma=0.5, ent_coef=0.01, seed=seed, verbose=0,
    )  # fmt: skip
    trained = 0.0
    started = time.perf_counter()

    def record(ppo: dict[str, float]) -> None:
        minutes = round((trained + time.perf_counter() - started) / 60, 2)
        rows.append({"seed": seed, "minutes": minutes, "steps": model.num_timesteps,
                     "load": round(os.getloadavg()[0], 1), "ppo": ppo, "random": rand})  # fmt: skip
        print(f"seed {seed} {minutes:5.1f} min {model.num_timesteps:6d} steps load {rows[-1]['load']:4.1f} PPO "
              + " ".join(f"{k} {v:.2f}" for k, v in ppo.items()) + f"  random {rand['mean']:.2f}", flush=True)  # fmt: skip
        write_results(rows, args)

    outcomes: dict[str, list[bool]] = defaultdict(list)

    class TrainingSuccess(BaseCallback):
        def _on_step(self) -> bool:
            for i in np.flatnonzero(self.locals["dones"]):
                task = str(self.locals["infos"][i].get("task_id", "?")).split("/")[-1]
                outcomes[task].append(bool(self.locals["rewards"][i] > 0))
            if self.num_timesteps % args.eval_steps == 0 and outcomes:
                rates = {task: float(np.mean(values)) for task, values in sorted(outcomes.items())}
                record({**rates, "mean": statistics.mean(rates.values())})
                outcomes.clear()
            return True

    try:
        # The random policy does not learn: one evaluation per seed (on the held-out instances, or
        # on instances seeded apart from the training ones), not counted in the training time.
        probe = eval_env or train_env
        probe.action_space.seed(seed)
        rand = evaluate(
            probe, lambda o: np.array([probe.action_space.sample() for _ in range(args.envs)]), args.random_episodes
        )
        started = time.perf_counter()
        if eval_env is None:
            train_env.seed(seed)  # training instances: the seed's stream, not the random policy's
            model.learn(args.steps, callback=TrainingSuccess())
            return
        while True:
            trained += time.perf_counter() - started
            ppo = evaluate(eval_env, lambda o: model.predict(o, deterministic=True)[0], args.eval_episodes)
            started = time.perf_counter()
            record(ppo)
            if model.num_timesteps >= args.steps:
                break
            model.learn(args.eval_steps, reset_num_timesteps=False)
    finally:
        train_env.close()
        if eval_env is not None:
            eval_env.close()


def write_results(rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    """``results/<args.name>.csv`` (every evaluation), ``.md`` (mean ± sd over seeds at each step,
    then per seed) and ``.png`` (mean ± sd over seeds, seeds faint, the random policy dashed)."""
    name = args.name
    measured = (
        f"the deterministic policy on {args.eval_episodes} held-out episodes (the same at every point)"
        if args.eval_episodes
        else f"the training episodes (stochastic policy) that ended in the {args.eval_steps} steps up to each point"
    )
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / f"{name}.csv", "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["seed", "minutes", "steps", "load", "policy", "task", "success"])
        for row in rows:
            for policy in ("ppo", "random"):
                writer.writerows(
                    [row["seed"], row["minutes"], row["steps"], row["load"], policy, task, rate]
                    for task, rate in row[policy].items()
                )
    tasks = sorted({t for row in rows for t in row["ppo"] if t != "mean"})
    seeds = sorted({row["seed"] for row in rows})
    by_steps: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_steps[row["steps"]].append(row)

    def spread(values: list[float]) -> str:
        if len(values) < 2:
            return f"{values[0]:.2f}" if values else "-"
        return f"{statistics.fmean(values):.2f} ± {statistics.stdev(values):.2f}"

    lines = [
        f"Success (reward > 0) of {measured}; mean ± sd over seeds {', '.join(map(str, seeds))}.",
        "",
        "| steps | minutes (mean) | " + " | ".join(tasks) + " | PPO mean | random mean |",
        "|---:|---:|" + "---:|" * (len(tasks) + 2),
    ]
    for steps, group in sorted(by_steps.items()):
        cells = " | ".join(spread([r["ppo"][t] for r in group if t in r["ppo"]]) for t in tasks)
        lines.append(
            f"| {steps:,} | {statistics.fmean(r['minutes'] for r in group):.1f} | {cells} "
            f"| {spread([r['ppo']['mean'] for r in group])} | {spread([r['random']['mean'] for r in group])} |"
        )
    lines += ["", "Per seed:", "", "| seed | minutes | steps | load | " + " | ".join(tasks) + " | PPO mean |",
              "|---:|---:|---:|---:|" + "---:|" * (len(tasks) + 1)]  # fmt: skip
    for row in rows:
        cells = " | ".join(f"{row['ppo'].get(t, float('nan')):.2f}" for t in tasks)
        lines.append(
            f"| {row['seed']} | {row['minutes']} | {row['steps']} | {row['load']} | {cells} | {row['ppo']['mean']:.2f} |"
        )
    first = {row["seed"]: row["random"] for row in reversed(rows)}  # the random policy's rates, once per seed
    rand_tasks = " ".join(
        f"{t} {statistics.fmean(r[t] for r in first.values() if t in r):.2f}"
        for t in tasks
        if any(t in r for r in first.values())
    )
    lines += ["", f"Random policy ({args.random_episodes} episodes per seed, before training): {rand_tasks}."]
    table = "\n".join(lines) + "\n"
    (RESULTS / f"{name}.md").write_text(table)
    print(table)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = sorted(by_steps)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for seed in seeds:
        mine = sorted((r["steps"], r["ppo"]["mean"]) for r in rows if r["seed"] == seed)
        axes[0].plot(*zip(*mine, strict=True), color="tab:blue", alpha=0.25, linewidth=1)
    mean = np.array([statistics.fmean(r["ppo"]["mean"] for r in by_steps[s]) for s in steps])
    sd = np.array([statistics.pstdev(r["ppo"]["mean"] for r in by_steps[s]) for s in steps])
    axes[0].plot(
        steps,
        mean,
        color="tab:blue",
        linewidth=2,
        label=f"PPO ({'held-out' if args.eval_episodes else 'training episodes'}), mean ± sd, {len(seeds)} seeds",
    )
    axes[0].fill_between(steps, mean - sd, mean + sd, color="tab:blue", alpha=0.2)
    axes[0].axhline(statistics.fmean(r["random"]["mean"] for r in rows), color="red", linestyle="--", label="random")
    axes[0].axhline(0.9, color="grey", linestyle=":", label="target 0.9")
    axes[0].set(
        xlabel="env steps", ylabel="mean success over tasks", ylim=(0, 1), title=f"mean over the {len(tasks)} tasks"
    )
    axes[0].legend(fontsize=7)
    for task in tasks:
        values = [statistics.fmean(r["ppo"][task] for r in by_steps[s] if task in r["ppo"]) for s in steps]
        axes[1].plot(steps, values, label=task)
    axes[1].set(xlabel="env steps", ylabel="success (mean over seeds)", ylim=(0, 1), title="per task")
    axes[1].legend(fontsize=7)
    view = "pixels + instruction words" if args.text == "words" else "pixels"
    fig.suptitle(f"SB3 PPO, {len(tasks)} MiniWoB++ tasks at once, {view}, {args.envs} envs", fontsize=10)
    fig.tight_layout()
    fig.savefig(RESULTS / f"{name}.png", dpi=110)


def read_results(name: str) -> list[dict[str, Any]]:
    """The rows :func:`write_results` wrote to ``results/<name>.csv``."""
    rows: dict[tuple[int, int], dict[str, Any]] = {}
    with open(RESULTS / f"{name}.csv", newline="") as file:
        for record in csv.DictReader(file):
            key = (int(record["seed"]), int(record["steps"]))
            row = rows.setdefault(key, {"seed": key[0], "minutes": float(record["minutes"]), "steps": key[1],
                                        "load": float(record["load"]), "ppo": {}, "random": {}})  # fmt: skip
            row[record["policy"]][record["task"]] = float(record["success"])
    return list(rows.values())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--steps", type=int, default=8192, help="training env steps per seed")
    parser.add_argument("--eval-steps", type=int, default=1024, help="training env steps between evaluations")
    parser.add_argument("--eval-episodes", type=int, default=50, help="0: success of the training episodes")
    parser.add_argument("--random-episodes", type=int, default=100, help="random-policy episodes per seed")
    parser.add_argument("--tasks", nargs="+", default=list(TASKS))
    parser.add_argument("--envs", type=int, default=4)
    parser.add_argument("--text", choices=["drop", "words"], default="words", help="'words': pixels + instruction")
    parser.add_argument("--crop", type=int, nargs=4, default=(0, 50, 160, 160), help="observed x y width height")
    parser.add_argument("--size", type=int, nargs=2, default=(80, 80), help="observation width height")
    parser.add_argument("--grid", type=int, nargs=2, default=(10, 10), help="click grid columns rows")
    parser.add_argument("--max-steps", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--name", default="sb3_multitask", help="results/<name>.{csv,md,png}")
    parser.add_argument("--merge", nargs="+", help="no training: merge these results/<name>.csv into --name")
    args = parser.parse_args(argv)
    if args.merge:
        write_results([row for name in args.merge for row in read_results(name)], args)
        return
    rows: list[dict[str, Any]] = []
    for seed in args.seeds:
        train(seed, args, rows)  # writes the results at every evaluation: a cut-short run keeps its rows


if __name__ == "__main__":
    main()
