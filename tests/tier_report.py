"""A pytest plugin for tests/test_tiers.py (``-p tier_report``): after collection, one line per
collected test with the names of its markers, so one ``--collect-only`` run answers every ``-m``
expression (evaluated as ``-m`` does, with pytest's own :class:`Expression`)."""

from __future__ import annotations

import pytest


def pytest_collection_finish(session: pytest.Session) -> None:
    for item in session.items:
        print("TIERS", item.nodeid, " ".join(sorted({mark.name for mark in item.iter_markers()})))
