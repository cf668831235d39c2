"""The TRL adapter under the real ``trl.GRPOTrainer`` (CPU, a tiny tool-calling model built in
examples/tiny_lm.py, no download): on hud/QA-v0 and on MiniWoB's click-test in real Chromium.

Each run is 2 GRPO steps of 4 rollouts; the test checks that the rewards TRL logs are the env's
(a failed grading is NaN, left out of TRL's mean, never a 0), that the model sees the question
once, that only the tools are exposed, and that the browser envs are released (by pid).
"""

from __future__ import annotations

import gc
import math
import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl")
pytest.importorskip("transformers")

from hud_gym.wrappers.integrations.trl import close_all, trl_environment_factory

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import failing_functions  # noqa: F401  (registers failing_raises)
from tiny_lm import tiny_tool_lm

TOOLS = {"click", "type_text", "press", "scroll", "answer"}
QUESTION = "What is 2+2?"


def run_grpo(env_cls: type, rows: list[dict[str, Any]], moves: list[tuple[str, dict[str, Any]]], tmp_path: Path) -> Any:
    """A real GRPOTrainer over ``env_cls``: 2 steps of 4 rollouts (one prompt per step, G=4).

    Returns ``(trainer, seen)``: ``seen`` holds, per scoring call, the prompts TRL built and the
    rewards the envs reported.
    """
    import torch
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"
    torch.set_num_threads(1)
    model, tokenizer = tiny_tool_lm(moves, seed=0)
    seen: list[tuple[list[Any], list[float]]] = []

    def spy(prompts: list[Any], environments: list[Any], **kwargs: Any) -> list[float | None]:
        seen.append((prompts, [env.get_reward() for env in environments]))
        return [None] * len(environments)  # not a reward source: TRL leaves None out

    args = GRPOConfig(
        output_dir=str(tmp_path / "grpo"),
        per_device_train_batch_size=4,
        num_generations=4,
        max_steps=2,
        max_completion_length=16,
        max_tool_calling_iterations=2,
        logging_steps=1,
        learning_rate=1e-2,
        report_to=[],
        save_strategy="no",
        use_cpu=True,
        seed=0,
    )
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        args=args,
        train_dataset=Dataset.from_list(rows),
        reward_funcs=[spy],
        environment_factory=env_cls,
    )
    trainer.train()
    return trainer, seen


def logged_rewards(trainer: Any, env_cls: type) -> list[float]:
    """The env's reward TRL logged per step (under the class's name); TRL logs None for an all-NaN step."""
    key = f"rewards/{env_cls.__name__}/mean"
    return [math.nan if h[key] is None else h[key] for h in trainer.state.log_history if "step_time" in h]


