"""Running a task's setup and evaluate calls."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from hud_gym.errors import HudGymError
from hud_gym.evaluation.absent import TargetAbsent, absent_grade
from hud_gym.evaluation.calls import call_function
from hud_gym.evaluation.grade import (
    DEFAULT_REWARD_RANGE,
    Grade,
    RewardRange,
    check_reward,
    combine_grades,
    reward_range_of,
    to_grade,
)
from hud_gym.evaluation.registry import REGISTRY, BoundCall, FunctionContext, FunctionRegistry, Phase
from hud_gym.evaluation.response import default_evaluate
from hud_gym.task import FunctionConfig, Task

__all__ = ["SetupError", "resolve_calls", "run_evaluate", "run_setup"]


class SetupError(HudGymError, RuntimeError):
    """A setup call raised; the message names the call."""


def resolve_calls(
    phase: Phase, gym: str, configs: Sequence[FunctionConfig] | None, registry: FunctionRegistry = REGISTRY
) -> list[BoundCall]:
    """Resolve and check every call of ``configs`` before any of them runs."""
    return [registry.resolve(phase, gym, config) for config in configs or ()]


async def run_setup(calls: Sequence[BoundCall], ctx: FunctionContext) -> list[Any]:
    """Run setup calls in order and return their results.

    Raises:
        SetupError: a call raised; the message names the call and the error.
    """
    results = []
    for call in calls:
        try:
            results.append(await call.run(ctx))
        except Exception as exc:
            raise SetupError(f"setup {call.config} failed: {type(exc).__name__}: {exc}") from exc
    return results


def task_reward_range(task: Task | None) -> RewardRange | None:
    """The task's ``config["reward_range"]`` (``None`` when it sets none).

    Raises:
        ValueError: a ``reward_range`` that is not ``[low, high]``.
    """
    value = (task.config or {}).get("reward_range") if task is not None else None
    return None if value is None else reward_range_of(value, f"task {task.id!r} config reward_range" if task else "")


async def run_evaluate(calls: Sequence[BoundCall], ctx: FunctionContext, combine: str = "mean") -> Grade:
    """Run evaluate calls and combine their grades (see :func:`combine_grades`).

    With no calls the response is graded against the task's target (:func:`default_evaluate`).
    A call that raises :class:`~hud_gym.evaluation.absent.TargetAbsent` (what it checks is gone)
    gets the failure grade of its range (:func:`~hud_gym.evaluation.absent.absent_grade`).
    Never raises: a call that raises anything else, returns something that is not a grade, or gives a reward
    that is not a finite number inside its range (the task's ``config["reward_range"]``, else the
    function's declared one, else ``[0, 1]``) gives ``Grade(is_error=True)`` with the message.
    """
    try:
        override = task_reward_range(ctx.task)
    except ValueError as exc:
        return Grade.error(str(exc))
    if not calls:
        reward_range = override or DEFAULT_REWARD_RANGE
        try:
            grade = to_grade(await call_function(default_evaluate, ctx, isolated=True))
        except TargetAbsent as exc:
            return absent_grade(exc, reward_range)
        except Exception as exc:  # noqa: BLE001
            return Grade.error(f"default evaluation failed: {type(exc).__name__}: {exc}")
        return check_reward(grade, reward_range, "the default evaluation")
    grades = []
    for call in calls:
        reward_range = override or call.function.reward_range or DEFAULT_REWARD_RANGE
        try:
            grade = to_grade(await call.run(ctx))
        except TargetAbsent as exc:  # what it checks is gone: the task's failure, not an error
            grade = absent_grade(exc, reward_range)
        except Exception as exc:  # noqa: BLE001  (an evaluator that raises is a grading error)
            grade = Grade.error(f"evaluate {call.config} raised {type(exc).__name__}: {exc}")
        grades.append(check_reward(grade, reward_range, f"evaluate {call.config}"))
    try:
        combined = combine_grades(grades, combine)  # type: ignore[arg-type]
    except ValueError as exc:
        return Grade.error(str(exc))
    return check_reward(combined, (-math.inf, math.inf), f"combining the grades with {combine!r}")
