"""The proof of a task family: its oracle solves every variant, doing nothing and random actions do
not, and its reward-hacking scripts score nothing (``hud-gym tasksets check``).

:func:`check_family` plays, on one env of the family's gym (made with the family's
``env_options``), ``seeds`` tasks of the family (train seeds ``0 .. seeds - 1``, the difficulty
levels in turn):

- the family's oracle (:func:`~hud_gym.core.family.make_oracle`), until it says it is done (then it
  answers ``"done"``) or the episode ends: the success rate, and the mean steps per difficulty;
- a do-nothing agent (it answers ``"done"`` at once);
- :class:`~hud_gym.agents.RandomAgent` for :data:`RANDOM_STEPS` steps, then ``"done"``;
- the family's attacks (:attr:`~hud_gym.core.family.Family.attacks`) on the first
  :data:`ATTACK_TASKS` tasks (:func:`~hud_gym.evaluation.hacking.play`).

A family passes (:attr:`FamilyReport.passed`) when the oracle scores 1 on every task, doing nothing
and random actions score 1 on at most :data:`FLOOR_LIMIT` of them, and every attack is graded as the
task's failure. A grade that is absent (``eval_error``, ``env_error``) fails the family as well.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gymnasium

from hud_gym.actions import ResponseAction
from hud_gym.agents.random_agent import RandomAgent
from hud_gym.core.family import Family, family_taskset, make_oracle
from hud_gym.core.gym_type import get_gym, import_path
from hud_gym.evaluation.hacking import Attack, play
from hud_gym.rewards import graded_reward
from hud_gym.task import Task

__all__ = ["ATTACK_TASKS", "FLOOR_LIMIT", "RANDOM_STEPS", "FamilyReport", "check_family", "run_agent"]

RANDOM_STEPS = 15
"""Steps the random agent plays before it answers."""
ATTACK_TASKS = 3
"""Tasks each attack is played on."""
FLOOR_LIMIT = 0.02
"""The largest success rate of doing nothing or acting at random a family may have."""

Act = Callable[[dict[str, Any], dict[str, Any]], Any]


@dataclass
class FamilyReport:
    """One family's proof (see the module docstring); rates are in ``[0, 1]``."""

    family: str
    tasks: int
    oracle: float
    nothing: float
    random: float
    attacks_played: int
    attacks_scored: int
    steps: dict[int, float] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """The oracle solved every task, the floors are low, no attack scored, nothing was ungraded."""
        floors = self.nothing <= FLOOR_LIMIT and self.random <= FLOOR_LIMIT
        return self.oracle == 1.0 and floors and self.attacks_scored == 0 and not self.problems


def run_agent(env: gymnasium.Env, task: Task, act: Act, max_steps: int) -> tuple[float, int, list[str]]:
    """One episode of ``task``: ``act`` (``None``: it is done) for at most ``max_steps`` steps, then
    ``"done"``; the best reward, the steps taken, and the statuses that were not ``ok``."""
    observation, info = env.reset(options={"task": task})
    best, steps, bad = 0.0, 0, []
    while True:
        action = act(observation, info) if steps < max_steps else None
        observation, reward, terminated, truncated, info = env.step(action or ResponseAction(text="done"))
        steps += 1
        status = str(info.get("status"))
        if status not in ("ok", "action_error"):
            bad.append(f"{task.id} step {steps}: {status} {str(info.get('error') or '')[:200]}")
        best = max(best, graded_reward(reward) or 0.0)  # a failed step solves nothing
        if terminated or truncated or action is None:
            return best, steps, bad


def _solve(env: gymnasium.Env, task: Task) -> tuple[float, int, list[str]]:
    oracle = make_oracle(task)
    return run_agent(env, task, oracle.act, max_steps=10_000)


def check_family(family: Family, seeds: int = 100, env: gymnasium.Env | None = None) -> FamilyReport:
    """Prove ``family`` on ``seeds`` tasks (see the module docstring); ``env``: one of its gym to
    reuse (else one is made and closed)."""
    tasks = list(family_taskset(family.name, split="train", n=seeds))
    own = env is None
    env = env or gymnasium.make(get_gym(family.gym).id, **dict(family.env_options))
    try:
        return _check(family, tasks, env)
    finally:
        if own:
            env.close()


def _check(family: Family, tasks: list[Task], env: gymnasium.Env) -> FamilyReport:
    problems: list[str] = []
    solved = nothing = lucky = 0
    steps: dict[int, list[int]] = defaultdict(list)
    random_agent = RandomAgent(seed=0)
    for task in tasks:
        reward, count, bad = _solve(env, task)
        solved += reward >= 1.0
        problems += bad + ([] if reward >= 1.0 else [f"{task.id}: the oracle scored {reward}"])
        steps[int((task.metadata or {})["difficulty"])].append(count)
        reward, _, bad = run_agent(env, task, lambda o, i: None, max_steps=0)
        nothing += reward >= 1.0
        problems += bad
        reward, _, bad = run_agent(env, task, random_agent.act, max_steps=RANDOM_STEPS)
        lucky += reward >= 1.0
        problems += bad
    attacks: tuple[Attack, ...] = tuple(import_path(family.attacks)) if family.attacks else ()
    verdicts = [play(env, task, a) for task in tasks[:ATTACK_TASKS] for a in attacks if a.applies(task)]
    scored = [f"{v.task_id} / {v.attack}: {p}" for v in verdicts if (p := v.problem((0.0,))) is not None]
    n = max(1, len(tasks))
    return FamilyReport(
        family=family.name,
        tasks=len(tasks),
        oracle=solved / n,
        nothing=nothing / n,
        random=lucky / n,
        attacks_played=len(verdicts),
        attacks_scored=len(scored),
        steps={d: sum(c) / len(c) for d, c in sorted(steps.items())},
        problems=problems + scored,
    )
