"""pyautogui-style calls (``click(x=10, y=20)``) as CLA action dicts; used by
:mod:`hud_gym.agents.reply_parsing`, which finds and parses the calls.

Each converter takes the call's literal positional and keyword arguments and the parser (for the
last pointer position) and returns CLA dicts in the image's frame. A scroll click is
:data:`~hud_gym.adapters.common.WHEEL_CLICK_PX` pixels; pyautogui's ``scroll`` is positive up.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from hud_gym.adapters.common import WHEEL_CLICK_PX

__all__ = ["CALLS", "call_to_cla"]

Action = dict[str, Any]
DEFAULT_SCROLL_CLICKS = 3
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_POINT_KEYS = ("point", "start_box", "coordinate", "coordinates", "position", "box")


def _num(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{what} must be a number, got {value!r}")
    return round(value)


def _xy(value: Any, what: str) -> tuple[int, int]:
    """A point from ``(x, y)``, ``[x, y]``, ``{"x", "y"}``, ``'(x,y)'`` or a box (its centre)."""
    if isinstance(value, dict) and {"x", "y"} <= set(value):
        value = (value["x"], value["y"])
    if isinstance(value, str):
        value = [float(n) for n in _NUMBER.findall(value)]
    if isinstance(value, (list, tuple)) and len(value) == 4:
        value = ((value[0] + value[2]) / 2, (value[1] + value[3]) / 2)
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise ValueError(f"{what} must be a point (x, y), got {value!r}")
    return _num(value[0], what), _num(value[1], what)


def _point(args: list[Any], kwargs: dict[str, Any], parser: Any, *, required: bool = True) -> dict[str, int] | None:
    if "x" in kwargs or "y" in kwargs:
        x, y = _num(kwargs.get("x"), "x"), _num(kwargs.get("y"), "y")
    elif key := next((k for k in _POINT_KEYS if k in kwargs), None):
        x, y = _xy(kwargs[key], key)
    elif len(args) >= 2 and not isinstance(args[0], (list, tuple, str, dict)):
        x, y = _num(args[0], "x"), _num(args[1], "y")
    elif args and isinstance(args[0], (list, tuple, str, dict)):
        x, y = _xy(args[0], "the point")
    elif required:
        raise ValueError("a point (x, y) is needed")
    else:
        return None
    parser.position = (x, y)
    return {"x": x, "y": y}


def _click(button: str = "left", clicks: int = 1) -> Callable[..., list[Action]]:
    def convert(args: list[Any], kwargs: dict[str, Any], parser: Any) -> list[Action]:
        count = _num(kwargs.get("clicks", clicks), "clicks")
        action: Action = {"type": "click", "button": kwargs.get("button", button)}
        if action["button"] in ("primary", "secondary"):
            action["button"] = "left" if action["button"] == "primary" else "right"
        point = _point(args, kwargs, parser, required=False)
        if point is not None:
            action["point"] = point
        if count > 1:
            action["pattern"] = [100] * (count - 1)
        return [action]

    return convert


def _move(args: list[Any], kwargs: dict[str, Any], parser: Any) -> list[Action]:
    return [{"type": "move", "point": _point(args, kwargs, parser)}]


def _move_rel(args: list[Any], kwargs: dict[str, Any], parser: Any) -> list[Action]:
    dx = _num(kwargs.get("xOffset", args[0] if args else 0), "xOffset")
    dy = _num(kwargs.get("yOffset", args[1] if len(args) > 1 else 0), "yOffset")
    return [{"type": "move", "offset": {"x": dx, "y": dy}}]


def _drag(args: list[Any], kwargs: dict[str, Any], parser: Any) -> list[Action]:
    if "start_box" in kwargs or "start" in kwargs:
        start, end = (
            _xy(kwargs.get("start_box", kwargs.get("start")), "start"),
            _xy(kwargs.get("end_box", kwargs.get("end")), "end"),
        )
    elif {"start_x", "start_y", "end_x", "end_y"} <= set(kwargs):
        start = (_num(kwargs["start_x"], "start_x"), _num(kwargs["start_y"], "start_y"))
        end = (_num(kwargs["end_x"], "end_x"), _num(kwargs["end_y"], "end_y"))
    elif len(args) == 4:
        start, end = (_num(args[0], "x1"), _num(args[1], "y1")), (_num(args[2], "x2"), _num(args[3], "y2"))
    elif len(args) == 2 and parser.position is not None:  # pyautogui.drag(xOffset, yOffset): relative
        start = parser.position
        end = (start[0] + _num(args[0], "xOffset"), start[1] + _num(args[1], "yOffset"))
    else:
        raise ValueError("drag needs (x1, y1, x2, y2), start_box/end_box, or an offset after a known position")
    parser.position = end
    return [{"type": "drag", "path": [{"x": start[0], "y": start[1]}, {"x": end[0], "y": end[1]}]}]


def _drag_to(args: list[Any], kwargs: dict[str, Any], parser: Any) -> list[Action]:
    start = parser.position
    if start is None:
        raise ValueError("dragTo needs a known start: move or click first")
    end = _point(args, kwargs, parser)
    assert end is not None
    return [{"type": "drag", "path": [{"x": start[0], "y": start[1]}, end]}]


def _scroll(horizontal: bool) -> Callable[..., list[Action]]:
    def convert(args: list[Any], kwargs: dict[str, Any], parser: Any) -> list[Action]:
        direction = kwargs.get("direction")
        if direction is not None:
            clicks = _num(kwargs.get("amount", kwargs.get("clicks", DEFAULT_SCROLL_CLICKS)), "amount")
            vectors = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}
            if direction not in vectors:
                raise ValueError(f"direction must be up, down, left or right, got {direction!r}")
            dx, dy = (v * clicks * WHEEL_CLICK_PX for v in vectors[direction])
            point = _point(args, kwargs, parser, required=False)
        else:
            clicks = _num(kwargs.get("clicks", args[0] if args else None), "clicks")
            point = _point(args[1:], kwargs, parser, required=False)
            dx, dy = (clicks * WHEEL_CLICK_PX, 0) if horizontal else (0, -clicks * WHEEL_CLICK_PX)
        action: Action = {"type": "scroll", "scroll": {"x": dx, "y": dy}}
        if point is not None:
            action["point"] = point
        return [action]

    return convert


def _text(args: list[Any], kwargs: dict[str, Any], parser: Any) -> list[Action]:
    text = next((kwargs[k] for k in ("text", "message", "content", "string") if k in kwargs), args[0] if args else None)
    if isinstance(text, list):  # typewrite(['a', 'enter']) presses keys
        return [{"type": "press", "keys": [k]} for k in text]
    if not isinstance(text, str):
        raise ValueError(f"the text must be a string, got {text!r}")
    return [{"type": "type", "text": text}]


def _keys(args: list[Any], kwargs: dict[str, Any]) -> list[str]:
    keys = list(args) or [kwargs.get("keys", kwargs.get("key"))]
    if len(keys) == 1 and isinstance(keys[0], (list, tuple)):
        keys = list(keys[0])
    if len(keys) == 1 and isinstance(keys[0], str) and len(keys[0]) > 1 and re.search(r"[ +]", keys[0].strip()):
        keys = [k for k in re.split(r"[ +]+", keys[0].strip()) if k]
    if not keys or not all(isinstance(k, str) and k for k in keys):
        raise ValueError(f"key names must be strings, got {keys!r}")
    return keys


def _press(args: list[Any], kwargs: dict[str, Any], parser: Any) -> list[Action]:
    if args and isinstance(args[0], str) and len(args[0]) > 1 and "+" in args[0]:  # press('ctrl+c'): a chord
        return _hotkey(args[:1], kwargs, parser)
    keys = list(args[0]) if args and isinstance(args[0], (list, tuple)) else _keys(args[:1], kwargs)
    presses = _num(kwargs.get("presses", 1), "presses")
    return [{"type": "press", "keys": [k]} for k in keys] * max(1, presses)


def _hotkey(args: list[Any], kwargs: dict[str, Any], parser: Any) -> list[Action]:
    return [{"type": "press", "keys": _keys(args, kwargs)}]


def _key_event(kind: str) -> Callable[..., list[Action]]:
    def convert(args: list[Any], kwargs: dict[str, Any], parser: Any) -> list[Action]:
        return [{"type": kind, "keys": _keys(args, kwargs)}]

    return convert


def _wait(args: list[Any], kwargs: dict[str, Any], parser: Any) -> list[Action]:
    seconds = kwargs.get("seconds", kwargs.get("duration", args[0] if args else 1))
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds <= 300:
        raise ValueError(f"the wait must be 0 to 300 seconds, got {seconds!r}")
    return [{"type": "wait", "time": round(seconds * 1000)}]


def _answer(args: list[Any], kwargs: dict[str, Any], parser: Any) -> list[Action]:
    text = next(
        (kwargs[k] for k in ("text", "content", "answer", "response", "message") if k in kwargs),
        args[0] if args else "",
    )
    return [{"type": "response", "text": str(text)}]


def _screenshot(args: list[Any], kwargs: dict[str, Any], parser: Any) -> list[Action]:
    return [{"type": "screenshot"}]


CALLS: dict[str, Callable[..., list[Action]]] = {
    "click": _click(),
    "leftClick": _click(),
    "left_click": _click(),
    "doubleClick": _click(clicks=2),
    "double_click": _click(clicks=2),
    "tripleClick": _click(clicks=3),
    "triple_click": _click(clicks=3),
    "rightClick": _click("right"),
    "right_click": _click("right"),
    "middleClick": _click("middle"),
    "middle_click": _click("middle"),
    "moveTo": _move,
    "move_to": _move,
    "mouse_move": _move,
    "hover": _move,
    "move": _move,
    "moveRel": _move_rel,
    "move_rel": _move_rel,
    "dragTo": _drag_to,
    "drag_to": _drag_to,
    "drag": _drag,
    "left_click_drag": _drag,
    "scroll": _scroll(False),
    "vscroll": _scroll(False),
    "hscroll": _scroll(True),
    "write": _text,
    "typewrite": _text,
    "type": _text,
    "type_text": _text,
    "press": _press,
    "hotkey": _hotkey,
    "keyDown": _key_event("keydown"),
    "key_down": _key_event("keydown"),
    "keyUp": _key_event("keyup"),
    "key_up": _key_event("keyup"),
    "wait": _wait,
    "sleep": _wait,
    "screenshot": _screenshot,
    "answer": _answer,
    "finished": _answer,
    "finish": _answer,
    "response": _answer,
    "respond": _answer,
    "done": _answer,
}
"""Call names (with or without a ``pyautogui.`` prefix) and their converters."""


def call_to_cla(name: str, args: list[Any], kwargs: dict[str, Any], parser: Any) -> list[Action]:
    """The CLA dicts of the call ``name(*args, **kwargs)``.

    Raises:
        ValueError: a missing or malformed argument (the message names it).
    """
    return CALLS[name](args, kwargs, parser)
