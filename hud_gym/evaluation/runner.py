"""Running a task's setup and evaluate calls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hud_gym.evaluation.grade import Grade, combine_grades, to_grade
from hud_gym.evaluation.registry import REGISTRY, BoundCall, FunctionContext, FunctionRegistry, Phase
from hud_gym.evaluation.response import default_evaluate
from hud_gym.task import FunctionConfig

__all__ = ["SetupError", "resolve_calls", "run_evaluate", "run_setup"]


class SetupError(RuntimeError):
    """A setup call raised; the message names the call."""


def resolve_calls(phase: Phase, gym: str, configs: Sequence[FunctionConfig] | None,
                  registry: FunctionRegistry = REGISTRY) -> list[BoundCall]:
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
        except Exception as exc:  # noqa: BLE001  (any failure of task code is reported with its call)
            raise SetupError(f"setup {call.config} failed: {type(exc).__name__}: {exc}") from exc
    return results


async def run_evaluate(calls: Sequence[BoundCall], ctx: FunctionContext, combine: str = "mean") -> Grade:
    """Run evaluate calls and combine their grades (see :func:`combine_grades`).

    With no calls the response is graded against the task's target (:func:`default_evaluate`).
    A call that raises gives ``Grade(is_error=True)`` with the message; it never propagates.
    """
    if not calls:
        try:
            return default_evaluate(ctx)
        except Exception as exc:  # noqa: BLE001
            return Grade.error(f"default evaluation failed: {type(exc).__name__}: {exc}")
    grades = []
    for call in calls:
        try:
            grade = to_grade(await call.run(ctx))
        except Exception as exc:  # noqa: BLE001  (an evaluator that raises is a grading error)
            grade = Grade.error(f"evaluate {call.config} raised {type(exc).__name__}: {exc}")
        grades.append(grade)
    return combine_grades(grades, combine)  # type: ignore[arg-type]
