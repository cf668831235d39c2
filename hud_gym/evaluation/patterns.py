"""Regular expressions that come from a task file: compiled and matched so that none can hang.

A task's pattern is untrusted input: Python's ``re`` backtracks without limit, so a pattern such
as ``(a|aa)+$`` on a 40-character answer runs for longer than the universe has existed, on the
thread of whatever called it. Every setup/evaluate function that compiles a pattern from a task
(``match_regex``, ``response_match``, ``file_matches``, ``window_exists``, the browser's
``text_matches``, a desktop ``wait_for_window`` title) goes through :func:`compile_task_pattern`,
which uses the `regex <https://pypi.org/project/regex/>`_ module: the syntax of ``re`` (its
``VERSION0`` mode: lookarounds and backreferences included), with the worst cases that ``re``
blows up on handled quickly, and a ``timeout`` on every match for the rest.

Errors: an invalid pattern raises :class:`PatternError`; a match that runs out of time raises
:class:`PatternTimeout` (a :class:`PatternError`). Evaluators turn both into an error grade, so
the step reports ``status="eval_error"`` with no reward.

Example:
    >>> pattern = compile_task_pattern(r"^(a+)+$")
    >>> pattern.search("a" * 29 + "!") is None
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import regex

from hud_gym.errors import HudGymError

__all__ = ["MATCH_TIMEOUT_S", "PatternError", "PatternTimeout", "TaskPattern", "compile_task_pattern"]

MATCH_TIMEOUT_S = 1.0
"""Seconds one search or match of a task pattern may take before it fails with :class:`PatternTimeout`."""


class PatternError(HudGymError, ValueError):
    """A task's regular expression is invalid, or matching it failed."""


class PatternTimeout(PatternError):
    """Matching a task's regular expression took longer than its timeout."""


@dataclass(frozen=True)
class TaskPattern:
    """A compiled task pattern whose every match is bounded in time (see the module docstring)."""

    source: str
    compiled: Any
    timeout_s: float = MATCH_TIMEOUT_S

    def search(self, text: str) -> Any:
        """The first match anywhere in ``text`` (as ``re.search``), or ``None``.

        Raises:
            PatternTimeout: the search took longer than ``timeout_s``.
        """
        return self._run(self.compiled.search, text)

    def fullmatch(self, text: str) -> Any:
        """The match of the whole of ``text`` (as ``re.fullmatch``), or ``None``.

        Raises:
            PatternTimeout: the match took longer than ``timeout_s``.
        """
        return self._run(self.compiled.fullmatch, text)

    def _run(self, method: Any, text: str) -> Any:
        try:
            return method(text, concurrent=True, timeout=self.timeout_s)
        except TimeoutError:
            raise PatternTimeout(
                f"the pattern {self.source!r} did not finish matching {len(text)} characters "
                f"within {self.timeout_s:g} s"
            ) from None


def compile_task_pattern(
    pattern: str,
    *,
    ignore_case: bool = False,
    dotall: bool = False,
    multiline: bool = False,
    timeout_s: float = MATCH_TIMEOUT_S,
) -> TaskPattern:
    """Compile a task's ``pattern`` with the ``re`` flags named (``IGNORECASE``, ``DOTALL``,
    ``MULTILINE``).

    Raises:
        PatternError: the pattern is not a string or is not a valid regular expression.
    """
    if not isinstance(pattern, str):
        raise PatternError(f"a regex pattern must be a string, got {type(pattern).__name__}")
    flags = regex.VERSION0
    flags |= regex.IGNORECASE if ignore_case else 0
    flags |= regex.DOTALL if dotall else 0
    flags |= regex.MULTILINE if multiline else 0
    try:
        compiled = regex.compile(pattern, flags)
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        raise PatternError(f"invalid regex pattern {pattern!r}: {exc}") from None
    return TaskPattern(pattern, compiled, timeout_s)
