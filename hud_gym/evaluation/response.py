"""Evaluators of the agent's final response, shared by every gym type.

Each takes the :class:`~hud_gym.evaluation.registry.FunctionContext` (whose ``final_response`` is
the agent's answer) and returns a :class:`~hud_gym.evaluation.grade.Grade`. With no response yet,
every one gives reward 0 with ``content="no response"``. They are ``isolated``: they run in a
worker process that a timeout kills (:mod:`hud_gym.evaluation.calls`), and task patterns go
through :mod:`hud_gym.evaluation.patterns` (no catastrophic backtracking).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from rapidfuzz.distance import Levenshtein

from hud_gym.evaluation.grade import Grade
from hud_gym.evaluation.patterns import PatternError, compile_task_pattern
from hud_gym.evaluation.registry import FunctionContext, evaluate_function

__all__ = [
    "choice_match",
    "default_evaluate",
    "match_all",
    "match_diff",
    "match_fuzzy",
    "match_regex",
    "numeric_match",
    "response_includes",
    "response_is",
    "response_match",
]

_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+(?:[eE][-+]?\d+)?")


def _no_response() -> Grade:
    return Grade(reward=0.0, done=False, content="no response")


def _binary(ok: bool, content: str, **info: object) -> Grade:
    return Grade(reward=1.0 if ok else 0.0, content=content, info=dict(info))


def _fold(text: str, case_sensitive: bool) -> str:
    return text if case_sensitive else text.casefold()


def _contains(response: str, text: str, case_sensitive: bool, whole_word: bool) -> bool:
    if whole_word:
        flags = 0 if case_sensitive else re.IGNORECASE
        return re.search(rf"(?<!\w){re.escape(text.strip())}(?!\w)", response, flags) is not None
    return _fold(text, case_sensitive) in _fold(response, case_sensitive)


@evaluate_function(isolated=True)
def response_is(ctx: FunctionContext, expected: str, case_sensitive: bool = True, strip: bool = True) -> Grade:
    """Reward 1 when the response equals ``expected`` (exact; optionally case-insensitive)."""
    if ctx.final_response is None:
        return _no_response()
    got, want = ctx.final_response, expected
    if strip:
        got, want = got.strip(), want.strip()
    ok = _fold(got, case_sensitive) == _fold(want, case_sensitive)
    return _binary(ok, f"response {'is' if ok else 'is not'} {expected!r}")


@evaluate_function(isolated=True)
def response_includes(
    ctx: FunctionContext, texts: str | list[str], case_sensitive: bool = False, whole_word: bool = False
) -> Grade:
    """Reward 1 when the response contains ``texts`` (all of them, for a list)."""
    if ctx.final_response is None:
        return _no_response()
    wanted = [texts] if isinstance(texts, str) else list(texts)
    missing = [t for t in wanted if not _contains(ctx.final_response, t, case_sensitive, whole_word)]
    return _binary(not missing, "all found" if not missing else f"missing {missing!r}", missing=missing)


@evaluate_function(aliases=("response_matches",), isolated=True)
def response_match(ctx: FunctionContext, pattern: str) -> Grade:
    """Reward 1 when the regex ``pattern`` matches somewhere in the response (``re.search``);
    also named ``response_matches``, as in HUD's docs."""
    return match_regex(ctx, pattern)


@evaluate_function(isolated=True)
def match_regex(ctx: FunctionContext, pattern: str, full: bool = False, ignore_case: bool = False) -> Grade:
    """Reward 1 when ``pattern`` matches the response (``full``: the whole response, stripped).

    ``.`` matches newlines too. An invalid pattern, or one that runs out of time
    (:mod:`hud_gym.evaluation.patterns`), is a grading error, not a crash.
    """
    if ctx.final_response is None:
        return _no_response()
    try:
        regex = compile_task_pattern(pattern, ignore_case=ignore_case, dotall=True)
        found = regex.fullmatch(ctx.final_response.strip()) if full else regex.search(ctx.final_response)
    except PatternError as exc:
        return Grade.error(str(exc))
    return _binary(found is not None, f"pattern {pattern!r} {'matched' if found else 'did not match'}")


@evaluate_function(isolated=True)
def match_fuzzy(ctx: FunctionContext, answer: str, threshold: float | None = 0.8) -> Grade:
    """Normalised Levenshtein similarity between the response and ``answer`` (case-insensitive).

    With a ``threshold`` the reward is 1 when the similarity reaches it, else 0; with
    ``threshold=None`` the reward is the similarity itself.
    """
    if ctx.final_response is None:
        return _no_response()
    similarity = Levenshtein.normalized_similarity(ctx.final_response.strip().casefold(), answer.strip().casefold())
    reward = similarity if threshold is None else float(similarity >= threshold)
    return Grade(reward=reward, content=f"similarity {similarity:.3f}", info={"similarity": similarity})


@evaluate_function(isolated=True)
def match_all(ctx: FunctionContext, answers: list[str], case_sensitive: bool = False) -> Grade:
    """Reward = the fraction of ``answers`` found in the response (substring test)."""
    if ctx.final_response is None:
        return _no_response()
    if not answers:
        return Grade(reward=0.0, content="no answers to look for")
    found = [a for a in answers if _contains(ctx.final_response, a, case_sensitive, whole_word=False)]
    return Grade(
        reward=len(found) / len(answers),
        content=f"found {len(found)} of {len(answers)}",
        info={"found": found, "missing": [a for a in answers if a not in found]},
    )


def _parse_number(text: str) -> float | None:
    match = _NUMBER.search(text)
    return float(match.group(0).replace(",", "")) if match else None


