"""The reward rule: ``eval_error`` only when the evaluator is broken; a state where what it checks
is absent (:class:`~hud_gym.evaluation.TargetAbsent`) is graded as the task's failure: the low end
of the call's reward range, not an error, ``done`` when the instance is gone for good."""

from __future__ import annotations

import math
import pickle

import pytest

from hud_gym import ResponseAction, Task, TypeAction
from hud_gym.envs.qa import QAEnv
from hud_gym.evaluation import FunctionContext, TargetAbsent, evaluate_function, is_absent

pytestmark = pytest.mark.timeout(60)


@evaluate_function(name="absent_target_test")
def absent_target_test(ctx: FunctionContext) -> float:
    raise TargetAbsent("the checked file is gone")


@evaluate_function(name="absent_final_test", reward_range=(-1.0, 1.0))
def absent_final_test(ctx: FunctionContext) -> float:
    raise TargetAbsent("the task's page was left", final=True)


@evaluate_function(name="broken_evaluator_test")
def broken_evaluator_test(ctx: FunctionContext) -> float:
    raise KeyError("evaluator bug")


def answer(evaluate: object, **config: object) -> tuple[float | None, dict[str, object]]:
    env = QAEnv(task=Task(id="t", prompt="q", gym="qa", evaluate=evaluate, config=config or None))
    try:
        env.reset(seed=0)
        _, reward, terminated, _, info = env.step(ResponseAction(text="x"))
        assert terminated
        return reward, info
    finally:
        env.close()


def test_an_absent_target_is_the_failure_value_not_an_eval_error() -> None:
    reward, info = answer(("absent_target_test",))
    grade = info["grade"]
    assert reward == 0.0 and info["status"] == "ok", info
    assert not grade.is_error and is_absent(grade) and "gone" in grade.content  # type: ignore[attr-defined]


def test_the_failure_value_is_the_low_end_of_the_range() -> None:
    reward, info = answer(("absent_final_test",))
    assert reward == -1.0 and info["status"] == "ok", info
    # A task's own range wins, as for any reward; combined with a passing check it stays graded.
    reward, info = answer([("absent_final_test",), ("response_is", "x")], reward_range=[0, 1], evaluate_combine="min")
    assert reward == 0.0 and info["status"] == "ok" and is_absent(info["grade"]), info  # type: ignore[arg-type]


def test_a_final_absence_ends_an_every_step_episode() -> None:
    task = Task(id="t", prompt="q", gym="qa", evaluate=("absent_final_test",), config={"evaluate_every_step": True})
    env = QAEnv(task=task)
    try:
        env.reset(seed=0)
        _, reward, terminated, _, info = env.step(TypeAction(text="a"))
        assert terminated and reward == -1.0 and info["status"] == "ok", info
    finally:
        env.close()


def test_a_broken_evaluator_is_still_an_eval_error() -> None:
    reward, info = answer(("broken_evaluator_test",))
    assert math.isnan(reward) and info["status"] == "eval_error" and not is_absent(info["grade"]), info  # type: ignore[arg-type]


def test_target_absent_pickles_whole() -> None:
    """An isolated evaluator's worker process sends it back."""
    copy = pickle.loads(pickle.dumps(TargetAbsent("gone", final=True)))
    assert isinstance(copy, TargetAbsent) and str(copy) == "gone" and copy.final
