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
from collections.abc import Mapping
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
    MoveAction,
    Point,
    ResponseAction,
    ScrollAction,
    TypeAction,
    WaitAction,
)
from hud_gym.keys import KEYS
from hud_gym.spaces.encoding import FIELD_ENCODERS, empty_encoding, encode_point
from hud_gym.spaces.layout import BUTTONS, ActionSpaceConfig

__all__ = ["decode", "encode", "is_encoded_action"]


def encode(action: CLAAction, config: ActionSpaceConfig) -> dict[str, Any]:
    """Encode a CLA action as an element of ``make_action_space(config)``.

    Raises:
        ActionError: the action's type is not in the space, or a field exceeds a limit of
            ``config`` (the message names the field and the limit).
    """
    action_type = ActionType(action.type)
    if action_type not in config.action_types:
        raise ActionError(f"action type {action_type.value!r} is not in this action space")
    encoded = empty_encoding(config)
    encoded["action_type"] = config.action_types.index(action_type)
    if isinstance(action, (ClickAction, ScrollAction, MoveAction)) and action.point is not None:
        top = config.screen_max.astype(np.int64)
        encoded["point"] = encode_point("point", action.point, np.zeros(2, np.int64), top)
        encoded["has_point"] = 1
    for action_class, encode_fields in FIELD_ENCODERS:
        if isinstance(action, action_class):
            encode_fields(action, config, encoded)
            break
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
