"""Shared fixtures."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import gymnasium
import pytest

import hud_gym  # noqa: F401  (registers the gym ids)


@pytest.fixture
def make_env() -> Iterator[Callable[..., Any]]:
    """``gymnasium.make`` that closes every env it made at the end of the test."""
    made: list[Any] = []

    def factory(env_id: str = "hud/QA-v0", **kwargs: Any) -> Any:
        env = gymnasium.make(env_id, **kwargs)
        made.append(env)
        return env

    yield factory
    for env in made:
        env.close()
