"""The fields of an encoded action (:func:`~hud_gym.spaces.codec.encode`): the checks of each
field against the limits of :class:`~hud_gym.spaces.layout.ActionSpaceConfig`, and each action
type's own fields (:data:`FIELD_ENCODERS`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hud_gym.actions import (
    ActionError,
    ClickAction,
    CustomAction,
    DragAction,
    KeyDownAction,
    KeyUpAction,
    MoveAction,
    Point,
    PressAction,
    ResponseAction,
    ScrollAction,
    TypeAction,
    WaitAction,
)
from hud_gym.keys import KEY_INDEX
from hud_gym.spaces.layout import BUTTONS, ActionSpaceConfig
from hud_gym.spaces.text import TEXT_CHARSET

__all__ = ["FIELD_ENCODERS", "empty_encoding", "encode_point"]


def empty_encoding(config: ActionSpaceConfig) -> dict[str, Any]:
    """An encoded action whose every field is zero (or empty)."""
    return {
        "action_type": 0,
        "point": np.zeros(2, np.int32),
        "has_point": 0,
        "offset": np.zeros(2, np.int32),
        "has_offset": 0,
        "scroll": np.zeros(2, np.int32),
        "has_scroll": 0,
        "button": 0,
        "pattern": np.zeros(config.max_pattern, np.int32),
        "pattern_len": 0,
        "keys": np.zeros(config.max_keys, np.int64),
        "keys_len": 0,
        "hold_keys": np.zeros(config.max_hold_keys, np.int64),
        "hold_keys_len": 0,
        "text": "",
        "enter_after": 0,
        "time": np.zeros(1, np.int32),
        "path": np.zeros((config.max_drag_points, 2), np.int32),
        "path_len": 0,
        "args": "",
    }


def _check_text(name: str, text: str, limit: int) -> str:
    if len(text) > limit:
        raise ActionError(f"{name}: {len(text)} characters is more than the action space's limit of {limit}")
    bad = next((c for c in text if c not in TEXT_CHARSET), None)
    if bad is not None:
        raise ActionError(f"{name}: character {bad!r} (U+{ord(bad):04X}) is outside the action space's charset")
    return text


def encode_point(name: str, point: Point, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """``point`` as an array, checked against ``[low, high]`` (``name`` in the error)."""
    value = np.array([point.x, point.y], dtype=np.int64)
    if np.any(value < low) or np.any(value > high):
        raise ActionError(f"{name}: ({point.x}, {point.y}) is outside [{low.tolist()}, {high.tolist()}]")
    return value.astype(np.int32)


def _encode_keys(name: str, keys: Sequence[str], limit: int, out: np.ndarray) -> None:
    if len(keys) > limit:
        raise ActionError(f"{name}: {len(keys)} keys is more than the action space's limit of {limit}")
    for i, key in enumerate(keys):
        out[i] = KEY_INDEX[key]


def _encode_pattern(pattern: Sequence[int], config: ActionSpaceConfig, encoded: dict[str, Any]) -> None:
    if len(pattern) > config.max_pattern:
        raise ActionError(f"pattern: {len(pattern)} delays is more than the limit of {config.max_pattern}")
    if any(d > config.max_delay_ms for d in pattern):
        raise ActionError(f"pattern: a delay above the limit of {config.max_delay_ms} ms")
    encoded["pattern"][: len(pattern)] = pattern
    encoded["pattern_len"] = len(pattern)


def _encode_hold_keys(hold_keys: Sequence[str] | None, config: ActionSpaceConfig, encoded: dict[str, Any]) -> None:
    if hold_keys:
        _encode_keys("hold_keys", hold_keys, config.max_hold_keys, encoded["hold_keys"])
        encoded["hold_keys_len"] = len(hold_keys)


def _encode_click(action: ClickAction, config: ActionSpaceConfig, encoded: dict[str, Any]) -> None:
    encoded["button"] = BUTTONS.index(action.button)
    _encode_pattern(action.pattern or [], config, encoded)
    _encode_hold_keys(action.hold_keys, config, encoded)


def _encode_press(
    action: PressAction | KeyDownAction | KeyUpAction, config: ActionSpaceConfig, encoded: dict[str, Any]
) -> None:
    _encode_keys("keys", action.keys, config.max_keys, encoded["keys"])
    encoded["keys_len"] = len(action.keys) - 1


def _encode_type(action: TypeAction, config: ActionSpaceConfig, encoded: dict[str, Any]) -> None:
    encoded["text"] = _check_text("text", action.text, config.max_text_length)
    encoded["enter_after"] = int(action.enter_after)


def _encode_scroll(action: ScrollAction, config: ActionSpaceConfig, encoded: dict[str, Any]) -> None:
    if action.scroll is not None:
        limit = np.full(2, config.max_scroll, np.int64)
        encoded["scroll"] = encode_point("scroll", action.scroll, -limit, limit)
        encoded["has_scroll"] = 1
    _encode_hold_keys(action.hold_keys, config, encoded)


def _encode_move(action: MoveAction, config: ActionSpaceConfig, encoded: dict[str, Any]) -> None:
    if action.offset is not None:
        top = config.screen_max.astype(np.int64)
        encoded["offset"] = encode_point("offset", action.offset, -top, top)
        encoded["has_offset"] = 1


def _encode_wait(action: WaitAction, config: ActionSpaceConfig, encoded: dict[str, Any]) -> None:
    if action.time > config.max_wait_ms:
        raise ActionError(f"time: {action.time} ms is more than the limit of {config.max_wait_ms} ms")
    encoded["time"][0] = action.time


def _encode_drag(action: DragAction, config: ActionSpaceConfig, encoded: dict[str, Any]) -> None:
    if len(action.path) > config.max_drag_points:
        raise ActionError(f"path: {len(action.path)} points is more than the limit of {config.max_drag_points}")
    zero, top = np.zeros(2, np.int64), config.screen_max.astype(np.int64)
    for i, p in enumerate(action.path):
        encoded["path"][i] = encode_point(f"path[{i}]", p, zero, top)
    encoded["path_len"] = len(action.path) - 2
    _encode_pattern(action.pattern or [], config, encoded)
    _encode_hold_keys(action.hold_keys, config, encoded)


def _encode_response(action: ResponseAction, config: ActionSpaceConfig, encoded: dict[str, Any]) -> None:
    encoded["text"] = _check_text("text", action.text, config.max_text_length)


def _encode_custom(action: CustomAction, config: ActionSpaceConfig, encoded: dict[str, Any]) -> None:
    encoded["text"] = _check_text("action", action.action, config.max_text_length)
    if action.args is None:
        return
    try:
        args_json = json.dumps(action.args, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ActionError(f"args: not JSON-serialisable ({exc})") from None
    if not all(c in TEXT_CHARSET for c in args_json):
        args_json = json.dumps(action.args, ensure_ascii=True, allow_nan=False)
    encoded["args"] = _check_text("args", args_json, config.max_args_length)


FIELD_ENCODERS: tuple[tuple[type | tuple[type, ...], Callable[[Any, ActionSpaceConfig, dict[str, Any]], None]], ...] = (
    (ClickAction, _encode_click),
    ((PressAction, KeyDownAction, KeyUpAction), _encode_press),
    (TypeAction, _encode_type),
    (ScrollAction, _encode_scroll),
    (MoveAction, _encode_move),
    (WaitAction, _encode_wait),
    (DragAction, _encode_drag),
    (ResponseAction, _encode_response),
    (CustomAction, _encode_custom),
)
"""Each action type's own fields (after the point, which clicks, scrolls and moves share)."""
