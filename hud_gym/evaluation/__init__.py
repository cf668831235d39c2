"""Grading: the :class:`Grade` result and its reward checks, the setup/evaluate function registry,
where those functions run (:mod:`~hud_gym.evaluation.calls`: never blocking the event loop), task
regexes that cannot hang (:mod:`~hud_gym.evaluation.patterns`), the "target absent" outcome graded
as the task's failure (:mod:`~hud_gym.evaluation.absent`), and the response evaluators every
gym type shares (:mod:`~hud_gym.evaluation.response`, and the converted benchmarks'
:mod:`~hud_gym.evaluation.benchmarks`)."""

from hud_gym.evaluation import benchmarks as _benchmarks  # noqa: F401  (registers the benchmarks' evaluators)
from hud_gym.evaluation import response as _response  # noqa: F401  (registers the shared evaluators)
from hud_gym.evaluation.absent import TARGET_ABSENT, TargetAbsent, absent_grade, is_absent
from hud_gym.evaluation.grade import DEFAULT_REWARD_RANGE, Grade, RewardRange, check_reward, combine_grades, to_grade
from hud_gym.evaluation.registry import (
    REGISTRY,
    SHARED,
    BoundCall,
    FunctionArgumentError,
    FunctionContext,
    FunctionRegistry,
    Phase,
    RegisteredFunction,
    UnknownFunctionError,
    evaluate_function,
    setup_function,
)
from hud_gym.evaluation.response import default_evaluate
from hud_gym.evaluation.runner import SetupError, resolve_calls, run_evaluate, run_setup

__all__ = [
    "DEFAULT_REWARD_RANGE",
    "TARGET_ABSENT",
    "REGISTRY",
    "SHARED",
    "BoundCall",
    "FunctionArgumentError",
    "FunctionContext",
    "FunctionRegistry",
    "Grade",
    "Phase",
    "RegisteredFunction",
    "RewardRange",
    "SetupError",
    "TargetAbsent",
    "UnknownFunctionError",
    "absent_grade",
    "check_reward",
    "combine_grades",
    "default_evaluate",
    "evaluate_function",
    "is_absent",
    "resolve_calls",
    "run_evaluate",
    "run_setup",
    "setup_function",
    "to_grade",
]
