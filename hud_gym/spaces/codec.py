"""Encoding CLA actions as elements of the action ``Dict`` and back: :func:`encode` and
:func:`decode` are exact inverses within the limits of the :class:`ActionSpaceConfig`
(``decode(encode(a)) == a``), and every ``action_space.sample()`` decodes to a valid action.

Example:
    >>> from hud_gym.actions import ClickAction
    >>> config = ActionSpaceConfig(width=1280, height=720)
    >>> decode(encode(ClickAction(point=(10, 20)), config), config) == ClickAction(point=(10, 20))
    True
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hud_gym.actions import (
    ACTION_CLASSES,
    ActionError,
    ActionType,
    CLAAction,
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
from hud_gym.keys import KEY_INDEX, KEYS
from hud_gym.spaces.layout import BUTTONS, ActionSpaceConfig
from hud_gym.spaces.text import TEXT_CHARSET

__all__ = ["decode", "encode", "is_encoded_action"]


def _empty(config: ActionSpaceConfig) -> dict[str, Any]:
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


def _encode_point(name: str, point: Point, low: np.ndarray, high: np.ndarray) -> np.ndarray:
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


def encode(action: CLAAction, config: ActionSpaceConfig) -> dict[str, Any]:
    """Encode a CLA action as an element of ``make_action_space(config)``.

    Raises:
        ActionError: the action's type is not in the space, or a field exceeds a limit of
            ``config`` (the message names the field and the limit).
    """
    action_type = ActionType(action.type)
    if action_type not in config.action_types:
        raise ActionError(f"action type {action_type.value!r} is not in this action space")
    encoded = _empty(config)
    encoded["action_type"] = config.action_types.index(action_type)
    zero = np.zeros(2, np.int64)
    top = config.screen_max.astype(np.int64)
    if isinstance(action, (ClickAction, ScrollAction, MoveAction)) and action.point is not None:
        encoded["point"] = _encode_point("point", action.point, zero, top)
        encoded["has_point"] = 1
    if isinstance(action, ClickAction):
        encoded["button"] = BUTTONS.index(action.button)
        _encode_pattern(action.pattern or [], config, encoded)
        _encode_hold_keys(action.hold_keys, config, encoded)
    elif isinstance(action, (PressAction, KeyDownAction, KeyUpAction)):
        _encode_keys("keys", action.keys, config.max_keys, encoded["keys"])
        encoded["keys_len"] = len(action.keys) - 1
    elif isinstance(action, TypeAction):
        encoded["text"] = _check_text("text", action.text, config.max_text_length)
        encoded["enter_after"] = int(action.enter_after)
    elif isinstance(action, ScrollAction):
        if action.scroll is not None:
            limit = np.full(2, config.max_scroll, np.int64)
            encoded["scroll"] = _encode_point("scroll", action.scroll, -limit, limit)
            encoded["has_scroll"] = 1
        _encode_hold_keys(action.hold_keys, config, encoded)
    elif isinstance(action, MoveAction):
        if action.offset is not None:
            encoded["offset"] = _encode_point("offset", action.offset, -top, top)
            encoded["has_offset"] = 1
    elif isinstance(action, WaitAction):
        if action.time > config.max_wait_ms:
            raise ActionError(f"time: {action.time} ms is more than the limit of {config.max_wait_ms} ms")
        encoded["time"][0] = action.time
    elif isinstance(action, DragAction):
        if len(action.path) > config.max_drag_points:
            raise ActionError(f"path: {len(action.path)} points is more than the limit of {config.max_drag_points}")
        for i, p in enumerate(action.path):
            encoded["path"][i] = _encode_point(f"path[{i}]", p, zero, top)
        encoded["path_len"] = len(action.path) - 2
        _encode_pattern(action.pattern or [], config, encoded)
        _encode_hold_keys(action.hold_keys, config, encoded)
    elif isinstance(action, ResponseAction):
        encoded["text"] = _check_text("text", action.text, config.max_text_length)
    elif isinstance(action, CustomAction):
        encoded["text"] = _check_text("action", action.action, config.max_text_length)
        if action.args is not None:
            try:
                args_json = json.dumps(action.args, ensure_ascii=False, allow_nan=False)
            except (TypeError, ValueError) as exc:
                raise ActionError(f"args: not JSON-serialisable ({exc})") from None
            if not all(c in TEXT_CHARSET for c in args_json):
                args_json = json.dumps(action.args, ensure_ascii=True, allow_nan=False)
            encoded["args"] = _check_text("args", args_json, config.max_args_length)
    return encoded


def _int(value: Any) -> int:
    return int(np.asarray(value).reshape(-1)[0])


def _point(value: Any) -> Point:
    x, y = np.asarray(value).reshape(-1)[:2]
    return Point(x=int(x), y=int(y))


def _keys_from(value: Any, length: int) -> list[str]:
    indices = np.asarray(value).reshape(-1)[:length]
    bad = [int(i) for i in indices if not 0 <= int(i) < len(KEYS)]
    if bad:
        raise ActionError(f"keys: index {bad[0]} is not in [0, {len(KEYS) - 1}]")
    return [KEYS[int(i)] for i in indices]


def decode(encoded: Mapping[str, Any], config: ActionSpaceConfig) -> CLAAction:
    """Decode an element of ``make_action_space(config)`` into a CLA action.

    Raises:
        ActionError: a field is missing or out of range (the message names it).
    """
    try:
        return _decode(encoded, config)
    except KeyError as exc:
        raise ActionError(f"encoded action has no {exc.args[0]!r} field") from None
    except (IndexError, ValueError, TypeError, ArithmeticError) as exc:
        if isinstance(exc, ActionError):
            raise
        raise ActionError(f"encoded action is malformed: {type(exc).__name__}: {exc}") from None


def _decode(encoded: Mapping[str, Any], config: ActionSpaceConfig) -> CLAAction:
    index = _int(encoded["action_type"])
    if not 0 <= index < len(config.action_types):
        raise ActionError(f"action_type: {index} is not in [0, {len(config.action_types) - 1}]")
    action_type = config.action_types[index]
    cls = ACTION_CLASSES[action_type]

    def hold_keys() -> list[str] | None:
        n = _int(encoded["hold_keys_len"])
        return _keys_from(encoded["hold_keys"], n) if n else None

    def pattern() -> list[int] | None:
        n = _int(encoded["pattern_len"])
        return [int(d) for d in np.asarray(encoded["pattern"]).reshape(-1)[:n]] if n else None

    def optional_point(flag: str, key: str) -> Point | None:
        return _point(encoded[key]) if _int(encoded[flag]) else None

    if action_type is ActionType.CLICK:
        return ClickAction(
            point=optional_point("has_point", "point"),
            button=BUTTONS[_int(encoded["button"])],
            pattern=pattern(),
            hold_keys=hold_keys(),
        )
    if action_type in (ActionType.PRESS, ActionType.KEYDOWN, ActionType.KEYUP):
        return cls(keys=_keys_from(encoded["keys"], _int(encoded["keys_len"]) + 1))  # type: ignore[call-arg]
    if action_type is ActionType.TYPE:
        return TypeAction(text=str(encoded["text"]), enter_after=bool(_int(encoded["enter_after"])))
    if action_type is ActionType.SCROLL:
        return ScrollAction(
            point=optional_point("has_point", "point"),
            scroll=optional_point("has_scroll", "scroll"),
            hold_keys=hold_keys(),
        )
    if action_type is ActionType.MOVE:
        return MoveAction(point=optional_point("has_point", "point"), offset=optional_point("has_offset", "offset"))
    if action_type is ActionType.WAIT:
        return WaitAction(time=_int(encoded["time"]))
    if action_type is ActionType.DRAG:
        n = _int(encoded["path_len"]) + 2
        path = np.asarray(encoded["path"]).reshape(-1, 2)[:n]
        return DragAction(path=[Point(x=int(x), y=int(y)) for x, y in path], pattern=pattern(), hold_keys=hold_keys())
    if action_type is ActionType.RESPONSE:
        return ResponseAction(text=str(encoded["text"]))
    if action_type is ActionType.CUSTOM:
        return CustomAction(action=str(encoded["text"]), args=_decode_args(str(encoded["args"])))
    return cls()  # type: ignore[call-arg]  # the actions without fields: their type has a default


def _decode_args(args_json: str) -> dict[str, Any] | None:
    """JSON object text to a dict; empty means no args; any other text is kept as ``{"text": ...}``."""
    if args_json == "":
        return None
    try:
        value = json.loads(args_json)
    except ValueError:
        return {"text": args_json}
    return value if isinstance(value, dict) else {"value": value}


def is_encoded_action(value: Any) -> bool:
    """True when ``value`` looks like an element of the action ``Dict`` (not a CLA dict)."""
    return isinstance(value, Mapping) and "action_type" in value and "type" not in value
