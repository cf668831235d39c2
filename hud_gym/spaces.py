"""Gymnasium spaces of hud-gym: the CLA action ``Dict`` and the shared observation ``Dict``.

Every shape is fixed, so any vector env can batch the spaces. The action ``Dict`` encodes every
CLA action: an ``action_type`` index plus the fields each type needs. :func:`encode` and
:func:`decode` are exact inverses for every valid action within the limits of
:class:`ActionSpaceConfig` (``decode(encode(a)) == a``), and every ``action_space.sample()`` decodes
to a valid action.

Action ``Dict`` keys (W, H = screen width and height; limits from the config):

=================  ============================================  ======================================
key                space                                         used by
=================  ============================================  ======================================
``action_type``    ``Discrete(len(action_types))``               all
``point``          ``Box(0, [W-1, H-1], (2,), int32)``           click, scroll, move
``has_point``      ``Discrete(2)``                               click, scroll, move (0 = no point)
``offset``         ``Box(-[W-1, H-1], [W-1, H-1], (2,), int32)`` move
``has_offset``     ``Discrete(2)``                               move
``scroll``         ``Box(-max_scroll, max_scroll, (2,), int32)`` scroll (pixels, + = right/down)
``has_scroll``     ``Discrete(2)``                               scroll
``button``         ``Discrete(5)``                               click
``pattern``        ``Box(0, max_delay_ms, (max_pattern,))``      click, drag (delays in ms)
``pattern_len``    ``Discrete(max_pattern + 1)``                 click, drag (0 = no pattern)
``keys``           ``MultiDiscrete([len(KEYS)] * max_keys)``     press, keydown, keyup
``keys_len``       ``Discrete(max_keys)``                        press, keydown, keyup (length - 1)
``hold_keys``      ``MultiDiscrete([len(KEYS)] * max_hold_keys)`` click, scroll, drag
``hold_keys_len``  ``Discrete(max_hold_keys + 1)``               click, scroll, drag (0 = none)
``text``           ``Text(max_text_length, charset)``            type, response, custom (action name)
``enter_after``    ``Discrete(2)``                               type
``time``           ``Box(0, max_wait_ms, (1,), int32)``          wait (ms)
``path``           ``Box(0, [W-1, H-1], (max_drag_points, 2))``  drag
``path_len``       ``Discrete(max_drag_points - 1)``             drag (length - 2)
``args``           ``Text(max_args_length, charset)``            custom (a JSON object, or empty)
=================  ============================================  ======================================

Slots past a ``*_len`` are ignored by :func:`decode` and written as zeros by :func:`encode`.
``reasoning`` and ``logs`` are agent annotations and are not part of the space.

Example:
    >>> from hud_gym.actions import ClickAction
    >>> config = ActionSpaceConfig(width=1280, height=720)
    >>> encoded = encode(ClickAction(point=(10, 20)), config)
    >>> decode(encoded, config) == ClickAction(point=(10, 20))
    True
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, get_args

import numpy as np
from gymnasium import spaces

from hud_gym.actions import (
    ACTION_CLASSES,
    ActionError,
    ActionType,
    Button,
    ClickAction,
    CLAAction,
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

__all__ = [
    "BUTTONS",
    "TEXT_CHARSET",
    "UnicodeText",
    "ActionSpaceConfig",
    "decode",
    "encode",
    "make_action_space",
    "make_observation_space",
    "sanitize_text",
    "text_space",
]

BUTTONS: tuple[str, ...] = get_args(Button)

REPLACEMENT_CHAR = "\ufffd"


@lru_cache(maxsize=1)
def _charset() -> frozenset[str]:
    chars = {chr(cp) for cp in range(sys.maxunicode if sys.maxunicode < 0xFFFF else 0xFFFF) if chr(cp).isprintable()}
    chars.update("\n\t")
    chars.discard("")
    return frozenset(chars)


TEXT_CHARSET: frozenset[str] = _charset()
"""Every printable character of the Basic Multilingual Plane, plus newline and tab (about 55k
characters). Anything else (emoji, control characters, surrogates) is replaced by U+FFFD."""


def sanitize_text(text: str, max_length: int) -> str:
    """Return ``text`` made to fit a :func:`text_space` of ``max_length``.

    ``\\r\\n`` and lone ``\\r`` become ``\\n``, characters outside :data:`TEXT_CHARSET` become U+FFFD,
    and the result is cut to ``max_length`` characters.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not all(c in TEXT_CHARSET for c in text):
        text = "".join(c if c in TEXT_CHARSET else REPLACEMENT_CHAR for c in text)
    return text[:max_length]


@lru_cache(maxsize=1)
def _charset_tables() -> tuple[frozenset[str], tuple[str, ...], dict[str, np.int32], str]:
    """Gymnasium ``Text``'s lookup tables for :data:`TEXT_CHARSET`, built once per process."""
    template = spaces.Text(max_length=1, min_length=0, charset=TEXT_CHARSET)
    return template._char_set, template._char_list, template._char_index, template._char_str


