"""The rows a :class:`~hud_gym.jobs.recorder.TrajectoryRecorder` stores: a step's actions and
``info`` in JSON form, and a trajectory's outcome from its last step or its grade."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hud_gym.actions import CLAAction, parse_actions
from hud_gym.evaluation import Grade
from hud_gym.jobs.elements import compact_elements
from hud_gym.jobs.rows import json_safe
from hud_gym.spaces import decode, is_encoded_action
from hud_gym.trajectory import FAILED, Trajectory, TrajectoryStep

if TYPE_CHECKING:
    from hud_gym.core.env import HudEnv

__all__ = ["actions_json", "apply_grade", "error_status", "final_outcome", "info_json"]

_SKIPPED_INFO_KEYS = frozenset({"grade", "timings", "prompt", "final_obs", "final_info", "_final_obs", "_final_info"})


def final_outcome(
    trajectory: Trajectory, step: TrajectoryStep, grade: Any, final_response: str | None, ended_at: Any
) -> Trajectory:
    """The trajectory's final fields after its last step (the rules of ``grpo.rollout``)."""
    trajectory.final_response = final_response
    trajectory.grade = grade.model_dump(mode="json", exclude={"raw"}) if hasattr(grade, "model_dump") else None
    if step.status in FAILED:
        trajectory.status, trajectory.reward, trajectory.error = step.status, None, step.error  # type: ignore[assignment]
    else:
        trajectory.status = "truncated" if step.truncated and not step.terminated else "ok"
        trajectory.reward = step.reward
    trajectory.ended_at = ended_at
    return trajectory


def error_status(grade: Grade) -> str:
    return "timeout" if grade.info.get("timeout") else "eval_error"


def apply_grade(trajectory: Trajectory, grade: Grade, status: str) -> None:
    """Store ``grade`` as the trajectory's outcome: its reward with ``status``, or, for an error
    grade, ``eval_error``/``timeout`` with no reward."""
    trajectory.grade = grade.model_dump(mode="json", exclude={"raw"})
    if grade.is_error:
        trajectory.status, trajectory.reward = error_status(grade), None  # type: ignore[assignment]
        trajectory.error = grade.content or "the evaluation failed"
    else:
        trajectory.status, trajectory.reward, trajectory.error = status, float(grade.reward), None  # type: ignore[assignment]


def actions_json(action: Any, env: HudEnv) -> list[dict[str, Any]]:
    """The step's actions in CLA JSON form (an action-space sample is decoded first); what cannot
    be parsed is kept as given."""
    try:
        if is_encoded_action(action):
            actions: list[Any] = [decode(action, env.action_space_config)]
        else:
            actions = parse_actions(action)
        return [a.model_dump(mode="json", exclude_none=True) for a in actions if isinstance(a, CLAAction)]
    except Exception:  # noqa: BLE001  (the env reported the bad action; keep what was sent)
        items = action if isinstance(action, (list, tuple)) else [action]
        return [item if isinstance(item, dict) else {"value": repr(item)} for item in json_safe(list(items))]


def info_json(info: dict[str, Any]) -> dict[str, Any]:
    """The step ``info`` entries worth keeping: scalars, short lists of scalars and the elements'
    boxes (:func:`~hud_gym.jobs.elements.compact_elements`); the grade and timings are stored in
    their own columns."""
    kept: dict[str, Any] = {}
    for key, value in info.items():
        if key in _SKIPPED_INFO_KEYS or value is None:
            continue
        if key == "elements":  # bounded boxes, drawn on the frame by the UI
            elements = compact_elements(value)
            if elements is not None:
                kept[key] = elements
            continue
        value = json_safe(value)
        if (
            isinstance(value, (bool, int, float, str))
            or isinstance(value, list)
            and len(value) <= 16
            and all(isinstance(v, (bool, int, float, str)) for v in value)
        ):
            kept[key] = value
    return kept
