"""The "target absent" outcome: what an evaluator checks is not there, and that is the task's failure.

The reward rule (docs/tasks.md, "Rewards"): a reward is graded or absent, and it is
absent (``status="eval_error"``, ``reward=None``) only when the *evaluator* is broken: it raised
on a state it is meant to handle, returned NaN or a reward out of its range, or timed out by its
own fault. A state in which what the evaluator checks is gone is one the agent can bring about
(it left or closed the task's page, opened another page, deleted the checked file or put a link
or a FIFO in its place, closed the window, quit the app): that state is graded, as the task's
failure. Otherwise a policy would learn to leave whenever it is about to fail, as a ``None``
reward drops out of success rates and gets no advantage in a GRPO group.

An evaluate function says so by raising :class:`TargetAbsent`;
:func:`~hud_gym.evaluation.runner.run_evaluate` turns it into :func:`absent_grade`: the failure
value of the call's reward range (its low end: 0 for ``[0, 1]``, MiniWoB++'s raw failure -1 for
``miniwob_reward``), not an error, with ``info["target_absent"]`` holding the message.
``final=True`` says the episode's instance is gone for good (the task's page was left): the grade
is then ``done``, which ends an ``evaluate_every_step`` episode.
"""

from __future__ import annotations

from typing import Any

from hud_gym.errors import HudGymError
from hud_gym.evaluation.grade import DEFAULT_REWARD_RANGE, Grade, RewardRange

__all__ = ["TARGET_ABSENT", "TargetAbsent", "absent_grade", "is_absent"]

TARGET_ABSENT = "target_absent"
"""The ``Grade.info`` key of a grade given because what the evaluator checks was absent."""


class TargetAbsent(HudGymError, LookupError):
    """What the evaluator checks is absent (a page left or closed, a file missing or unreadable,
    a window closed, an app quit): graded as the task's failure, never as an ``eval_error``.

    Args:
        message: what was absent, as the grade's ``content``.
        final: the episode's instance is gone for good (its page was left or closed): the grade
            is ``done``.
    """

    def __init__(self, message: str, *, final: bool = False) -> None:
        super().__init__(message)
        self.final = final

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled whole (``final`` too): an isolated evaluator's worker sends it back."""
        return type(self), (str(self),), {"final": self.final}


def absent_grade(absent: TargetAbsent, reward_range: RewardRange = DEFAULT_REWARD_RANGE) -> Grade:
    """The failure grade for ``absent``: the low end of ``reward_range``, not an error."""
    return Grade(
        reward=float(reward_range[0]),
        done=absent.final,
        content=str(absent),
        info={TARGET_ABSENT: str(absent), "final": absent.final},
    )


def is_absent(grade: Grade) -> bool:
    """Whether ``grade`` (or one of the grades it combines) was given because what its evaluator
    checks was absent."""
    subgrades = grade.info.get("grades")
    return TARGET_ABSENT in grade.info or (
        isinstance(subgrades, list)
        and any(TARGET_ABSENT in (g.get("info") or {}) for g in subgrades if isinstance(g, dict))
    )
