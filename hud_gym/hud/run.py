"""HUD 0.6's ``Run``: one task's run with its :class:`~hud_gym.hud.trace.Trace` and
:class:`~hud_gym.evaluation.Grade`, read from the job store.

A run *is* a stored trajectory (the same SQLite store, shown by ``hud-gym jobs show`` and the
report): :meth:`Run.from_trajectory` gives every member but live handles. A run without a reward
(failed, or ``ungraded``) has ``reward=None`` and an error grade saying why, never a 0.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from hud_gym.evaluation import Grade
from hud_gym.hud.trace import Trace
from hud_gym.trajectory import Trajectory

__all__ = ["PromptMessage", "Run"]


class PromptMessage(BaseModel):
    """One turn of the prompt."""

    role: Literal["user", "assistant", "system"] = "user"
    content: str


class Run(BaseModel):
    """See the module docstring."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    prompt: str | list[dict[str, Any]] | None = None
    trace: Trace = Field(default_factory=Trace)
    grade: Grade = Field(default_factory=lambda: Grade.error("not graded"))
    reward: float | None = None
    runtime: str | None = None
    trace_id: str | None = None
    job_id: str | None = None
    group_id: str | None = None
    task_id: str | None = None
    status: str | None = None

    @property
    def prompt_messages(self) -> list[PromptMessage]:
        """The prompt as user/assistant turns."""
        if self.prompt is None:
            return []
        if isinstance(self.prompt, str):
            return [PromptMessage(role="user", content=self.prompt)]
        return [PromptMessage.model_validate(message) for message in self.prompt]

    @property
    def prompt_text(self) -> str:
        """The prompt flattened to plain text."""
        return "\n".join(message.content for message in self.prompt_messages)

    @property
    def evaluation(self) -> dict[str, Any]:
        """The grade as a plain dict (HUD's raw grade payload)."""
        raw = self.grade.raw
        return dict(raw) if isinstance(raw, dict) else self.grade.model_dump(mode="json", exclude={"raw"})

    @classmethod
    def from_trajectory(cls, trajectory: Trajectory) -> Run:
        """The run a stored trajectory records."""
        stored = trajectory.grade
        if trajectory.failed or stored is None:
            grade = Grade.error(trajectory.error or f"the run has no grade ({trajectory.status})")
        else:
            grade = Grade.model_validate({**stored, "raw": stored})
        return cls(
            prompt=trajectory.prompt,
            trace=Trace.from_trajectory(trajectory),
            grade=grade,
            reward=None if trajectory.failed else trajectory.reward,
            runtime=trajectory.metadata.get("placement"),
            trace_id=trajectory.trajectory_id,
            job_id=trajectory.job_id,
            group_id=trajectory.group_id,
            task_id=trajectory.task_id,
            status=trajectory.status,
        )
