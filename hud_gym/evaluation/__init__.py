"""Grading: the :class:`Grade` result, the setup/evaluate function registry, and the response
evaluators every gym type shares."""

from hud_gym.evaluation.grade import Grade, combine_grades, to_grade
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
from hud_gym.evaluation import response as _response  # noqa: F401  (registers the shared evaluators)
from hud_gym.evaluation.response import default_evaluate
from hud_gym.evaluation.runner import SetupError, resolve_calls, run_evaluate, run_setup

__all__ = [
    "REGISTRY",
    "SHARED",
    "BoundCall",
    "FunctionArgumentError",
    "FunctionContext",
    "FunctionRegistry",
    "Grade",
    "Phase",
    "RegisteredFunction",
    "SetupError",
    "UnknownFunctionError",
    "combine_grades",
    "default_evaluate",
    "evaluate_function",
    "resolve_calls",
    "run_evaluate",
    "run_setup",
    "setup_function",
    "to_grade",
]
