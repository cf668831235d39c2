"""Hypothesis strategies over the CLA action space (every action type and field), for the
protocol round-trip tests: cheap to execute on a QA env (short waits, small drags)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from hud_gym.actions import (
    ClickAction,
    CustomAction,
    DragAction,
    KeyDownAction,
    KeyUpAction,
    MoveAction,
    PositionFetch,
    PressAction,
    ResponseAction,
    ScreenshotFetch,
    ScrollAction,
    TypeAction,
    WaitAction,
)

coordinate = st.integers(min_value=-5000, max_value=5000)
points = st.builds(dict, x=coordinate, y=coordinate)
text = st.text(max_size=40)
keys = st.lists(
    st.sampled_from(["ctrl", "shift", "alt", "a", "z", "1", "enter", "tab", "f5", "pagedown", "space"]),
    min_size=1,
    max_size=4,
)
maybe = st.none
delays = st.lists(st.integers(min_value=0, max_value=20), max_size=3)
json_leaf = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | text
json_value = st.recursive(
    json_leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3), max_leaves=8
)
notes = maybe() | text


def _cla(cls: type, **fields: Any) -> st.SearchStrategy[Any]:
    return st.builds(cls, reasoning=notes, **fields)


by_type: dict[str, st.SearchStrategy[Any]] = {
    "click": _cla(
        ClickAction,
        point=maybe() | points,
        button=st.sampled_from(["left", "right", "middle", "back", "forward"]),
        pattern=maybe() | delays,
        hold_keys=maybe() | keys,
    ),
    "press": _cla(PressAction, keys=keys),
    "keydown": _cla(KeyDownAction, keys=keys),
    "keyup": _cla(KeyUpAction, keys=keys),
    "type": _cla(TypeAction, text=text, enter_after=st.booleans()),
    "scroll": _cla(ScrollAction, point=maybe() | points, scroll=maybe() | points, hold_keys=maybe() | keys),
    "move": _cla(MoveAction, point=maybe() | points, offset=maybe() | points),
    "wait": _cla(WaitAction, time=st.integers(min_value=0, max_value=20)),
    "drag": _cla(
        DragAction, path=st.lists(points, min_size=2, max_size=4), pattern=maybe() | delays, hold_keys=maybe() | keys
    ),
    "response": _cla(ResponseAction, text=text),
    "screenshot": _cla(ScreenshotFetch),
    "position": _cla(PositionFetch),
    "custom": _cla(
        CustomAction,
        action=st.text(min_size=1, max_size=20),
        args=maybe() | st.dictionaries(text, json_value, max_size=3),
    ),
}
"""A strategy per CLA action type (keyed by its ``type``)."""

cla_actions = st.one_of(*by_type.values())
"""Any CLA action (a model), with ``reasoning`` notes and Unicode text."""
