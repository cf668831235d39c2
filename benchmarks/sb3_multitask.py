"""Multi-task PPO from pixels through the SB3 wrappers on 5 MiniWoB++ click tasks (issue 16, item 5a).

One SB3 ``PPO("CnnPolicy")`` learns ``TASKS`` at once: ``to_sb3_vec_env`` over ``hud/Browser-v0``
with ``taskset=TASKS`` (each reset draws a task with the env's seeded generator), observation = the
whole 160x210 task area (instruction bar included: click-button, click-link and click-option name
their target only there) resized to ``--size``, action = one click on a ``--grid`` grid
(``Discrete``), up to ``--max-steps`` clicks per episode (click-option needs two: the option, then
Submit). Training runs for ``--minutes`` of wall time per seed (evaluations not counted); every
``--eval-every`` minutes the deterministic policy and a random policy play ``--eval-episodes``
held-out episodes and their success (reward > 0) is reported per task.

Run: ``python -m benchmarks.sb3_multitask --seeds 0 1 2 3 4 --minutes 30`` (2.5 hours for 5 seeds);
writes ``benchmarks/results/sb3_multitask.md`` and ``.csv``.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
TASKS = ("click-test", "click-button", "click-link", "click-option", "focus-text")
EVAL_SEED = 1_000_000


def make_venv(args: argparse.Namespace) -> Any:
    from hud_gym.wrappers.sb3_vec_env import to_sb3_vec_env

    return to_sb3_vec_env(
        "hud/Browser-v0",
        args.envs,
        taskset=[f"miniwob/{t}" for t in args.tasks],
        screen_size=(500, 320),
        observation_crop=(0, 0, 160, 210),
        observation_size=tuple(args.size),
        max_steps=args.max_steps,
        action_mode="discrete",
        grid=tuple(args.grid),
        keys=(),
        texts=(),
    )


def evaluate(venv: Any, act: Any, episodes: int) -> dict[str, float]:
    """Success per task (and ``"mean"`` over tasks) of ``act`` on ``episodes`` held-out episodes."""
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


def train(seed: int, args: argparse.Namespace) -> list[dict[str, Any]]:
    import torch
    from stable_baselines3 import PPO

    import hud_gym  # noqa: F401  (registers the ids)

    torch.set_num_threads(1)
    train_env, eval_env = make_venv(args), make_venv(args)
    eval_env.action_space.seed(seed)
    model = PPO(
        "CnnPolicy", train_env, n_steps=64, batch_size=64, n_epochs=10, learning_rate=1e-3,
        gamma=0.5, ent_coef=0.01, seed=seed, verbose=0,
    )  # fmt: skip
    rows: list[dict[str, Any]] = []
    trained = 0.0
    try:
        while True:
            ppo = evaluate(eval_env, lambda o: model.predict(o, deterministic=True)[0], args.eval_episodes)
            rand = evaluate(
                eval_env, lambda o: np.array([eval_env.action_space.sample() for _ in range(args.envs)]), 50
            )
            rows.append({"seed": seed, "minutes": round(trained / 60, 1), "steps": model.num_timesteps,
                         "ppo": ppo, "random": rand})  # fmt: skip
            print(f"seed {seed} {trained / 60:5.1f} min {model.num_timesteps:6d} steps  PPO "
                  + " ".join(f"{k} {v:.2f}" for k, v in ppo.items()) + f"  random {rand['mean']:.2f}", flush=True)  # fmt: skip
            if trained >= args.minutes * 60:
                break
            started = time.perf_counter()
            budget = min(args.eval_every, args.minutes - trained / 60) * 60
            while time.perf_counter() - started < budget:
                model.learn(256, reset_num_timesteps=False)
            trained += time.perf_counter() - started
    finally:
        train_env.close()
        eval_env.close()
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--minutes", type=float, default=30.0, help="training wall time per seed")
    parser.add_argument("--eval-every", type=float, default=5.0, help="minutes of training between evaluations")
    parser.add_argument("--eval-episodes", type=int, default=100)
    parser.add_argument("--tasks", nargs="+", default=list(TASKS))
    parser.add_argument("--envs", type=int, default=4)
    parser.add_argument("--size", type=int, nargs=2, default=(64, 84), help="observation width height")
    parser.add_argument("--grid", type=int, nargs=2, default=(8, 10), help="click grid columns rows")
    parser.add_argument("--max-steps", type=int, default=2)
    args = parser.parse_args(argv)
    rows = [row for seed in args.seeds for row in train(seed, args)]
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / "sb3_multitask.csv", "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["seed", "minutes", "steps", "policy", "task", "success"])
        for row in rows:
            for policy in ("ppo", "random"):
                writer.writerows(
                    [row["seed"], row["minutes"], row["steps"], policy, task, rate]
                    for task, rate in row[policy].items()
                )
    tasks = [t for t in rows[-1]["ppo"] if t != "mean"]
    lines = [
        "| seed | minutes | steps | " + " | ".join(tasks) + " | PPO mean | random mean |",
        "|---:|---:|---:|" + "---:|" * (len(tasks) + 2),
    ]
    for row in rows:
        cells = " | ".join(f"{row['ppo'].get(t, float('nan')):.2f}" for t in tasks)
        lines.append(
            f"| {row['seed']} | {row['minutes']} | {row['steps']} | {cells} | {row['ppo']['mean']:.2f} "
            f"| {row['random']['mean']:.2f} |"
        )
    table = "\n".join(lines) + "\n"
    (RESULTS / "sb3_multitask.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
