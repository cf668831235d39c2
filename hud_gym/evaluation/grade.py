"""The result of grading an episode (or of one setup/evaluate call), and the checks that keep a
wrong number from passing as a reward.

A reward must be a finite number inside its declared range: ``[0, 1]`` by default; an evaluate
function may declare another (``@evaluate_function(reward_range=(-1, 1))``, as MiniWoB++'s raw
reward does) and a task's ``config["reward_range"]`` overrides both for its calls.
:func:`check_reward` turns anything else (NaN, an infinity, ``1e300``) into an error grade, which
the env reports as ``status="eval_error"`` with no reward.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from hud_gym.bounds import STRING_CHARS, bound_info, clip_text

__all__ = [
    "DEFAULT_REWARD_RANGE",
    "Grade",
    "RewardRange",
    "check_reward",
    "combine_grades",
    "reward_range_of",
    "to_grade",
]

RewardRange = tuple[float, float]
"""``(low, high)``: the rewards an evaluator may give, bounds included."""

DEFAULT_REWARD_RANGE: RewardRange = (0.0, 1.0)
"""The range of an evaluate function that declares none."""


class Grade(BaseModel):
    """A graded result, as HUD's ``Grade``.

    Attributes:
        reward: the score, in the evaluator's declared range (``[0, 1]`` by default). An error
            grade keeps ``0.0`` here, but the env reports no reward for it (``None``).
        done: whether the task counts as complete (with ``evaluate_every_step`` it ends the
            episode). When not given, a grade is done when its reward reaches 1.
        content: a human-readable explanation (cut to :data:`~hud_gym.bounds.STRING_CHARS`).
        info: extra data (sub-grades, measured values), bounded as :func:`hud_gym.bounds.bound_info`.
        is_error: grading itself failed (the evaluator raised, its input was unusable, or its
            reward was not a finite number in range): the env's step then says
            ``status="eval_error"`` and ``reward=None``.
        raw: what the evaluator returned, before normalisation.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    reward: float = 0.0
    done: bool = True
    content: str | None = None
    info: dict[str, Any] = Field(default_factory=dict)
    is_error: bool = False
    raw: Any = None

    @model_validator(mode="after")
    def _bounded(self) -> Grade:
        """An evaluator reports what an agent or a task controls: ``content`` is cut to
        :data:`~hud_gym.bounds.STRING_CHARS` and ``info`` bounded (:func:`~hud_gym.bounds.bound_info`)."""
        if self.content is not None:
            self.content = clip_text(self.content, STRING_CHARS)
        if self.info:
            self.info = bound_info(self.info)
        return self

    @model_validator(mode="before")
    @classmethod
    def _done_from_reward(cls, data: Any) -> Any:
        if isinstance(data, dict) and "reward" not in data and ("score" in data or "isError" in data):
            data = _from_wire_frame(data)
        if isinstance(data, dict) and "done" not in data:
            reward = data.get("reward", 0.0)
            data = {**data, "done": isinstance(reward, (int, float)) and reward >= 1.0}
        return data

    def __float__(self) -> float:
        """The reward (``float(grade)``, as HUD's); NaN for an error grade, which has none."""
        return math.nan if self.is_error else float(self.reward)

    @classmethod
    def error(cls, message: str, **info: Any) -> Grade:
        """A failed grading with reward 0."""
        return cls(reward=0.0, done=False, content=message, info=info, is_error=True)


_WIRE_FIELDS = {"score": "reward", "isError": "is_error", "done": "done", "content": "content", "info": "info"}


def _from_wire_frame(frame: dict[str, Any]) -> dict[str, Any]:
    """A HUD wire grade frame (``{"score", "done", "isError", "content", "info", ...}``) as
    :class:`Grade` fields: ``score`` is the reward, the whole frame is ``raw``. A frame without a
    numeric score is an error grade (never a silent 0)."""
    data: dict[str, Any] = {field: frame[key] for key, field in _WIRE_FIELDS.items() if key in frame}
    score = frame.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        data.update(reward=0.0, is_error=True, done=False)
        data["content"] = data.get("content") or f"the grade frame has no numeric 'score': {frame!r}"[:400]
    if data.get("content") is not None and not isinstance(data["content"], str):
        data["content"] = str(data["content"])
    data.setdefault("info", {})
    data["raw"] = frame.get("raw", frame)
    return data


