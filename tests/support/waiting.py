"""Bounded waits for a condition a test cannot step towards (a background guard, a process exit)."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(predicate: Callable[[], object], timeout: float, what: str, every: float = 0.1) -> None:
    """Return once ``predicate()`` is true; fail the test naming ``what`` after ``timeout`` seconds.

    The predicate is evaluated afresh each time: a condition over live processes re-reads them.
    """
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        time.sleep(every)
