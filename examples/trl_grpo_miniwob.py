"""Train TRL's GRPOTrainer on a MiniWoB++ task in hud/Browser-v0, on a CPU, with no download.

The policy is a tiny tool-calling Qwen3 built in code (``examples/tiny_lm.py``). It acts through
the tools ``trl_environment_factory`` gives any model (``click``, ``type_text``, ``press``,
``scroll``, ``answer``, and ``click_element`` with ``elements=True``). Two observation modes:

- ``--mode elements`` (default): the env lists the page's elements as numbered text lines
  (``[2] input id=tt2``) after the instruction; the tokenizer's word-level vocabulary covers the
  words those instructions and lists use (gathered from a few resets of the task), and the model's
  moves are ``click_element(index)`` calls, one token each, so what it does can depend on what it
  reads. ``focus-text-2`` ("Focus into the 2nd input textbox.") is the default task: the target
  changes with the instruction, so no constant move solves it.
- ``--mode grid``: the model reads nothing (every word is ``[UNK]``) and its moves are nine
  ``click(x, y)`` calls on a 3x3 grid over the 160x160 play area (the screen-coordinate tool a VLM
  uses); pass ``--screenshots`` to return the screenshot as a TRL image block with every tool
  result (what a VLM needs; the tiny text model ignores it).

The env's reward (``get_reward()``, NaN for a failed episode) is the only reward; TRL logs it as
``rewards/<class name>/mean`` per step. ``benchmarks/trl_learning.py`` runs this over 5 seeds
beside the random policy.

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

from tiny_lm import tiny_tool_lm, words_of

from hud_gym.wrappers.integrations.trl import close_all, element_lines, trl_environment_factory

POINTS = [(x, y) for y in (30, 80, 130) for x in (30, 80, 130)]  # the centres of a 3x3 grid over the play area
GRID_ENV = {"screen_size": (500, 320), "observation_crop": (0, 50, 160, 160), "observation_size": (160, 160)}
ELEMENT_ENV = {"screen_size": (500, 320), "observation_crop": (0, 0, 160, 210)}  # MiniWoB's task area
VOCAB_SEED = 5_000_000  # the resets that gather the vocabulary are seeded apart from training and evaluation


def task_vocabulary(task: str, resets: int = 12) -> tuple[list[str], int]:
    """The words of ``task``'s instructions and element lists over ``resets`` seeded instances, and
    the longest element list (the number of ``click_element`` moves)."""
    import hud_gym

    env = hud_gym.make("hud/Browser-v0", task=f"miniwob/{task}", elements=True, max_steps=1, **ELEMENT_ENV)
    words: set[str] = set()
    longest = 1
    try:
        for i in range(resets):
            _, info = env.reset(seed=VOCAB_SEED + i)
            elements = info.get("elements") or []
            longest = max(longest, len(elements))
            words.update(words_of(f"{info.get('prompt', '')}\nElements:\n{element_lines(elements)}"))
    finally:
        env.close()
    return sorted(words), longest


def policy_and_env(mode: str, task: str, seed: int, screenshots: bool = False) -> tuple[Any, Any, Any]:
    """``(model, tokenizer, TRL environment class)`` for ``mode`` (``"elements"`` or ``"grid"``)."""
    if mode == "grid":
        model, tokenizer = tiny_tool_lm([("click", {"x": x, "y": y}) for x, y in POINTS], seed=seed)
        env_cls = trl_environment_factory("hud-browser", screenshots=screenshots, max_steps=1, **GRID_ENV)
        return model, tokenizer, env_cls
    words, longest = task_vocabulary(task)
    moves = [("click_element", {"index": i}) for i in range(longest)]
    model, tokenizer = tiny_tool_lm(moves, words=words, seed=seed, hidden=64)
    env_cls = trl_environment_factory("hud-browser", elements=True, max_steps=1, **ELEMENT_ENV)
    return model, tokenizer, env_cls


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=40, help="GRPO steps (one prompt of --group rollouts each)")
    parser.add_argument("--group", type=int, default=8, help="rollouts per prompt (num_generations)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mode", choices=["elements", "grid"], default="elements", help="observation/moves")
    parser.add_argument("--task", default=None, help="MiniWoB++ task (default: focus-text-2, grid: click-test)")
    parser.add_argument("--lr", type=float, default=None, help="default: 1e-2 (elements), 5e-3 (grid)")
    parser.add_argument("--screenshots", action="store_true", help="grid mode: tools return TRL image blocks")
    parser.add_argument("--out", type=Path, default=Path("runs/trl_grpo"))
    args = parser.parse_args(argv)
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

    import torch
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    torch.set_num_threads(1)  # leave the other core to Chromium
    task = args.task or ("click-test" if args.mode == "grid" else "focus-text-2")
    model, tokenizer, env_cls = policy_and_env(args.mode, task, args.seed, args.screenshots)
    outcomes: list[float] = []  # every rollout's reward, in TRL's order (one group per step)

    class Recorded(env_cls):  # type: ignore[misc,valid-type]
        def get_reward(self) -> float:
            reward = super().get_reward()
            outcomes.append(reward)
            if args.mode == "elements" and not math.isnan(reward):
                # Success (1) or not (0): MiniWoB scores a wrong input -1 but a click on the
                # instruction 0 (the task not done), which GRPO would learn as the safe move.
                return 1.0 if reward > 0 else 0.0
            return reward

    Recorded.__name__ = Recorded.__qualname__ = env_cls.__name__
    # The model writes moves only: every other token (words, markers) is suppressed in its completions.
    moves = {tokenizer.convert_tokens_to_ids(t) for t in tokenizer.get_vocab() if t.startswith("<tool_call>")}
    # Elements mode: exactly one move per rollout (one token, no end-of-turn), a bandit over the
    # listed elements; grid mode keeps its earlier shape (moves or end-of-turn, up to 8 tokens).
    keep = moves if args.mode == "elements" else moves | {tokenizer.eos_token_id}
    suppressed = sorted(set(tokenizer.get_vocab().values()) - keep)
    # One MiniWoB instance per step (its seed draws the page); G rollouts of it.
    rows = [{"task": f"miniwob/{task}", "seed": 10_000 * args.seed + i} for i in range(args.steps)]
    config = GRPOConfig(
        output_dir=str(args.out),
        per_device_train_batch_size=args.group,
        num_generations=args.group,
        max_steps=args.steps,
        max_completion_length=1 if args.mode == "elements" else 8,
        generation_kwargs={"suppress_tokens": suppressed},
        max_tool_calling_iterations=1,
        learning_rate=args.lr or (1e-2 if args.mode == "elements" else 5e-3),
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
        environment_factory=Recorded,
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
    successes = [
        sum(1 for r in outcomes[i : i + args.group] if r > 0) / args.group for i in range(0, len(outcomes), args.group)
    ]
    summary = {
        "mode": args.mode,
        "task": task,
        "steps": len(rewards),
        "rollouts": len(rewards) * args.group,
        "seconds": round(time.perf_counter() - started, 1),
        "reward_first_half": sum(rewards[:half]) / half,
        "reward_second_half": sum(rewards[half:]) / max(len(rewards) - half, 1),
        "success_first_half": sum(successes[:half]) / half,
        "success_second_half": sum(successes[half:]) / max(len(successes) - half, 1),
        "rewards": rewards,
        "success": successes,  # per step: the fraction of its rollouts with reward > 0
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps({k: v for k, v in summary.items() if k not in ("rewards", "success")}))
    return summary


if __name__ == "__main__":
    main()
