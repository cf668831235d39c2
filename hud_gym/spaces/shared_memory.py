"""Correct text observations through ``AsyncVectorEnv(shared_memory=True)``.

Gymnasium reads an async vector env's shared observation buffer once, at construction: for a
``Box`` that is a live numpy view, but for ``Text`` it is a tuple of strings frozen at that moment,
so every later step returns the initial (empty) texts (Gymnasium #1164). For
:class:`~hud_gym.spaces.UnicodeText` we register a reader that returns a :class:`LiveTextBatch`
instead: a tuple whose items are decoded from the shared buffer each time they are read, and
whose copy (what ``AsyncVectorEnv`` returns by default, ``copy=True``) is a plain tuple of the
current strings. With ``copy=False`` read it by index or iteration; C-level fast paths such as
``"".join(batch)`` see the construction-time items.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
from gymnasium.vector.utils.shared_memory import read_from_shared_memory

from hud_gym.spaces.text import UnicodeText

__all__ = ["LiveTextBatch"]


@lru_cache(maxsize=1)
def _char_array(characters: tuple[str, ...]) -> np.ndarray:
    return np.array(characters, dtype="<U1")


class LiveTextBatch(tuple):
    """The strings of ``n`` envs, decoded from a shared int32 buffer at every read."""

    _space: UnicodeText
    _data: np.ndarray

    def __new__(cls, space: UnicodeText, shared_memory: Any, n: int) -> LiveTextBatch:
        batch = super().__new__(cls, ("",) * n)
        batch._space = space
        batch._data = np.frombuffer(shared_memory.get_obj(), dtype=np.int32).reshape((n, space.max_length))
        return batch

    def current(self) -> tuple[str, ...]:
        """The strings as they are in the buffer now."""
        chars = _char_array(self._space.character_list)
        limit = len(chars)
        return tuple(chars[row[row < limit]].tobytes().decode("utf-32-le") for row in self._data)

    def __getitem__(self, index: Any) -> Any:
        return self.current()[index]

    def __iter__(self) -> Any:
        return iter(self.current())

    def __len__(self) -> int:
        return len(self._data)

    def __eq__(self, other: object) -> bool:
        return self.current() == (tuple(other) if isinstance(other, (tuple, list)) else other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self.current())

    def __repr__(self) -> str:
        return repr(self.current())

    def __copy__(self) -> tuple[str, ...]:
        return self.current()

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return self.current()

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (self.current(),))


@read_from_shared_memory.register(UnicodeText)
def _read_unicode_text(space: UnicodeText, shared_memory: Any, n: int = 1) -> LiveTextBatch:
    return LiveTextBatch(space, shared_memory, n)
