"""The reward-hacking harness: scripted adversarial agents that try to score without solving.

(Imported as ``hacking_harness``: pytest puts this folder on ``sys.path`` for its test modules.)

An RL environment exists to give rewards a policy cannot game. Each :class:`Attack` is a scripted
agent that acts only through ``env.step`` with CLA actions (leave the task's page, reload it, open
it again in a new tab, solve an easier task's page, click everywhere, close the windows, kill the
app, write garbage into the checked file, answer every option ...) and then answers.
:func:`check_family` plays every attack on every task of a sample of a task family, reusing one
env, and asserts that each episode is graded as the task's failure: every step ``ok`` (never
``eval_error`` or ``env_error``: leaving must not turn a failing grade into no grade), a reward
that is one of the family's failure values, never a success.

**Every task family must pass it.** A new family is one line in a test module of this folder::

    def test_my_family(my_env) -> None:
        check_family(my_env, load_taskset("my-family").tasks[:4], BROWSER_ATTACKS)

with the attacks of its gym (:mod:`hacking_browser`, :mod:`hacking_desktop`, :mod:`hacking_qa`)
and its own where it has a way to cheat of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium

from hud_gym import ResponseAction, Task

__all__ = ["Attack", "Episode", "Verdict", "always", "check_family", "play"]


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
        self.observation, self.reward, terminated, truncated, info = self.env.step(action)
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
    play: Callable[[Episode], None]
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
        task_id=task.id,
        attack=attack.name,
        statuses=tuple(episode.statuses),
        reward=episode.reward,
        grade=str(getattr(grade, "content", None))[:300],
        errors=tuple(episode.errors),
    )


def check_family(
    env: gymnasium.Env,
    tasks: Sequence[Task],
    attacks: Sequence[Attack],
    failure_values: Sequence[float] = (0.0,),
    seed: int = 0,
) -> list[Verdict]:
    """Play every attack that applies on every task of ``tasks`` (one env, reset between
    episodes) and assert that each is graded as the task's failure (see :meth:`Verdict.problem`);
    the message lists every attack that scored or escaped its grade. Returns the verdicts."""
    verdicts = [play(env, task, attack, seed) for task in tasks for attack in attacks if attack.applies(task)]
    assert verdicts, "no attack applies to these tasks"
    problems = [
        f"{v.task_id} / {v.attack}: {problem}" for v in verdicts if (problem := v.problem(failure_values)) is not None
    ]
    assert not problems, "attacks that were not graded as the task's failure:\n" + "\n".join(problems)
    return verdicts
