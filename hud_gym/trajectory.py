"""Trajectories: one run of a task (the unit of training data), and groups of runs (GRPO).

A :class:`Trajectory` keeps everything a trainer needs and nothing it must guess: the actions
(CLA JSON), per-step rewards, the final ``reward`` (``None`` when the run failed: a status in
:data:`FAILED`, so a failure is never mistaken for a task scored 0), a ``status``, the
``group_id`` shared by the G runs of one task, and an opaque ``policy_trace`` slot per step for
token ids and logprobs. Screenshots stay in memory (``observation``, not serialised) or are
referenced by path (``observation_ref``).
"""

from __future__ import annotations

import base64
import io
import json
import traceback
import uuid
from datetime import datetime, timezone
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from hud_gym.advantages import group_advantages
from hud_gym.task import Task

__all__ = ["Status", "Trajectory", "TrajectoryGroup", "TrajectoryStep", "crash_error", "new_id", "utc_now"]

Status = Literal[
    "ok", "truncated", "env_error", "timeout", "eval_error", "policy_error", "interrupted", "record_error", "ungraded"
]
"""How a run ended: ``ok`` (terminated normally), ``truncated`` (step limit), or a failure that
leaves the run without a reward (``reward=None``): ``env_error`` (the browser, desktop or
controller failed), ``timeout`` (a step, an evaluation or the run's budget ran out),
``eval_error`` (the evaluator raised, or gave an error grade, a NaN, an infinity or a reward
outside its declared range), ``policy_error`` (the policy raised), ``interrupted`` (the process
died or exited mid-run), ``record_error`` (the job store could not record it whole, e.g. a full
disk), ``ungraded`` (the episode was closed or reset before any grade: neither a final step nor
``env.evaluate()`` graded it)."""

FAILED: frozenset[str] = frozenset(
    {"env_error", "timeout", "eval_error", "policy_error", "interrupted", "record_error", "ungraded"}
)
"""The statuses of a failed step or run: its reward is absent (``None``; NaN in a float array)."""


TRACEBACK_HEAD = "Traceback (most recent call last):"
"""Where a run's ``error`` keeps the traceback of a crash (:func:`crash_error`)."""
TRACEBACK_CHARS = 16_000
"""The most of a traceback a run keeps (its end: the frame that raised and the exception)."""


def crash_error(message: str, exc: BaseException) -> str:
    """A run's ``error`` for a crash: ``message`` on the first line, then the traceback of
    ``exc`` (its last :data:`TRACEBACK_CHARS` characters: an agent's exception message is
    its own, so it is bounded like every string it controls)."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip()
    if len(text) > TRACEBACK_CHARS:
        text = f"{TRACEBACK_HEAD}\n  … [{len(text) - TRACEBACK_CHARS:,} characters cut]\n{text[-TRACEBACK_CHARS:]}"
    return f"{message}\n\n{text}"


def new_id() -> str:
    """A fresh random id."""
    return uuid.uuid4().hex


def utc_now() -> datetime:
    """The current time, timezone-aware (UTC)."""
    return datetime.now(timezone.utc)


class TrajectoryStep(BaseModel):
    """One ``env.step``: the actions sent, what came back, and when. ``reward`` is ``None`` when
    the step failed (``status`` in :data:`FAILED`)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: int
    actions: list[dict[str, Any]] = Field(default_factory=list)
    reward: float | None = 0.0
    terminated: bool = False
    truncated: bool = False
    text: str = ""
    status: str = "ok"
    error: str | None = None
    info: dict[str, Any] = Field(default_factory=dict)
    timings: dict[str, float] = Field(default_factory=dict)
    started_at: datetime = Field(default_factory=utc_now)
    ended_at: datetime | None = None
    observation_ref: str | None = None
    policy_trace: Any = None
    observation: Any = Field(default=None, exclude=True, repr=False)


