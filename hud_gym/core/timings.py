"""Per-call durations reported in ``info["timings"]``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

__all__ = ["Timings"]


class Timings(Mapping[str, float]):
    """Seconds spent in each phase of a ``reset`` or ``step`` (``setup``, ``action``, ``observe``,
    ``evaluate``, ``total``).

    A read-only mapping. Two ``Timings`` compare equal when they measured the same phases: the
    durations are wall-clock measurements, not environment state, so they must not make two
    otherwise identical steps differ (Gymnasium's determinism checks compare ``info`` dicts).
    Compare ``dict(a) == dict(b)`` for the values.
    """

    __slots__ = ("_values",)

    def __init__(self, values: Mapping[str, float]) -> None:
        self._values = dict(values)

    def __getitem__(self, key: str) -> float:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Timings):
            return self._values.keys() == other._values.keys()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(frozenset(self._values))

    def __repr__(self) -> str:
        return "Timings(" + ", ".join(f"{k}={v * 1000:.2f}ms" for k, v in self._values.items()) + ")"
