"""The reward-hacking harness: scripted adversarial agents that try to score without solving.

(Imported as ``hacking_harness``: pytest puts this folder on ``sys.path`` for its test modules.
:class:`Attack`, :class:`Episode`, :class:`Verdict` and :func:`play` live in
:mod:`hud_gym.evaluation.hacking`, which ``hud-gym tasksets check`` plays as well.)

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

from collections.abc import Sequence

import gymnasium

from hud_gym.evaluation.hacking import Attack, Episode, Verdict, always, play
from hud_gym.task import Task

__all__ = ["Attack", "Episode", "Verdict", "always", "check_family", "play"]


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
