"""The text space of hud-gym's observations and actions: printable BMP characters, the empty
string admitted, one shared copy of the charset's lookup tables.

Example:
    >>> sanitize_text("caf\u00e9 \U0001f600", 10)
    'caf\xe9 \ufffd'
"""

from __future__ import annotations

import sys
from copy import deepcopy
from functools import lru_cache
from typing import Any

import numpy as np
from gymnasium import spaces

__all__ = ["REPLACEMENT_CHAR", "TEXT_CHARSET", "UnicodeText", "sanitize_text", "text_space"]

REPLACEMENT_CHAR = "\ufffd"


@lru_cache(maxsize=1)
def _charset() -> frozenset[str]:
    chars = {chr(cp) for cp in range(sys.maxunicode if sys.maxunicode < 0xFFFF else 0xFFFF) if chr(cp).isprintable()}
    chars.update("\n\t")
    chars.discard("")
    return frozenset(chars)


TEXT_CHARSET: frozenset[str] = _charset()
"""Every printable character of the Basic Multilingual Plane, plus newline and tab (about 55k
characters). Anything else (emoji, control characters, surrogates) is replaced by U+FFFD."""


def sanitize_text(text: str, max_length: int) -> str:
    """Return ``text`` made to fit a :func:`text_space` of ``max_length``.

    ``\\r\\n`` and lone ``\\r`` become ``\\n``, characters outside :data:`TEXT_CHARSET` become U+FFFD,
    and the result is cut to ``max_length`` characters.
    """
    # Each character kept comes from at most two (``\r\n``): only that much is looked at, so a
    # huge prompt costs no more than a short one.
    text = text[: 2 * max_length + 1].replace("\r\n", "\n").replace("\r", "\n")[:max_length]
    if not all(c in TEXT_CHARSET for c in text):
        text = "".join(c if c in TEXT_CHARSET else REPLACEMENT_CHAR for c in text)
    return text[:max_length]


@lru_cache(maxsize=1)
def _charset_tables() -> tuple[frozenset[str], tuple[str, ...], dict[str, np.int32], str]:
    """Gymnasium ``Text``'s lookup tables for :data:`TEXT_CHARSET`, built once per process."""
    template = spaces.Text(max_length=1, min_length=0, charset=TEXT_CHARSET)
    return template._char_set, template._char_list, template._char_index, template._char_str


class UnicodeText(spaces.Text):
    """Gymnasium's ``Text`` over :data:`TEXT_CHARSET`, admitting the empty string.

    Behaves exactly as ``spaces.Text(max_length, min_length=0, charset=TEXT_CHARSET)`` (Gymnasium
    dispatches on ``Text`` for it), but every instance shares one copy of the charset's lookup
    tables: ``Text`` builds a 55k-entry index per instance, which made an env take ~0.1 s to
    construct and a vector env's ``batch_space`` (a deep copy per sub-env) far more.
    """

    def __init__(self, max_length: int, *, min_length: int = 0, seed: int | np.random.Generator | None = None) -> None:
        if min_length < 0 or min_length > max_length:
            raise ValueError(f"need 0 <= min_length <= max_length, got {min_length} and {max_length}")
        self.min_length = int(min_length)
        self.max_length = int(max_length)
        self._char_set, self._char_list, self._char_index, self._char_str = _charset_tables()
        spaces.Space.__init__(self, dtype=str, seed=seed)

    def __deepcopy__(self, memo: dict[int, Any]) -> UnicodeText:
        copied = UnicodeText(self.max_length, min_length=self.min_length)
        copied._np_random = deepcopy(self._np_random, memo)
        return copied

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for table in ("_char_set", "_char_list", "_char_index", "_char_str"):
            state.pop(table, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:  # type: ignore[override]  # our own __getstate__'s dict
        self.__dict__.update(state)
        self._char_set, self._char_list, self._char_index, self._char_str = _charset_tables()

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length}, charset=<{len(self._char_set)} printable BMP chars>)"


def text_space(max_length: int) -> UnicodeText:
    """A ``Text`` space that admits the empty string and any :data:`TEXT_CHARSET` character."""
    return UnicodeText(max_length)
