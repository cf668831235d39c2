"""HUD 0.6's ``Trace``: the agent's trajectory for one run, as ordered steps plus the run summary.

A stored hud-gym :class:`~hud_gym.trajectory.Trajectory` reads as a trace
(:meth:`Trace.from_trajectory`): each env step becomes an :class:`AgentStep` (the model's turn:
the actions it chose as ``tool_calls``, and ``done`` on the last) followed by a :class:`ToolStep`
(the round-trip: the call and what the env answered: status, text, reward, error).
``status`` is ``completed`` for a graded run, ``error`` for a failed or ungraded one (no reward)
and ``cancelled`` for an interrupted one; ``content`` is the final answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field

from hud_gym.trajectory import FAILED, Trajectory

__all__ = ["AgentStep", "Step", "ToolStep", "Trace", "TraceStatus"]

T = TypeVar("T")
TraceStatus = Literal["completed", "error", "cancelled"]


class Step(BaseModel):
    """HUD's shared step skeleton: where it came from, when, and its error."""

    source: str = "env"
    index: int = 0
    started_at: str | None = None
    ended_at: str | None = None
    error: str | None = None


class AgentStep(Step):
    """The model's turn: its reply ``content``, ``reasoning``, the ``tool_calls`` (CLA actions) and ``done``."""

    source: str = "agent"
    content: str | None = None
    reasoning: str | None = None
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    done: bool = False
    model: str | None = None
    usage: dict[str, Any] | None = None


class ToolStep(Step):
    """One tool round-trip: the ``call`` (the step's actions) paired with its ``result`` (status,
    text, reward, error)."""

    source: str = "tool"
    call: list[dict[str, Any]] = Field(default_factory=list)
    result: dict[str, Any] = Field(default_factory=dict)


class Trace(BaseModel):
    """See the module docstring."""

    steps: list[Step] = Field(default_factory=list)
    status: TraceStatus | None = None
    content: str | None = None
    trace_id: str | None = None

    @property
    def is_error(self) -> bool:
        """True when the run ended in error (``status == "error"``)."""
        return self.status == "error"

    @property
    def error(self) -> str | None:
        """The newest step error (a view on :meth:`final`)."""
        return self.final(lambda step: step.error)

    def final(self, get: Callable[[Step], T | None]) -> T | None:
        """``get`` of the newest step for which it is not ``None``."""
        for step in reversed(self.steps):
            value = get(step)
            if value is not None:
                return value
        return None

    def collect(self, get: Callable[[Step], T | None]) -> list[T]:
        """``get`` of every step, in step order, leaving out ``None``."""
        return [value for value in (get(step) for step in self.steps) if value is not None]

    @classmethod
    def from_trajectory(cls, trajectory: Trajectory) -> Trace:
        """The trace of a stored (or in-memory) trajectory."""
        steps: list[Step] = []
        last = len(trajectory.steps) - 1
        for position, step in enumerate(trajectory.steps):
            started = step.started_at.isoformat() if step.started_at else None
            ended = step.ended_at.isoformat() if step.ended_at else None
            steps.append(
                AgentStep(
                    index=2 * position,
                    started_at=started,
                    tool_calls=list(step.actions),
                    done=position == last and (step.terminated or step.truncated),
                    content=_response_of(step.actions),
                )
            )
            result = {"status": step.status, "text": step.text, "reward": step.reward, "error": step.error}
            steps.append(
                ToolStep(
                    index=2 * position + 1, ended_at=ended, call=list(step.actions), result=result, error=step.error
                )
            )
        if trajectory.status == "interrupted":
            status: TraceStatus = "cancelled"
        elif trajectory.status in FAILED:
            status = "error"
        else:
            status = "completed"
        return cls(steps=steps, status=status, content=trajectory.final_response, trace_id=trajectory.trajectory_id)


def _response_of(actions: list[dict[str, Any]]) -> str | None:
    for action in actions:
        if action.get("type") == "response":
            return str(action.get("text", ""))
    return None