def nanmean(values: list[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return sum(kept) / len(kept) if kept else math.nan


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, abs_tol=1e-6)


@pytest.mark.timeout(240)
def test_grpo_trainer_on_qa_logs_the_env_rewards(tmp_path: Path) -> None:
    env_cls = trl_environment_factory("qa")
    good = {"prompt": [{"role": "user", "content": QUESTION}], "target": "4", "gym": "qa", "seed": 0, "evaluate": None}
    broken = {**good, "evaluate": "failing_raises"}  # its grading raises: NaN, not 0
    moves = [("answer", {"text": "4"}), ("answer", {"text": "5"}), ("type_text", {"text": "4"})]
    trainer, seen = run_grpo(env_cls, [good, broken], moves, tmp_path)
    try:
        # Only the tools are offered to the model (TRL exposes every public function).
        assert {t.__name__ for t in trainer.tools} == TOOLS
        assert len(seen) == 2 and all(len(rewards) == 4 for _, rewards in seen)
        # One step per row (TRL shuffles them): the good row graded 0/1, the broken one NaN (not 0).
        graded = [all(r in (0.0, 1.0) for r in rewards) for _, rewards in seen]
        failed = [all(math.isnan(r) for r in rewards) for _, rewards in seen]
        assert sorted(graded) == sorted(failed) == [False, True] and graded != failed
        # What TRL logs is the env's reward: its mean, NaN for the failed step.
        logged = logged_rewards(trainer, env_cls)
        assert [same(a, nanmean(b)) for a, (_, b) in zip(logged, seen, strict=True)] == [True, True]
        assert math.isnan(logged[failed.index(True)])
        # The row's prompt is shown once (reset returns None for a row that has one).
        for prompt in seen[0][0] + seen[1][0]:
            text = " ".join(str(m["content"]) for m in prompt if m["role"] == "user")
            assert text.count(QUESTION) == 1, text
    finally:
        close_all()
    assert all(env.env is None for env in trainer.environments)


def needs_miniwob_in_chromium() -> None:
    """Skip (with the reason) without MiniWoB++ or a Chromium."""
    pytest.importorskip("miniwob")
    from hud_gym.controllers.browser.chromium import ChromiumNotFoundError, find_chromium

    try:
        find_chromium()
    except ChromiumNotFoundError as exc:
        pytest.skip(str(exc))


@pytest.mark.timeout(240)
def test_grpo_trainer_on_miniwob_click_test_releases_chromium(tmp_path: Path) -> None:
    needs_miniwob_in_chromium()
    import psutil

    from hud_gym.controllers.browser.chromium import MANAGER

    env_cls = trl_environment_factory(
        "hud-browser", screen_size=(500, 320), observation_size=(160, 160), observation_crop=(0, 50, 160, 160)
    )
    points = [(x, y) for x in (30, 80, 130) for y in (30, 80, 130)]  # a 3x3 grid over the 160x160 play area
    moves: list[tuple[str, dict[str, Any]]] = [("click", {"x": x, "y": y}) for x, y in points]
    rows = [{"task": "miniwob/click-test", "seed": seed} for seed in (1, 2)]
    trainer, seen = run_grpo(env_cls, rows, moves, tmp_path)
    pids = MANAGER.pids()
    assert pids, "the browser envs run Chromium"
    # No prompt in the rows: TRL's prompt is reset()'s instruction, shown once.
    for prompts, _ in seen:
        for prompt in prompts:
            assert prompt[-1]["content"].count("Click the button.") == 1, prompt
    logged = logged_rewards(trainer, env_cls)
    assert [same(a, nanmean(b)) for a, (_, b) in zip(logged, seen, strict=True)] == [True, True]
    assert all(r in (0.0, 1.0) for _, rewards in seen for r in rewards)
    # The trainer (and its pool of environments) going away closes every env: no Chromium left.
    del trainer
    gc.collect()
    assert MANAGER.pids() == set()
    for pid in pids:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_screenshots_mode_returns_trl_image_blocks() -> None:
    env_cls = trl_environment_factory("qa", screenshots=True, observation_size=(320, 180))
    env = env_cls()
    try:
        assert env.reset(task="qa-basic/capital-france") == "What is the capital of France?"
        image, text = env.type_text("Par")
        assert image["type"] == "image" and image["image"].size == (320, 180)
        assert text["type"] == "text" and "Answer so far: Par" in text["text"]
        env_cls.close_all()
        assert env.env is None
    finally:
        close_all()


@pytest.mark.timeout(120)
def test_elements_mode_lists_the_task_area_and_clicks_by_index() -> None:
    needs_miniwob_in_chromium()
    import inspect

    env_cls = trl_environment_factory(
        "hud-browser", elements=True, max_steps=1, screen_size=(500, 320), observation_crop=(0, 0, 160, 210)
    )
    tools = {n for n, _ in inspect.getmembers(env_cls, inspect.isfunction) if not n.startswith("_")}
    assert "click_element" in tools and "close_all" not in tools
    assert "click_element" not in {n for n, _ in inspect.getmembers(trl_environment_factory("qa"), inspect.isfunction)}
    env = env_cls()
    try:
        text = env.reset(task="miniwob/focus-text-2", seed=0)
        lines = text.splitlines()
        # The five elements of the 160x210 task area (not MiniWoB's reward panel beside it): its
        # painted wrapper (as in MiniWoB's own DOM observation), the query, the inputs; instruction last.
        assert lines[:6] == ["Elements:", "[0] div id=wrap", '[1] div id=query "' + lines[-1] + '"'] + [
            f"[{i + 1}] input id=tt{i}" for i in (1, 2, 3)
        ]
        ordinal = int(lines[-1].split("Focus into the ")[1][0])  # "1st" / "2nd" / "3rd"
        assert env.click_element(7).startswith("Error: no element 7")  # refused, the episode goes on
        assert "The episode is over." in env.click_element(ordinal + 1)
        assert env.get_reward() == 1.0
        env.reset(task="miniwob/focus-text-2", seed=0)
        env.click_element(ordinal % 3 + 2)  # another input
        assert env.get_reward() == -1.0
    finally:
        close_all()
