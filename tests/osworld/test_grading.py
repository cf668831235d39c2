"""``osworld_evaluate`` combines metrics as OSWorld's ``DesktopEnv.evaluate``: ``and`` stops at the
first 0 and otherwise averages, ``or`` stops at the first 1 and otherwise takes the max;
``infeasible`` is graded by the agent's ``FAIL``, which scores 0 on any other task; a metric that
does not run here is an evaluator error naming it. The ``rule`` getter needs no desktop (the
desktop's getters are driven by ``test_real_tasks.py``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from hud_gym.evaluation.registry import FunctionContext
from hud_gym.suites.osworld.grading import osworld_evaluate


def _rule(value: Any) -> dict[str, Any]:
    return {"type": "rule", "rules": value}


def _grade(evaluator: dict[str, Any], response: str | None = None) -> Any:
    return asyncio.run(osworld_evaluate(FunctionContext(gym="ubuntu", final_response=response), evaluator))


MATCH = ("exact_match", _rule("a"), _rule({"expected": "a"}))
MISS = ("exact_match", _rule("a"), _rule({"expected": "b"}))


def _evaluator(conj: str, *metrics: tuple[str, Any, Any]) -> dict[str, Any]:
    return {
        "func": [m[0] for m in metrics],
        "result": [m[1] for m in metrics],
        "expected": [m[2] for m in metrics],
        "conj": conj,
    }


def test_and_stops_at_the_first_zero_or_stops_at_the_first_one() -> None:
    assert _grade(_evaluator("and", MATCH, MATCH)).reward == 1.0
    missed = _grade(_evaluator("and", MATCH, MISS, ("no_such_metric", _rule(1), _rule(1))))
    assert missed.reward == 0.0 and not missed.is_error  # stopped before the unknown metric
    assert _grade(_evaluator("or", MISS, MATCH, ("no_such_metric", _rule(1), _rule(1)))).reward == 1.0
    assert _grade(_evaluator("or", MISS, MISS)).reward == 0.0


def test_and_averages_partial_scores(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n")
    (tmp_path / "b.txt").write_text("one\ntwo\nfour\n")
    diff = ("diff_text_file", _rule(str(tmp_path / "a.txt")), _rule(str(tmp_path / "b.txt")))
    grade = _grade(_evaluator("and", MATCH, diff))
    assert grade.reward == pytest.approx((1.0 + 2 / 3) / 2)  # OSWorld's mean, not the minimum
    assert _grade(_evaluator("or", MISS, diff)).reward == pytest.approx(2 / 3)  # the max


def test_infeasible_is_graded_by_the_agents_fail() -> None:
    infeasible = {"func": "infeasible"}
    assert _grade(infeasible, "FAIL").reward == 1.0
    assert _grade(infeasible, " fail \n").reward == 1.0
    assert _grade(infeasible, "I could not do it").reward == 0.0
    assert _grade(infeasible, None).reward == 0.0
    feasible = _evaluator("and", MATCH)
    assert _grade(feasible, "FAIL").reward == 0.0  # a feasible task given up on
    assert _grade(feasible, "done").reward == 1.0


def test_a_metric_that_does_not_run_here_is_an_evaluator_error() -> None:
    grade = _grade({"func": "check_page_number_colors", "result": _rule(1), "expected": _rule(1)})
    assert grade.is_error and "check_page_number_colors" in grade.content


def test_a_metric_that_raises_on_the_agents_data_scores_zero() -> None:
    grade = _grade(
        {
            "func": "check_direct_json_object",
            "result": _rule("{not json"),
            "expected": _rule({"expected": {"a": 1}}),
        }
    )
    assert grade.reward == 0.0 and not grade.is_error and "JSONDecodeError" in grade.content
