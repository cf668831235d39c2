"""Mapping action coordinates from observation pixels to screen pixels."""

from __future__ import annotations

from hud_gym.actions import CLAAction, ClickAction, DragAction, MoveAction, Point, ScrollAction

__all__ = ["scale_action"]


def _scale(point: Point | None, sx: float, sy: float) -> Point | None:
    if point is None:
        return None
    return Point(x=round(point.x * sx), y=round(point.y * sy))


def scale_action(action: CLAAction, sx: float, sy: float) -> CLAAction:
    """Return ``action`` with its points, offsets, paths and scroll amounts multiplied by
    ``(sx, sy)``; the same object when the scale is 1."""
    if sx == 1 and sy == 1:
        return action
    if isinstance(action, ClickAction):
        return action.model_copy(update={"point": _scale(action.point, sx, sy)})
    if isinstance(action, ScrollAction):
        return action.model_copy(update={"point": _scale(action.point, sx, sy), "scroll": _scale(action.scroll, sx, sy)})
    if isinstance(action, MoveAction):
        return action.model_copy(update={"point": _scale(action.point, sx, sy), "offset": _scale(action.offset, sx, sy)})
    if isinstance(action, DragAction):
        return action.model_copy(update={"path": [_scale(p, sx, sy) for p in action.path]})
    return action
