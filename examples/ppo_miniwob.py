"""Train stable-baselines3 PPO from pixels on a MiniWoB++ task in hud/Browser-v0.

The default task, ``click-test``, draws a "Click Me!" button of random size (35-100 px) at a random
place in the 160x160 play area, so the policy has to find the button in the pixels. Each episode
is one click on a 5x5 grid over a 64x64 image of the play area (``Discrete(25)``, or
``MultiDiscrete`` with ``--action-mode multidiscrete``): the button always covers at least one cell
centre, and a random click hits it about 15% of the time.

Every ``--eval-every`` steps the current policy (deterministic) and a random policy each play
``--eval-episodes`` held-out instances; the success rates go to ``<out>/learning_curve.csv``, the
model to ``<out>/ppo_<task>.zip``.

Run: ``python examples/ppo_miniwob.py --steps 4000 --envs 4 --out runs/ppo``
"""

from __future__ import annotations

import argparse
import csv
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from stable_baselines3 import PPO

import hud_gym  # noqa: F401  (registers the gym ids)
from hud_gym.wrappers.integrations.sb3_vec_env import HudSB3VecEnv, to_sb3_vec_env

PLAY_AREA = (0, 50, 160, 160)  # (x, y, w, h): MiniWoB's task area below its 50 px instruction bar
EVAL_SEED = 1_000_000  # evaluation instances are seeded apart from the training ones


def make_env(task: str, num_envs: int, action_mode: str) -> HudSB3VecEnv:
    """``num_envs`` one-click episodes of ``miniwob/<task>`` seen as 64x64 images of the play area."""
    return to_sb3_vec_env(
        "hud/Browser-v0",
        num_envs,
        task=f"miniwob/{task}",
        observation_crop=PLAY_AREA,
        screen_size=(500, 320),
        max_steps=1,
        action_mode=action_mode,
        grid=(5, 5),
        keys=(),
        texts=(),
        observation_size=(64, 64),
    )


def success_rate(venv: HudSB3VecEnv, act: Callable[[np.ndarray], np.ndarray], episodes: int) -> float:
    """Fraction of ``episodes`` episodes (the same instances on every call) ending with reward > 0."""
    venv.seed(EVAL_SEED)
    observations = venv.reset()
    outcomes: list[bool] = []
    while len(outcomes) < episodes:
        observations, rewards, dones, _ = venv.step(act(observations))
        outcomes.extend((rewards[dones] > 0).tolist())
    return float(np.mean(outcomes[:episodes]))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default="click-test", help="MiniWoB++ task name")
    parser.add_argument("--steps", type=int, default=4000, help="training steps (env steps over all envs)")
    parser.add_argument("--envs", type=int, default=4, help="parallel browser envs (one Chromium)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/ppo_miniwob"))
    parser.add_argument("--eval-every", type=int, default=500, help="steps between evaluations")
    parser.add_argument("--eval-episodes", type=int, default=100)
    parser.add_argument("--action-mode", choices=["discrete", "multidiscrete"], default="discrete")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)  # leave the other core to Chromium

    train_env = make_env(args.task, args.envs, args.action_mode)
    eval_env = make_env(args.task, args.envs, args.action_mode)
    eval_env.action_space.seed(args.seed)
    # One click per episode is a contextual bandit: gamma=0, so a missed (truncated) click is
    # worth its reward, not bootstrapped from the unchanged page.
    model = PPO(
        "CnnPolicy",
        train_env,
        n_steps=64,
        batch_size=64,
        n_epochs=10,
        learning_rate=1e-3,
        gamma=0.0,
        ent_coef=0.01,
        seed=args.seed,
        verbose=0,
    )

    def policy(observations: np.ndarray) -> np.ndarray:
        return model.predict(observations, deterministic=True)[0]

    def random_policy(observations: np.ndarray) -> np.ndarray:
        return np.array([eval_env.action_space.sample() for _ in range(args.envs)])

    rows = []
    started = time.perf_counter()
    try:
        while True:
            rows.append(
                {
                    "steps": model.num_timesteps,
                    "seconds": round(time.perf_counter() - started, 1),
                    "ppo": success_rate(eval_env, policy, args.eval_episodes),
                    "random": success_rate(eval_env, random_policy, args.eval_episodes),
                }
            )
            print(
                f"steps {rows[-1]['steps']:>6}  {rows[-1]['seconds']:>6.0f} s  success: "
                f"PPO {rows[-1]['ppo']:.2f}  random {rows[-1]['random']:.2f}",
                flush=True,
            )
            if model.num_timesteps >= args.steps:
                break
            model.learn(min(args.eval_every, args.steps - model.num_timesteps), reset_num_timesteps=False)
    finally:
        train_env.close()
        eval_env.close()
    model.save(args.out / f"ppo_{args.task}.zip")
    with open(args.out / "learning_curve.csv", "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