def to_grade(value: Any) -> Grade:
    """Normalise what an evaluate function returned: a Grade, a number/bool, or a dict with
    ``reward``/``score`` (HUD's ``{"reward", "logs", "error"}`` and ``{"score", "reason"}`` forms).

    Unless a dict says ``done``, the task counts as done when the reward reaches 1 (so a partial
    or failing score does not end an ``evaluate_every_step`` episode)."""
    if isinstance(value, Grade):
        return value
    if isinstance(value, bool):
        return Grade(reward=float(value), done=value, raw=value)
    if isinstance(value, (int, float)):
        return Grade(reward=float(value), done=value >= 1, raw=value)
    if isinstance(value, dict):
        score = value.get("reward", value.get("score"))
        if not isinstance(score, (int, float)):
            return Grade.error(f"evaluator returned a dict without a numeric 'reward' or 'score': {value!r}")
        error = value.get("error") or value.get("isError") or value.get("is_error")
        content = value.get("content") or value.get("reason") or value.get("logs")
        info = {k: v for k, v in value.items() if k not in ("reward", "score", "content", "reason", "logs")}
        return Grade(
            reward=float(score),
            done=bool(value.get("done", score >= 1)),
            content=content and str(content),
            info=info,
            is_error=bool(error),
            raw=value,
        )
    return Grade.error(f"evaluator returned {type(value).__name__}, expected a Grade, a number or a dict")


def combine_grades(grades: Sequence[Grade], mode: Literal["mean", "min", "max", "product"] = "mean") -> Grade:
    """Combine the grades of several evaluate calls into one.

    ``mean`` (default) gives partial credit; ``min`` or ``product`` need every check to pass;
    ``max`` needs any. ``done`` holds when every grade is done; ``is_error`` when any is an error.
    """
    if not grades:
        return Grade(reward=0.0, content="nothing to evaluate")
    if len(grades) == 1:
        return grades[0]
    rewards = [g.reward for g in grades]
    if mode == "mean":
        reward = sum(rewards) / len(rewards)
    elif mode == "min":
        reward = min(rewards)
    elif mode == "max":
        reward = max(rewards)
    elif mode == "product":
        reward = 1.0
        for r in rewards:
            reward *= r
    else:
        raise ValueError(f"unknown combine mode {mode!r}; use mean, min, max or product")
    return Grade(
        reward=reward,
        done=all(g.done for g in grades),
        content="; ".join(g.content for g in grades if g.content) or None,
        info={"grades": [g.model_dump(exclude={"raw"}) for g in grades], "combine": mode},
        is_error=any(g.is_error for g in grades),
        raw=[g.raw for g in grades],
    )


def reward_range_of(value: Any, what: str = "reward_range") -> RewardRange:
    """``value`` (a ``[low, high]`` pair of finite numbers, ``low <= high``) as a :data:`RewardRange`.

    Raises:
        ValueError: anything else; the message names ``what``.
    """
    if (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)
        and value[0] <= value[1]
    ):
        return float(value[0]), float(value[1])
    raise ValueError(f"{what} must be [low, high] with finite numbers and low <= high, got {value!r}")


def check_reward(grade: Grade, reward_range: RewardRange = DEFAULT_REWARD_RANGE, what: str = "the evaluator") -> Grade:
    """``grade`` when its reward is a finite number inside ``reward_range`` (or it already is an
    error), else an error grade that says what was wrong and keeps the bad value in
    ``info["bad_reward"]``."""
    if grade.is_error:
        return grade
    reward = grade.reward
    low, high = reward_range
    if not math.isfinite(reward):
        problem = f"{what} returned a reward of {reward!r}, which is not a finite number"
    elif not low <= reward <= high:
        problem = f"{what} returned a reward of {reward!r}, outside its range [{low:g}, {high:g}]"
    else:
        return grade
    return Grade(
        reward=0.0,
        done=False,
        content=problem,
        info={**grade.info, "bad_reward": repr(reward), "reward_range": [low, high]},
        is_error=True,
        raw=grade.raw,
    )
