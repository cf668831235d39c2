"""Task-file regexes (hud_gym.evaluation.patterns): re's syntax, and no pattern can hang."""

from __future__ import annotations

import pytest

from hud_gym.evaluation.patterns import PatternError, PatternTimeout, compile_task_pattern

pytestmark = pytest.mark.timeout(30)  # Python's re needs minutes for the patterns below


def test_the_syntax_and_flags_of_re() -> None:
    assert compile_task_pattern(r"(?<=\$)\d+(?!\d)").search("cost: $42.").group(0) == "42"
    assert compile_task_pattern(r"(\w)\1").search("hello").group(0) == "ll"  # backreference
    assert compile_task_pattern(r"^b$", multiline=True).search("a\nb\nc") is not None
    assert compile_task_pattern(r"^b$").search("a\nb\nc") is None
    assert compile_task_pattern("A.B", ignore_case=True, dotall=True).fullmatch("a\nb") is not None
    assert compile_task_pattern("a.b").fullmatch("a\nb") is None


def test_an_invalid_pattern_is_a_pattern_error() -> None:
    for pattern in ("(unclosed", "*", "a{2,1}"):
        with pytest.raises(PatternError, match="invalid regex pattern"):
            compile_task_pattern(pattern)
    with pytest.raises(PatternError, match="must be a string"):
        compile_task_pattern(5)  # type: ignore[arg-type]


def test_nested_quantifiers_do_not_backtrack() -> None:
    assert compile_task_pattern(r"^(a+)+$").search("a" * 29 + "!") is None
    assert compile_task_pattern(r"^(\w+\s?)*$").search("a" * 30 + "!") is None


def test_exponential_backtracking_times_out() -> None:
    pattern = compile_task_pattern(r"(a|aa)+$", timeout_s=0.2)
    with pytest.raises(PatternTimeout, match=r"did not finish matching 41 characters within 0.2 s"):
        pattern.search("a" * 40 + "!")
    with pytest.raises(PatternTimeout):
        pattern.fullmatch("a" * 40 + "!")
    assert pattern.search("aaaa") is not None  # the same pattern on a short text is fine
