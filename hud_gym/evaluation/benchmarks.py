"""Evaluators the converted benchmarks (:mod:`hud_gym.formats`) need, registered for every gym type.

- :func:`gaia_match`: GAIA's quasi-exact match (the rules of the GAIA leaderboard's scorer).
- :func:`ungraded`: for tasks that have no automatic grader (WebVoyager without reference
  answers, GAIA's private test answers): the response is recorded and the grade says, as an error
  grade, that nothing was graded. It never pretends a reward.
- :func:`webvoyager_answer`: WebVoyager's reference answers: ``golden`` ones are checked, the
  ``possible`` ones (one acceptable answer among many) are recorded ungraded.

Example:
    >>> gaia_score("1,000 $", "1000")
    (True, 'number')
    >>> gaia_score("red; Blue", "red, blue")
    (True, 'list')
"""

from __future__ import annotations

import re
import string
from typing import Literal

from hud_gym.evaluation.grade import Grade
from hud_gym.evaluation.registry import FunctionContext, evaluate_function

__all__ = ["gaia_match", "gaia_score", "normalize_gaia_number", "normalize_gaia_text", "ungraded", "webvoyager_answer"]

_SHOWN = 200


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def normalize_gaia_number(text: str) -> float:
    """``text`` as a number after removing ``$``, ``%`` and ``,``; ``inf`` when it is not one
    (so it equals no finite answer)."""
    for char in ("$", "%", ","):
        text = text.replace(char, "")
    try:
        return float(text)
    except ValueError:
        return float("inf")


def normalize_gaia_text(text: str, remove_punctuation: bool = True) -> str:
    """``text`` without any whitespace, lower-cased, and (optionally) without ASCII punctuation."""
    squeezed = re.sub(r"\s", "", text).lower()
    if remove_punctuation:
        return squeezed.translate(str.maketrans("", "", string.punctuation))
    return squeezed


def _split_list(text: str) -> list[str]:
    return re.split(r"[,;]", text)


def gaia_score(response: str, answer: str) -> tuple[bool, str]:
    """GAIA's quasi-exact match of ``response`` against the reference ``answer``.

    A numeric answer is compared as a number (``$``, ``%`` and ``,`` removed from the response);
    an answer containing ``,`` or ``;`` is a list compared element by element (same length; each
    element as a number or as text without whitespace, case-insensitively); any other answer is
    compared as text without whitespace and punctuation, case-insensitively.

    Returns:
        ``(matched, method)`` where method is ``"number"``, ``"list"`` or ``"string"``.
    """
    if _is_number(answer):
        return normalize_gaia_number(response) == float(answer), "number"
    if any(sep in answer for sep in (",", ";")):
        expected, got = _split_list(answer), _split_list(response)
        if len(expected) != len(got):
            return False, "list"
        for got_item, expected_item in zip(got, expected, strict=True):
            if _is_number(expected_item):
                same = normalize_gaia_number(got_item) == float(expected_item)
            else:
                same = normalize_gaia_text(got_item, False) == normalize_gaia_text(expected_item, False)
            if not same:
                return False, "list"
        return True, "list"
    return normalize_gaia_text(response) == normalize_gaia_text(answer), "string"


def _short(text: str) -> str:
    return text if len(text) <= _SHOWN else text[:_SHOWN] + f"... ({len(text)} chars)"


@evaluate_function(isolated=True)
def gaia_match(ctx: FunctionContext, answer: str | None = None) -> Grade:
    """Reward 1 when the response matches ``answer`` (default: the task's target) by GAIA's
    quasi-exact match (:func:`gaia_score`)."""
    if answer is None:
        target = ctx.task.target if ctx.task else None
        answer = target[0] if isinstance(target, list) and target else target if isinstance(target, str) else None
    if answer is None:
        return Grade.error("gaia_match needs an 'answer' argument or a task target")
    if ctx.final_response is None:
        return Grade(reward=0.0, done=False, content="no response")
    matched, method = gaia_score(ctx.final_response, answer)
    verdict = "matches" if matched else "does not match"
    return Grade(
        reward=float(matched),
        content=f"response {_short(ctx.final_response)!r} {verdict} {answer!r} ({method})",
        info={"method": method, "expected": answer},
    )


@evaluate_function(isolated=True)
def ungraded(ctx: FunctionContext, reason: str, reference: str | None = None) -> Grade:
    """Record the response without grading it: an error grade (``is_error``; the step reports
    ``status="eval_error"`` and ``reward=None``, so the run never counts as scored) whose content
    starts with ``ungraded:`` and gives ``reason``; ``info`` holds the response, the optional
    ``reference`` and ``status="ungraded"``. For tasks judged by a person or a model."""
    return Grade.error(f"ungraded: {reason}", status="ungraded", response=ctx.final_response, reference=reference)


def _fold_answer(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().strip(".").casefold()


@evaluate_function(isolated=True)
def webvoyager_answer(ctx: FunctionContext, answer: str, kind: Literal["golden", "possible"] = "golden") -> Grade:
    """Grade a WebVoyager response with its reference answer.

    ``golden`` (the one right answer): reward 1 when the response contains it (whitespace and
    case folded) — a string check standing in for WebVoyager's human/model judge, so
    ``info["method"]`` says so. ``possible`` (one acceptable answer among others): not gradable
    by a string check, so the grade is :func:`ungraded` with the reference attached.
    """
    if kind == "possible":
        return ungraded(
            ctx,
            "WebVoyager's reference is one possible answer among others; a person or a model judges it",
            reference=answer,
        )
    if ctx.final_response is None:
        return Grade(reward=0.0, done=False, content="no response")
    found = _fold_answer(answer) in _fold_answer(ctx.final_response)
    return Grade(
        reward=float(found),
        content=f"golden answer {answer!r} {'found' if found else 'not found'} in the response",
        info={
            "method": "golden answer contained in the response (WebVoyager itself uses a judge)",
            "reference": answer,
            "response": ctx.final_response,
        },
    )
