"""Fixtures of the task-family tests: one live ``hud/Ubuntu-v0`` env per module (named ``desktop``,
so tests/tiers.py marks its tests ``e2e``), and ``play``: an episode of a family's task played by
its oracle (or by nobody), answered at the end, with its reward and grade.

The desktop tests are skipped, with the reason, on a machine without Xvfb or openbox.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import gymnasium
import pytest

import hud_gym  # noqa: F401  (registers the ids and the families)
from hud_gym import ResponseAction, Task
from hud_gym.controllers.ubuntu.display import DesktopNotAvailableError, require_programs
from hud_gym.core.family import make_oracle

MAX_ORACLE_STEPS = 600
"""Most actions an oracle may play (its polling waits included)."""


@dataclass
class Played:
    """An episode's outcome."""

    reward: float | None
    statuses: list[str]
    steps: int
    grade: str


@pytest.fixture(scope="module")
def desktop() -> Iterator[gymnasium.Env]:
    """One live desktop env for the module (its tasks' setups run on the host, no shell)."""
    try:
        require_programs("openbox")
    except DesktopNotAvailableError as exc:
        pytest.skip(str(exc))
    env = gymnasium.make("hud/Ubuntu-v0", in_container=False, max_steps=MAX_ORACLE_STEPS + 10, step_timeout=120)
    yield env
    env.close()


def _play(env: gymnasium.Env, task: Task, oracle: bool = True) -> Played:
    observation, info = env.reset(options={"task": task})
    statuses, steps = [], 0
    solver: Any = make_oracle(task) if oracle else None
    while solver is not None and steps < MAX_ORACLE_STEPS:
        action = solver.act(observation, info)
        if action is None:
            break
        observation, _, terminated, truncated, info = env.step(action)
        statuses.append(str(info["status"]))
        steps += 1
        assert not (terminated or truncated), f"the episode ended early: {info.get('error')}"
    _, reward, _, _, info = env.step(ResponseAction(text="done"))
    statuses.append(str(info["status"]))
    return Played(reward, statuses, steps, str(getattr(info.get("grade"), "content", info.get("error")))[:500])


@pytest.fixture
def play() -> Callable[..., Played]:
    """``play(env, task, oracle=True)``: one episode of ``task``, by its oracle or doing nothing."""
    return _play
