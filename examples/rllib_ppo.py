"""Train RLlib's PPO (new API stack) on hud-gym with no glue: the ``"hud_gym:hud/..."`` id (so
RLlib's env-runner processes import hud-gym themselves), the vector entry point, and the flat form
chosen in ``env_config`` (float images, a discrete click vocabulary on a grid).

Default: MiniWoB's click-test in hud/Browser-v0, one click per episode on a 5x5 grid over a 42x42
image of the play area, in ``--runners`` remote env runners (0: sample in this process).

Run: ``python examples/rllib_ppo.py --iterations 20 --runners 1``
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--runners", type=int, default=1, help="remote env runners (0: the local one)")
    parser.add_argument("--envs", type=int, default=2, help="envs per env runner (one Chromium each runner)")
    parser.add_argument("--batch", type=int, default=256, help="env steps per iteration")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import ray
    import torch
    from ray.rllib.algorithms.ppo import PPOConfig

    torch.set_num_threads(1)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    env_config = {
        "task": "miniwob/click-test",
        "screen_size": (500, 320),
        "observation_crop": (0, 50, 160, 160),
        "observation": "image",
        "normalize": True,
        "observation_size": (42, 42),
        "action_mode": "discrete",
        "grid": (5, 5),
        "keys": (),
        "texts": (),
        "max_steps": 1,
    }
    config = (
        PPOConfig()
        .environment("hud_gym:hud/Browser-v0", env_config=env_config)
        .env_runners(
            num_env_runners=args.runners,
            num_envs_per_env_runner=args.envs,
            gym_env_vectorize_mode="vector_entry_point",
            rollout_fragment_length=max(args.batch // max(args.runners, 1) // args.envs, 1),
        )
        .training(train_batch_size_per_learner=args.batch, minibatch_size=min(64, args.batch), num_epochs=4, gamma=0.0)
        .debugging(seed=args.seed)
    )
    algo = config.build_algo()
    rows = []
    started = time.perf_counter()
    try:
        for i in range(args.iterations):
            result = algo.train()
            rows.append(
                {
                    "iteration": i + 1,
                    "env_steps": result["env_runners"]["num_env_steps_sampled_lifetime"],
                    "seconds": round(time.perf_counter() - started, 1),
                    "episode_return_mean": result["env_runners"].get("episode_return_mean"),
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    finally:
        algo.stop()
        ray.shutdown()
    return rows


if __name__ == "__main__":
    main()
