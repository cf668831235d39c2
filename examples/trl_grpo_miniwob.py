"""Train TRL's GRPOTrainer on MiniWoB's click-test in hud/Browser-v0, on a CPU, with no download.

The policy is a tiny tool-calling Qwen3 built in code (``examples/tiny_lm.py``): its vocabulary is
nine ``click(x, y)`` tool calls on a 3x3 grid over the 160x160 play area, so it acts through the
same tools (``click``, ``type_text``, ``press``, ``scroll``, ``answer``) a real VLM gets from
``trl_environment_factory``. Pass ``--screenshots`` to return the screenshot as a TRL image block
with every tool result (what a VLM needs; the tiny text model here ignores it). The env's reward
(``get_reward()``, NaN for a failed episode) is the only reward; TRL logs it as
``rewards/<class name>/mean`` per step, printed below with the random-policy baseline.

Run: ``python examples/trl_grpo_miniwob.py --steps 40 --out runs/trl_grpo``
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tiny_lm import tiny_tool_lm

from hud_gym.wrappers.integrations.trl import close_all, trl_environment_factory

POINTS = [(x, y) for y in (30, 80, 130) for x in (30, 80, 130)]  # the centres of a 3x3 grid over the play area


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=40, help="GRPO steps (one prompt of --group rollouts each)")
    parser.add_argument("--group", type=int, default=8, help="rollouts per prompt (num_generations)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--screenshots", action="store_true", help="tools return TRL image blocks (for a VLM)")
    parser.add_argument("--out", type=Path, default=Path("runs/trl_grpo"))
    args = parser.parse_args(argv)
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

    import torch
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    torch.set_num_threads(1)  # leave the other core to Chromium
    model, tokenizer = tiny_tool_lm([("click", {"x": x, "y": y}) for x, y in POINTS], seed=args.seed)
    env_cls = trl_environment_factory(
        "hud-browser",
        screenshots=args.screenshots,
        screen_size=(500, 320),
        observation_crop=(0, 50, 160, 160),
        observation_size=(160, 160),
        max_steps=1,
    )
    # One MiniWoB instance per step (the seed draws the button's place); G rollouts of it.
    rows = [{"task": "miniwob/click-test", "seed": 10_000 * args.seed + i} for i in range(args.steps)]
    config = GRPOConfig(
        output_dir=str(args.out),
        per_device_train_batch_size=args.group,
        num_generations=args.group,
        max_steps=args.steps,
        max_completion_length=8,
        max_tool_calling_iterations=1,
        learning_rate=5e-3,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        use_cpu=True,
        seed=args.seed,
        shuffle_dataset=False,
    )
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        args=config,
        train_dataset=Dataset.from_list(rows),
        environment_factory=env_cls,
    )
    started = time.perf_counter()
    try:
        trainer.train()
    finally:
        close_all()
    key = f"rewards/{env_cls.__name__}/mean"
    rewards = [h[key] for h in trainer.state.log_history if key in h]
    rewards = [math.nan if r is None else float(r) for r in rewards]
    half = max(len(rewards) // 2, 1)
    summary = {
        "steps": len(rewards),
        "rollouts": len(rewards) * args.group,
        "seconds": round(time.perf_counter() - started, 1),
        "success_first_half": sum(rewards[:half]) / half,
        "success_second_half": sum(rewards[half:]) / max(len(rewards) - half, 1),
        "rewards": rewards,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps({k: v for k, v in summary.items() if k != "rewards"}))
    return summary


if __name__ == "__main__":
    main()
