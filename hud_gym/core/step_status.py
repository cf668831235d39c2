"""How a step came out: its :class:`StepStatus` (``info["status"]``), the one table of what each
status does to the step (:data:`STATUS_RULES`), and :class:`StepOutcome`, what the act, observe
and grade phases of a step (:meth:`~hud_gym.core.episode_step.StepRunner.step`) have made of it so far.

The episode rules behind the table are in :mod:`hud_gym.core.episode`. A status that keeps the
reward keeps the evaluator's when the step was graded, else 0; a status whose reward is ``None``
is in :data:`hud_gym.trajectory.FAILED`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, NamedTuple

__all__ = ["STATUS_RULES", "StatusRule", "StepOutcome", "StepStatus"]


class StepStatus(str, Enum):
    """A step's ``info["status"]``; a ``str`` (``StepStatus.TIMEOUT == "timeout"``), so comparisons
    with the strings and the stored values are the plain names."""

    OK = "ok"
    ACTION_ERROR = "action_error"
    """The agent's action was malformed or impossible: reported, and the episode goes on."""
    EPISODE_OVER = "episode_over"
    """A step after the episode ended: no reward (``NaN``), the episode's grade was its last step's."""
    EVAL_ERROR = "eval_error"
    """The evaluator is broken: it raised, or gave an error grade or a reward out of range."""
    ENV_ERROR = "env_error"
    """The controller failed (a dead browser, display or server): the episode ends."""
    TIMEOUT = "timeout"
    """The action, observation or evaluation outlived ``step_timeout``: the episode is truncated."""

    def __str__(self) -> str:
        return self.value


class StatusRule(NamedTuple):
    """What a status does to its step."""

    keeps_reward: bool
    """The step keeps its reward (graded, or 0); ``False``: the reward is absent (``NaN``): the
    step failed, or came after the episode's end."""
    terminated: bool
    """The status ends the episode (``terminated``)."""
    truncated: bool
    """The status cuts the episode short (``truncated``)."""
    restarts: bool
    """The next ``reset`` restarts the controller."""


# fmt: off
STATUS_RULES: dict[StepStatus, StatusRule] = {
    #                                  keeps_reward  terminated  truncated  restarts
    StepStatus.OK:           StatusRule(True,        False,      False,     False),
    StepStatus.ACTION_ERROR: StatusRule(True,        False,      False,     False),
    StepStatus.EPISODE_OVER: StatusRule(False,       True,       False,     False),
    StepStatus.EVAL_ERROR:   StatusRule(False,       False,      False,     False),
    StepStatus.ENV_ERROR:    StatusRule(False,       True,       False,     True),
    StepStatus.TIMEOUT:      StatusRule(False,       False,      True,      True),
}
# fmt: on
"""Status to what it does to the step: the one place these rules are written."""


def _new_info() -> dict[str, Any]:
    return {"status": StepStatus.OK.value, "action_error": None, "error": None, "grade": None}


@dataclass
class StepOutcome:
    """A step in the making: the status its phases came to, whether the episode ends, the reward
    the evaluator gave, and the ``info`` and ``timings`` (seconds per phase) they report."""

    status: StepStatus = StepStatus.OK
    terminated: bool = False
    truncated: bool = False
    restart_controller: bool = False
    graded: float = 0.0
    """The evaluator's reward when the step was graded (0 when it was not)."""
    info: dict[str, Any] = field(default_factory=_new_info)
    timings: dict[str, float] = field(default_factory=dict)

    def set(self, status: StepStatus, error: str | None = None) -> None:
        """The step came to ``status``, with the message ``error`` (``info["action_error"]`` for
        an action error, else ``info["error"]``); the status's rule ends the episode and asks for
        a controller restart (:data:`STATUS_RULES`); a later phase's status replaces it."""
        rule = STATUS_RULES[status]
        self.status = status
        self.info["status"] = status.value
        self.terminated |= rule.terminated
        self.truncated |= rule.truncated
        self.restart_controller |= rule.restarts
        if error is not None:
            self.info["action_error" if status is StepStatus.ACTION_ERROR else "error"] = error

    @property
    def failed(self) -> bool:
        """Whether the step lost its reward (its status is a failure)."""
        return not STATUS_RULES[self.status].keeps_reward

    @property
    def reward(self) -> float | None:
        """The step's reward: ``None`` when it failed, else the graded reward (0 when ungraded)."""
        return None if self.failed else self.graded

    @contextlib.contextmanager
    def timed(self, phase: str) -> Iterator[None]:
        """Time the block as ``timings[phase]``."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.timings[phase] = time.perf_counter() - started
