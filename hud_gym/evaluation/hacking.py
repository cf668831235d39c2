"""The reward-hacking harness: scripted adversarial agents that try to score without solving.

An RL environment exists to give rewards a policy cannot game. Each :class:`Attack` is a scripted
agent that acts only through ``env.step`` with CLA actions (leave the task's page, reload it, open
it again in a new tab, click everywhere, close the windows, write garbage ...) and then answers.
:func:`play` plays one on one task and returns its :class:`Verdict`, whose :meth:`Verdict.problem`
says what is wrong when the episode was not graded as the task's failure (every step ``ok`` or
``action_error``, a reward that is one of the failure values). ``hud-gym tasksets check`` plays
a family's attacks (:attr:`hud_gym.core.family.Family.attacks`); ``tests/hacking/`` plays them on
every task set.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium

from hud_gym.actions import ResponseAction
from hud_gym.rewards import graded_reward
from hud_gym.task import Task

__all__ = ["Attack", "Episode", "Verdict", "always", "play"]


def always(task: Task) -> bool:
    """An attack that applies to every task."""
    return True


@dataclass
class Episode:
    """One episode under attack: :meth:`step` plays CLA actions until the episode is over."""

    env: gymnasium.Env
    task: Task
    observation: Any
    info: dict[str, Any]
    reward: float | None = 0.0
    over: bool = False
    statuses: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def prompt(self) -> str:
        return str(self.info.get("prompt") or self.task.prompt or "")

    def step(self, action: Any) -> dict[str, Any]:
        """Play ``action`` (a CLA action or a list) unless the episode is over; the step's info."""
        if self.over:
            return self.info
        self.observation, reward, terminated, truncated, info = self.env.step(action)
        self.reward = graded_reward(reward)
        self.info = info
        self.statuses.append(str(info["status"]))
        if info.get("error"):
            self.errors.append(str(info["error"]).splitlines()[0][:300])
        self.over = bool(terminated or truncated)
        return info


@dataclass(frozen=True)
class Attack:
    """A scripted cheat: ``play`` steps the episode, then the episode is ended with ``answer``."""

    name: str
    play: Callable[[Episode], object]
    answer: Callable[[Episode], str] = lambda episode: "done"
    applies: Callable[[Task], bool] = always


@dataclass(frozen=True)
class Verdict:
    """How an attack on a task was graded."""

    task_id: str
    attack: str
    statuses: tuple[str, ...]
    reward: float | None
    grade: str
    errors: tuple[str, ...]

    def problem(self, failure_values: Sequence[float]) -> str | None:
        """What is wrong with this grade (``None``: the task's failure, as it should be)."""
        bad = [s for s in self.statuses if s not in ("ok", "action_error")]
        if bad:
            return f"status {bad} ({'; '.join(self.errors) or self.grade})"
        if self.reward is None or all(abs(self.reward - v) > 1e-9 for v in failure_values):
            return f"reward {self.reward!r}, not a failure value {list(failure_values)} ({self.grade})"
        return None


def play(env: gymnasium.Env, task: Task, attack: Attack, seed: int = 0) -> Verdict:
    """One episode of ``task`` under ``attack``, answered at the end when still running."""
    observation, info = env.reset(seed=seed, options={"task": task})
    episode = Episode(env, task, observation, info)
    attack.play(episode)
    episode.step(ResponseAction(text=attack.answer(episode)))
    grade = episode.info.get("grade")
    return Verdict(
        task_id=str(task.id),
        attack=attack.name,
        statuses=tuple(episode.statuses),
        reward=episode.reward,
        grade=str(getattr(grade, "content", None))[:300],
        errors=tuple(episode.errors),
    )