class Trajectory(BaseModel):
    """One run of one task."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    trajectory_id: str = Field(default_factory=new_id)
    group_id: str | None = None
    rollout_index: int = 0
    job_id: str | None = None
    task: Task | None = None
    task_id: str | None = None
    seed: int | None = None
    prompt: str = ""
    steps: list[TrajectoryStep] = Field(default_factory=list)
    reward: float | None = None
    status: Status = "ok"
    error: str | None = None
    final_response: str | None = None
    grade: dict[str, Any] | None = None
    started_at: datetime = Field(default_factory=utc_now)
    ended_at: datetime | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    initial_observation: Any = Field(default=None, exclude=True, repr=False)

    @property
    def id(self) -> str:
        """HUD's name of :attr:`trajectory_id` (``traj.id``)."""
        return self.trajectory_id

    @property
    def step_rewards(self) -> list[float | None]:
        """The reward of every step (``None`` for a failed step)."""
        return [s.reward for s in self.steps]

    @property
    def error_summary(self) -> str:
        """The first line of :attr:`error` (``""`` when none): what a table shows."""
        return (self.error or "").split("\n", 1)[0]

    @property
    def traceback(self) -> str | None:
        """The traceback :attr:`error` keeps for a crash (the agent raised: :func:`crash_error`), else ``None``."""
        head = (self.error or "").find(TRACEBACK_HEAD)
        return None if head < 0 else (self.error or "")[head:]

    @property
    def failed(self) -> bool:
        """True when the run failed (a status in :data:`FAILED`): it has no reward (``None``)."""
        return self.status in FAILED

    @property
    def duration_s(self) -> float | None:
        """Wall-clock seconds from start to end."""
        return (self.ended_at - self.started_at).total_seconds() if self.ended_at else None

    def to_messages(self, *, images: bool = True, image_format: str = "jpeg") -> list[dict[str, Any]]:
        """OpenAI-style chat messages: the prompt and first screenshot as the user turn, each step's
        actions as an assistant turn, and what the env returned as the next user turn (text and,
        with ``images``, the screenshot as a ``data:`` URL image part)."""
        messages: list[dict[str, Any]] = [
            {
                "role": "user",
                "content": _content(self.prompt, self.initial_observation if images else None, image_format),
            }
        ]
        for step in self.steps:
            messages.append({"role": "assistant", "content": _actions_text(step.actions)})
            feedback = step.text
            if step.error:
                feedback = f"{feedback}\nError: {step.error}".strip()
            messages.append(
                {"role": "user", "content": _content(feedback, step.observation if images else None, image_format)}
            )
        return messages


def _actions_text(actions: list[dict[str, Any]]) -> str:
    return json.dumps(actions, ensure_ascii=False)


def _content(text: str, observation: Any, image_format: str) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
    screenshot = observation.get("screenshot") if isinstance(observation, dict) else None
    if screenshot is not None:
        parts.append({"type": "image_url", "image_url": {"url": encode_image(np.asarray(screenshot), image_format)}})
    return parts


def encode_image(array: np.ndarray, image_format: str = "jpeg") -> str:
    """An ``(H, W, 3)`` uint8 array as a ``data:image/...;base64,`` URL."""
    from PIL import Image

    buffer = io.BytesIO()
    fmt = "JPEG" if image_format.lower() in ("jpeg", "jpg") else image_format.upper()
    options = {"quality": 85} if fmt == "JPEG" else {}
    Image.fromarray(array).save(buffer, format=fmt, **options)
    return f"data:image/{fmt.lower()};base64,{base64.b64encode(buffer.getvalue()).decode('ascii')}"


class TrajectoryGroup(BaseModel):
    """The G runs of one task that share a ``group_id``, seed and initial state."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    group_id: str = Field(default_factory=new_id)
    task: Task | None = None
    seed: int | None = None
    trajectories: list[Trajectory] = Field(default_factory=list)

    def rewards(self) -> list[float | None]:
        """Each run's reward (``None`` for failed runs)."""
        return [t.reward for t in self.trajectories]

    def is_degenerate(self) -> bool:
        """True when every scorable run has the same reward (no learning signal)."""
        scored = {r for r in self.rewards() if r is not None}
        return len(scored) <= 1

    def advantages(self, **kwargs: Any) -> np.ndarray:
        """:func:`hud_gym.advantages.group_advantages` of this group's rewards."""
        return group_advantages(self.rewards(), **kwargs)
