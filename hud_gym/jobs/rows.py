"""Conversions between store rows and the package's models (JSON columns, ISO times)."""

from __future__ import annotations

import json
import math
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ValidationError

from hud_gym.bounds import STRING_CHARS, TRUNCATED_KEY, VALUE_CHARS, bound, clip_text, sanitize
from hud_gym.task import Task
from hud_gym.trajectory import Trajectory, TrajectoryStep

__all__ = [
    "from_time",
    "json_safe",
    "load_json",
    "step_from_row",
    "store_text",
    "to_json",
    "to_time",
    "trajectory_from_row",
]

INITIAL_OBSERVATION_REF = "initial_observation_ref"
"""The key in ``Trajectory.metadata`` holding the absolute path of the reset screenshot."""


def _default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return {"bytes": len(value)}
    if hasattr(value, "tolist"):  # numpy arrays and scalars, torch tensors
        return value.tolist()
    return str(value)


def to_json(value: Any, max_string: int = STRING_CHARS, *, flag: bool = True) -> str:
    """JSON text of ``value``; numpy/torch values become lists, models their JSON form, anything
    else its ``str``. Non-finite floats become ``null``. What an agent or a task controls is
    bounded (:func:`hud_gym.bounds.bound`: strings cut to ``max_string``, the cut paths listed under
    ``truncated_fields`` in a dict unless not ``flag``) and lone surrogates become U+FFFD; a value whose JSON still
    exceeds :data:`~hud_gym.bounds.VALUE_CHARS` (objects turned into long strings) is stored as
    ``{"truncated_fields": ["(value)"], "json_head": ...}``."""
    bounded, cut = bound(json_safe(value), max_string=max_string, max_total=max(VALUE_CHARS, 2 * max_string))
    if cut and flag and isinstance(bounded, dict):
        bounded[TRUNCATED_KEY] = cut
    text = sanitize(json.dumps(bounded, ensure_ascii=False, default=_default, allow_nan=False))
    if len(text) > 4 * max(VALUE_CHARS, max_string):
        return json.dumps({TRUNCATED_KEY: ["(value)"], "json_head": clip_text(text, STRING_CHARS)}, ensure_ascii=False)
    return text


def store_text(text: str | None, limit: int = STRING_CHARS) -> str | None:
    """A text column's value: ``text`` cut to ``limit`` characters, lone surrogates replaced."""
    return None if text is None else clip_text(text, limit)


def json_safe(value: Any) -> Any:
    """``value`` with non-finite floats replaced by ``None`` (JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, BaseModel):
        return json_safe(value.tolist())
    return value


def load_json(text: str | None, default: Any = None) -> Any:
    """The value of a JSON column (``default`` when NULL)."""
    return default if text is None else json.loads(text)


def to_time(value: datetime | None) -> str | None:
    """An ISO 8601 string (``None`` stays ``None``)."""
    return value.isoformat() if value is not None else None


def from_time(text: str | None) -> datetime | None:
    """The datetime of an ISO 8601 string."""
    return datetime.fromisoformat(text) if text else None


def step_from_row(row: Any, image_path: Any) -> TrajectoryStep:
    """A :class:`TrajectoryStep` from a ``steps`` row; ``image_path(ref)`` makes refs absolute."""
    return TrajectoryStep(
        index=row["idx"],
        actions=load_json(row["actions"], []),
        reward=row["reward"],
        terminated=bool(row["terminated"]),
        truncated=bool(row["truncated"]),
        text=row["text"],
        status=row["status"],
        error=row["error"],
        info=load_json(row["info"], {}),
        timings=load_json(row["timings"], {}),
        started_at=datetime.fromisoformat(row["started_at"]),
        ended_at=from_time(row["ended_at"]),
        observation_ref=str(image_path(row["observation_ref"])) if row["observation_ref"] else None,
        policy_trace=load_json(row["policy_trace"]),
    )


def trajectory_from_row(row: Any, steps: list[TrajectoryStep], image_path: Any) -> Trajectory:
    """A :class:`Trajectory` from a ``trajectories`` row and its steps."""
    metadata = load_json(row["metadata"], {})
    if row["initial_observation_ref"]:
        metadata[INITIAL_OBSERVATION_REF] = str(image_path(row["initial_observation_ref"]))
    task = None
    if row["task"]:
        try:
            task = Task.model_validate_json(row["task"])
        except ValidationError as exc:
            metadata["task_load_error"] = str(exc)
    return Trajectory(
        trajectory_id=row["id"],
        group_id=row["group_id"],
        rollout_index=row["rollout_index"],
        job_id=row["job_id"],
        task=task,
        task_id=row["task_id"],
        seed=row["seed"],
        prompt=row["prompt"],
        steps=steps,
        reward=row["reward"],
        status=row["status"],
        error=row["error"],
        final_response=row["final_response"],
        grade=load_json(row["grade"]),
        started_at=datetime.fromisoformat(row["started_at"]),
        ended_at=from_time(row["ended_at"]),
        metadata=metadata,
    )