class UnicodeText(spaces.Text):
    """Gymnasium's ``Text`` over :data:`TEXT_CHARSET`, admitting the empty string.

    Behaves exactly as ``spaces.Text(max_length, min_length=0, charset=TEXT_CHARSET)`` (Gymnasium
    dispatches on ``Text`` for it), but every instance shares one copy of the charset's lookup
    tables: ``Text`` builds a 55k-entry index per instance, which made an env take ~0.1 s to
    construct and a vector env's ``batch_space`` (a deep copy per sub-env) far more.
    """

    def __init__(self, max_length: int, *, min_length: int = 0, seed: int | np.random.Generator | None = None) -> None:
        if min_length < 0 or min_length > max_length:
            raise ValueError(f"need 0 <= min_length <= max_length, got {min_length} and {max_length}")
        self.min_length = int(min_length)
        self.max_length = int(max_length)
        self._char_set, self._char_list, self._char_index, self._char_str = _charset_tables()
        spaces.Space.__init__(self, dtype=str, seed=seed)

    def __deepcopy__(self, memo: dict[int, Any]) -> UnicodeText:
        copied = UnicodeText(self.max_length, min_length=self.min_length)
        copied._np_random = deepcopy(self._np_random, memo)
        return copied

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for table in ("_char_set", "_char_list", "_char_index", "_char_str"):
            state.pop(table, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._char_set, self._char_list, self._char_index, self._char_str = _charset_tables()

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length}, charset=<{len(self._char_set)} printable BMP chars>)"


def text_space(max_length: int) -> UnicodeText:
    """A ``Text`` space that admits the empty string and any :data:`TEXT_CHARSET` character."""
    return UnicodeText(max_length)


@dataclass(frozen=True)
class ActionSpaceConfig:
    """Limits that fix the shapes of the action ``Dict``.

    Attributes:
        width: screen (or observation) width in pixels; points lie in ``[0, width - 1]``.
        height: screen (or observation) height in pixels.
        action_types: the action types the space can express, in index order.
        max_text_length: longest ``type``/``response`` text and custom action name.
        max_keys: most keys in one ``press``/``keydown``/``keyup``.
        max_hold_keys: most ``hold_keys``.
        max_pattern: longest click/drag ``pattern``.
        max_delay_ms: largest delay in a ``pattern``.
        max_drag_points: most points in a drag ``path`` (at least 2).
        max_scroll: largest scroll amount per axis, in pixels.
        max_wait_ms: longest ``wait``.
        max_args_length: longest JSON encoding of ``CustomAction.args``.
    """

    width: int = 1280
    height: int = 720
    action_types: tuple[ActionType, ...] = field(default_factory=lambda: tuple(ActionType))
    max_text_length: int = 512
    max_keys: int = 4
    max_hold_keys: int = 3
    max_pattern: int = 3
    max_delay_ms: int = 2000
    max_drag_points: int = 16
    max_scroll: int = 5000
    max_wait_ms: int = 60_000
    max_args_length: int = 1024

    def __post_init__(self) -> None:
        if self.width < 1 or self.height < 1:
            raise ValueError(f"screen size must be positive, got {self.width}x{self.height}")
        if self.max_drag_points < 2:
            raise ValueError("max_drag_points must be at least 2")
        if not self.action_types:
            raise ValueError("action_types must not be empty")
        object.__setattr__(self, "action_types", tuple(ActionType(t) for t in self.action_types))

    @property
    def screen_max(self) -> np.ndarray:
        """The largest point, ``[width - 1, height - 1]``."""
        return np.array([self.width - 1, self.height - 1], dtype=np.int32)


def make_action_space(config: ActionSpaceConfig, seed: int | None = None) -> spaces.Dict:
    """Build the action ``Dict`` described in this module's docstring."""
    n_keys = len(KEYS)
    top = config.screen_max
    return spaces.Dict(
        {
            "action_type": spaces.Discrete(len(config.action_types)),
            "point": spaces.Box(np.zeros(2, np.int32), top, (2,), np.int32),
            "has_point": spaces.Discrete(2),
            "offset": spaces.Box(-top, top, (2,), np.int32),
            "has_offset": spaces.Discrete(2),
            "scroll": spaces.Box(-config.max_scroll, config.max_scroll, (2,), np.int32),
            "has_scroll": spaces.Discrete(2),
            "button": spaces.Discrete(len(BUTTONS)),
            "pattern": spaces.Box(0, config.max_delay_ms, (config.max_pattern,), np.int32),
            "pattern_len": spaces.Discrete(config.max_pattern + 1),
            "keys": spaces.MultiDiscrete([n_keys] * config.max_keys),
            "keys_len": spaces.Discrete(config.max_keys),
            "hold_keys": spaces.MultiDiscrete([n_keys] * config.max_hold_keys),
            "hold_keys_len": spaces.Discrete(config.max_hold_keys + 1),
            "text": text_space(config.max_text_length),
            "enter_after": spaces.Discrete(2),
            "time": spaces.Box(0, config.max_wait_ms, (1,), np.int32),
            "path": spaces.Box(
                np.zeros((config.max_drag_points, 2), np.int32),
                np.tile(top, (config.max_drag_points, 1)),
                (config.max_drag_points, 2),
                np.int32,
            ),
            "path_len": spaces.Discrete(config.max_drag_points - 1),
            "args": text_space(config.max_args_length),
        },
        seed=seed,
    )


def make_observation_space(width: int, height: int, max_text_length: int) -> spaces.Dict:
    """The observation ``Dict`` shared by every gym type: an RGB screenshot and a text."""
    return spaces.Dict(
        {
            "screenshot": spaces.Box(0, 255, (height, width, 3), np.uint8),
            "text": text_space(max_text_length),
        }
    )


# ----------------------------------------------------------------------------- encoding


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
    return cls()


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


# Registers the shared-memory reader for UnicodeText (text observations through AsyncVectorEnv).
from hud_gym import shared_memory as _shared_memory  # noqa: E402,F401