def _as_number(text: str) -> float | None:
    """``text`` as a number when the whole text is one, else None."""
    try:
        return float(text.strip().replace(",", ""))
    except ValueError:
        return None


@evaluate_function(isolated=True)
def match_diff(ctx: FunctionContext, answer: str | float) -> Grade:
    """Graded closeness: for two numbers ``max(0, 1 - |a - b| / max(|a|, |b|))``, else the
    ``difflib`` sequence ratio of the two texts."""
    if ctx.final_response is None:
        return _no_response()
    expected = float(answer) if isinstance(answer, (int, float)) else _as_number(answer)
    got = _parse_number(ctx.final_response)
    if expected is not None and got is not None:
        scale = max(abs(expected), abs(got))
        reward = 1.0 if scale == 0 else max(0.0, 1.0 - min(1.0, abs(expected - got) / scale))
        return Grade(
            reward=reward,
            content=f"numeric difference {abs(expected - got):g}",
            info={"expected": expected, "got": got},
        )
    ratio = difflib.SequenceMatcher(None, ctx.final_response.strip(), str(answer).strip()).ratio()
    return Grade(reward=ratio, content=f"text similarity {ratio:.3f}", info={"ratio": ratio})


@evaluate_function(isolated=True)
def numeric_match(ctx: FunctionContext, expected: float, tolerance: float = 1e-6, relative: bool = False) -> Grade:
    """Reward 1 when the first number in the response is within ``tolerance`` of ``expected``
    (absolute, or relative to ``|expected|`` when ``relative``). Thousands separators are allowed."""
    if ctx.final_response is None:
        return _no_response()
    got = _parse_number(ctx.final_response)
    if got is None:
        return Grade(reward=0.0, content="no number in the response", info={"expected": expected})
    allowed = tolerance * abs(expected) if relative else tolerance
    ok = abs(got - expected) <= allowed
    return _binary(ok, f"got {got:g}, expected {expected:g} ± {allowed:g}", expected=expected, got=got)


def _choice_index(text: str, choices: Sequence[str]) -> int | None:
    """Which choice ``text`` names: a letter (A, b), a 1-based number, or the choice's text."""
    cleaned = text.strip().strip(".):").strip()
    for prefix in ("answer:", "answer is", "the answer is"):
        if cleaned.casefold().startswith(prefix):
            cleaned = cleaned[len(prefix) :].strip().strip(".):").strip()
    folded = cleaned.casefold()
    for i, choice in enumerate(choices):
        if folded == choice.strip().casefold():
            return i
    if len(cleaned) == 1 and cleaned.isalpha():
        index = ord(cleaned.upper()) - ord("A")
        return index if 0 <= index < len(choices) else None
    if cleaned.isdigit():
        index = int(cleaned) - 1
        return index if 0 <= index < len(choices) else None
    letter = re.match(r"^\(?([A-Za-z])[).:]\s", cleaned)
    if letter:
        index = ord(letter.group(1).upper()) - ord("A")
        return index if 0 <= index < len(choices) else None
    return None


@evaluate_function(isolated=True)
def choice_match(ctx: FunctionContext, answer: str | int | None = None) -> Grade:
    """Multiple choice: reward 1 when the response picks the right one of ``task.choices``.

    The right choice is ``answer`` (a letter, a 0-based index, or the choice's text), else
    ``task.target``. The response may be a letter, a 1-based number, or the choice's text.
    """
    choices = ctx.task.choices if ctx.task else None
    if not choices:
        return Grade.error("choice_match needs a task with 'choices'")
    if ctx.final_response is None:
        return _no_response()
    correct_spec = answer if answer is not None else (ctx.task.target if ctx.task else None)
    if isinstance(correct_spec, list):
        correct_spec = correct_spec[0] if correct_spec else None
    if correct_spec is None:
        return Grade.error("choice_match needs an 'answer' argument or a task target")
    if isinstance(correct_spec, int):
        correct = correct_spec if 0 <= correct_spec < len(choices) else None
    else:
        correct = next(
            (i for i, c in enumerate(choices) if c.strip().casefold() == correct_spec.strip().casefold()), None
        )
        if correct is None and len(correct_spec.strip()) == 1 and correct_spec.strip().isalpha():
            correct = ord(correct_spec.strip().upper()) - ord("A")
    if correct is None or not 0 <= correct < len(choices):
        return Grade.error(f"the correct choice {correct_spec!r} is not one of {choices!r}")
    picked = _choice_index(ctx.final_response, choices)
    ok = picked == correct
    picked_text = choices[picked] if picked is not None else None
    return _binary(ok, f"picked {picked_text!r}, correct is {choices[correct]!r}", picked=picked, correct=correct)


def default_evaluate(ctx: FunctionContext) -> Grade:
    """The grade of a task with no ``evaluate``: the response against ``task.target``.

    With ``choices``: :func:`choice_match`; a list target: :func:`match_all`; a number (``"100"``):
    :func:`numeric_match`, the response's first number (so listing every number does not hit it);
    another string target: :func:`response_includes` as a whole word or phrase (so "4" does not
    match "14").
    """
    task = ctx.task
    if task is None:
        return Grade(reward=0.0, content="no task")
    if task.choices:
        return choice_match(ctx)
    if isinstance(task.target, list):
        return match_all(ctx, task.target)
    if isinstance(task.target, str):
        number = _as_number(task.target)
        if number is not None:
            return numeric_match(ctx, number)
        return response_includes(ctx, task.target, whole_word=True)
    return Grade.error("the task has neither 'evaluate' nor 'target'")
