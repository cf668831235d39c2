"""What the desktop families share: a seeded random source, the task they build, and the scripted
oracle that plays a fixed list of CLA actions (typing and keys only).

Example:
    >>> oracle = ScriptOracle([WaitAction(time=0)])
    >>> oracle.act({}, {}).type, oracle.act({}, {})
    ('wait', None)
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any

from hud_gym.actions import CLAAction, TypeAction, WaitAction
from hud_gym.task import Task, expand_config

__all__ = ["ScriptOracle", "family_random", "family_task", "shell_script"]

COMMAND_PAUSE_MS = 400
"""Milliseconds the shell oracle waits after each command line."""
FINAL_PAUSE_MS = 1500
"""Milliseconds it waits after the last one (the commands' writes done before grading)."""


def family_random(family: str, seed: int, difficulty: int) -> random.Random:
    """The family's random source for ``seed`` and ``difficulty`` (the same on every machine:
    a string seed is hashed with SHA-512, not with the process's hash salt)."""
    return random.Random(f"{family}:{seed}:{difficulty}")


class ScriptOracle:
    """An oracle that plays ``actions`` in order, one per :meth:`act`, then ``None`` (finished)."""

    def __init__(self, actions: Iterable[CLAAction]) -> None:
        self.actions: list[CLAAction] = list(actions)
        self._next = 0

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> CLAAction | None:
        """The next scripted action (``None``: done)."""
        if self._next >= len(self.actions):
            return None
        action = self.actions[self._next]
        self._next += 1
        return action


def shell_script(commands: Sequence[str]) -> ScriptOracle:
    """An oracle typing ``commands`` into the focused terminal (the task's xterm), one line each,
    from the home folder."""
    actions: list[CLAAction] = [TypeAction(text="cd ~", enter_after=True)]
    for command in commands:
        actions += [TypeAction(text=command, enter_after=True), WaitAction(time=COMMAND_PAUSE_MS)]
    actions.append(WaitAction(time=FINAL_PAUSE_MS))
    return ScriptOracle(actions)


def family_task(
    *,
    suite: str,
    family: str,
    seed: int,
    difficulty: int,
    prompt: str,
    setup: Sequence[Any],
    evaluate: Sequence[Any],
    config: dict[str, Any] | None = None,
) -> Task:
    """The task of a desktop family: graded by the minimum of its evaluate calls (every check
    must pass), with the metadata the family interface requires (the oracle rebuilds the
    family's parameters from its seed and difficulty)."""
    return Task(
        id=f"{family}-{seed}-d{difficulty}",
        prompt=prompt,
        gym="hud-ubuntu",
        setup=expand_config(list(setup)),
        evaluate=expand_config(list(evaluate)),
        metadata={
            "benchmark": suite,
            "family": family,
            "seed": seed,
            "difficulty": difficulty,
        },
        config={"evaluate_combine": "min", **(config or {})},
    )
