"""CLA action models and their parsing (hud_gym.actions)."""

from __future__ import annotations

import pydantic
import pytest

from hud_gym.actions import (
    ACTION_CLASSES,
    ActionError,
    ActionType,
    ClickAction,
    CustomAction,
    DragAction,
    KeyDownAction,
    KeyUpAction,
    MoveAction,
    Point,
    PositionFetch,
    PressAction,
    ResponseAction,
    ScreenshotFetch,
    ScrollAction,
    TypeAction,
    WaitAction,
    parse_action,
    parse_actions,
)

# One valid dict per CLA type, with the model it must validate to.
VALID = [
    (
        {"type": "click", "point": {"x": 10, "y": 20}, "button": "right", "pattern": [100], "hold_keys": ["Shift"]},
        ClickAction(point=Point(x=10, y=20), button="right", pattern=[100], hold_keys=["shift"]),
    ),
    ({"type": "click"}, ClickAction()),
    ({"type": "press", "keys": ["Control", "A"]}, PressAction(keys=["ctrl", "a"])),
    ({"type": "keydown", "keys": ["shift"]}, KeyDownAction(keys=["shift"])),
    ({"type": "keyup", "keys": ["Shift"]}, KeyUpAction(keys=["shift"])),
    ({"type": "type", "text": "hello ü 😀", "enter_after": True}, TypeAction(text="hello ü 😀", enter_after=True)),
    (
        {"type": "scroll", "point": [5, 6], "scroll": {"x": 0, "y": -300}, "hold_keys": ["ctrl"]},
        ScrollAction(point=Point(x=5, y=6), scroll=Point(x=0, y=-300), hold_keys=["ctrl"]),
    ),
    ({"type": "move", "offset": [-3, 4]}, MoveAction(offset=Point(x=-3, y=4))),
    ({"type": "move", "point": {"x": 1, "y": 2}}, MoveAction(point=Point(x=1, y=2))),
    ({"type": "wait", "time": 250}, WaitAction(time=250)),
    (
        {"type": "drag", "path": [[0, 0], {"x": 5, "y": 5}, (9, 9)], "pattern": [10]},
        DragAction(path=[Point(x=0, y=0), Point(x=5, y=5), Point(x=9, y=9)], pattern=[10]),
    ),
    ({"type": "response", "text": "Paris"}, ResponseAction(text="Paris")),
    ({"type": "screenshot"}, ScreenshotFetch()),
    ({"type": "position"}, PositionFetch()),
    (
        {"type": "custom", "action": "goto", "args": {"url": "https://example.com"}},
        CustomAction(action="goto", args={"url": "https://example.com"}),
    ),
    ({"type": "custom", "action": "submit"}, CustomAction(action="submit")),
]


def test_every_type_is_covered():
    covered = {model.type for _, model in VALID}
    assert covered == {t.value for t in ActionType}
    assert set(ACTION_CLASSES) == set(ActionType)
    assert all(cls.model_fields["type"].default == t.value for t, cls in ACTION_CLASSES.items())


@pytest.mark.parametrize(("data", "expected"), VALID, ids=[d["type"] for d, _ in VALID])
def test_dict_form_validates(data, expected):
    action = parse_action(data)
    assert type(action) is type(expected)
    assert action == expected


@pytest.mark.parametrize(("data", "expected"), VALID, ids=[d["type"] for d, _ in VALID])
def test_model_form_validates_and_round_trips(data, expected):
    # a model passes through parse_action unchanged
    assert parse_action(expected) is expected
    # and its dump parses back to an equal model (the canonical form is a fixed point)
    assert parse_action(expected.model_dump()) == expected
    assert parse_action(expected.model_dump(mode="json")) == expected


def test_reasoning_and_logs_are_kept():
    action = parse_action({"type": "response", "text": "x", "reasoning": "because", "logs": {"step": 1}})
    assert action.reasoning == "because"
    assert action.logs == {"step": 1}


# ----------------------------------------------------------------------------- canonicalisation


def test_empty_pattern_and_hold_keys_become_none():
    click = ClickAction(pattern=[], hold_keys=[])
    assert click.pattern is None and click.hold_keys is None
    drag = parse_action({"type": "drag", "path": [[0, 0], [1, 1]], "pattern": [], "hold_keys": []})
    assert drag.pattern is None and drag.hold_keys is None
    scroll = parse_action({"type": "scroll", "hold_keys": []})
    assert scroll.hold_keys is None
    assert ClickAction(pattern=[]) == ClickAction()


def test_enter_after_none_is_false():
    assert TypeAction(text="x", enter_after=None).enter_after is False
    assert parse_action({"type": "type", "text": "x", "enter_after": None}) == TypeAction(text="x")


def test_legacy_wheel_button_is_middle():
    assert ClickAction(button="wheel").button == "middle"
    assert parse_action({"type": "click", "button": "wheel"}) == ClickAction(button="middle")


def test_points_from_tuples_and_lists():
    assert ClickAction(point=(3, 4)).point == Point(x=3, y=4)
    assert MoveAction(point=[3, 4], offset=(-1, -2)).offset == Point(x=-1, y=-2)
    assert ScrollAction(scroll=(0, 100)).scroll == Point(x=0, y=100)
    assert DragAction(path=[(1, 2), (3, 4)]).path == [Point(x=1, y=2), Point(x=3, y=4)]


def test_keys_are_normalised_and_a_single_string_is_one_key():
    assert PressAction(keys=["Return"]).keys == ["enter"]
    assert PressAction(keys="PageDown").keys == ["pagedown"]
    assert ClickAction(hold_keys=["cmd"]).hold_keys == ["command"]
    assert parse_action({"type": "press", "keys": ["ArrowLeft"]}).keys == ["left"]


def test_point_is_frozen_and_strict():
    point = Point(x=1, y=2)
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        point.x = 5  # type: ignore[misc]
    with pytest.raises(pydantic.ValidationError, match="extra"):
        Point(x=1, y=2, z=3)  # type: ignore[call-arg]


# ----------------------------------------------------------------------------- errors


def _error(data) -> str:
    with pytest.raises(ActionError) as info:
        parse_action(data)
    return str(info.value)


def test_bad_point_names_the_field():
    message = _error({"type": "click", "point": {"x": "a", "y": 1}})
    assert "point" in message and "click" in message


def test_empty_press_keys():
    message = _error({"type": "press", "keys": []})
    assert "keys" in message and "at least 1" in message


def test_drag_needs_two_points():
    message = _error({"type": "drag", "path": [[1, 2]]})
    assert "path" in message and "at least 2" in message


def test_unknown_type_is_named():
    message = _error({"type": "clik"})
    assert "'clik'" in message
    assert "click" in message  # the known types are listed


@pytest.mark.parametrize("bad_type", [["click"], {"a": 1}, 1, None])
def test_non_string_type_is_an_action_error(bad_type):
    message = _error({"type": bad_type})
    assert "unknown action type" in message


def test_bad_key_inside_press_names_the_key():
    message = _error({"type": "press", "keys": ["ctrl", "entr"]})
    assert "'entr'" in message and "keys" in message and "enter" in message


def test_bad_hold_key_names_the_key():
    message = _error({"type": "scroll", "hold_keys": ["Fooo"]})
    assert "'Fooo'" in message and "hold_keys" in message


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"type": "type"}, "text"),
        ({"type": "response"}, "text"),
        ({"type": "custom"}, "action"),
        ({"type": "wait"}, "time"),
        ({"type": "wait", "time": -1}, "time"),
        ({"type": "press"}, "keys"),
        ({"type": "keydown", "keys": None}, "keys"),
        ({"type": "keyup", "keys": []}, "keys"),
        ({"type": "drag"}, "path"),
        ({"type": "drag", "path": "ab"}, "path"),
        ({"type": "click", "button": "wheel2"}, "button"),
        ({"type": "click", "pattern": [-1]}, "pattern"),
        ({"type": "click", "bogus": 1}, "bogus"),
        ({"type": "move", "point": [1, 2, 3]}, "point"),
        ({"type": "move", "offset": {"x": 1}}, "offset"),
        ({"type": "scroll", "scroll": "down"}, "scroll"),
        ({"type": "type", "text": "x", "enter_after": "maybe"}, "enter_after"),
        ({"type": "custom", "action": "goto", "args": [1]}, "args"),
    ],
)
def test_required_fields_and_bad_values_name_the_field(data, field):
    message = _error(data)
    assert field in message
    assert repr(data["type"]) in message


@pytest.mark.parametrize("value", ["click", 5, None, [1, 2], object()])
def test_non_dict_actions_are_rejected(value):
    with pytest.raises(ActionError) as info:
        parse_action(value)
    assert "CLA model or a dict" in str(info.value)


def test_dict_without_type():
    assert "'type'" in _error({"text": "hi"})


def test_model_constructor_rejects_bad_keys():
    with pytest.raises(ValueError) as info:
        PressAction(keys=["nokey"])
    assert "nokey" in str(info.value)


# ----------------------------------------------------------------------------- parse_actions


def test_parse_actions_single_and_lists():
    assert parse_actions({"type": "position"}) == [PositionFetch()]
    assert parse_actions(ClickAction()) == [ClickAction()]
    mixed = parse_actions([TypeAction(text="a"), {"type": "press", "keys": ["Enter"]}])
    assert mixed == [TypeAction(text="a"), PressAction(keys=["enter"])]
    assert parse_actions(({"type": "wait", "time": 1},)) == [WaitAction(time=1)]
    assert parse_actions([]) == []


def test_parse_actions_reports_the_index_of_the_bad_item():
    with pytest.raises(ActionError) as info:
        parse_actions([{"type": "type", "text": "a"}, TypeAction(text="b"), {"type": "press", "keys": ["nokey"]}])
    message = str(info.value)
    assert message.startswith("action 2:")
    assert "'nokey'" in message


def test_parse_actions_rejects_other_containers():
    for value in (5, "click", None):
        with pytest.raises(ActionError) as info:
            parse_actions(value)
        assert "expected a CLA action" in str(info.value)


# ---------------------------------------------------------------------- fuzz: malformed fields

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from hud_gym.spaces import ActionSpaceConfig, decode  # noqa: E402

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.binary(max_size=6),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(st.one_of(st.text(max_size=6), st.integers()), inner, max_size=3),
    ),
    max_leaves=8,
)


@st.composite
def _malformed_actions(draw: st.DrawFn) -> dict[object, object]:
    """A dict of a CLA type whose fields (its own, mostly, and sometimes an unknown one) hold anything."""
    action_type = draw(st.sampled_from(list(ActionType)))
    fields = [f for f in ACTION_CLASSES[action_type].model_fields if f != "type"] + ["x", "unknown"]
    action: dict[object, object] = {"type": action_type.value}
    for field in draw(st.lists(st.sampled_from(fields), min_size=1, max_size=4, unique=True)):
        action[field] = draw(_VALUES)
    return action


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(action=_malformed_actions())
def test_any_malformed_action_dict_is_an_action_error(action: dict[object, object]) -> None:
    try:
        parsed = parse_action(action)
    except ActionError:
        return
    assert isinstance(parsed, ACTION_CLASSES[ActionType(action["type"])])


@settings(max_examples=200, deadline=None)
@given(
    encoded=st.dictionaries(
        st.sampled_from(
            [
                "action_type",
                "point",
                "has_point",
                "button",
                "keys",
                "keys_len",
                "hold_keys",
                "hold_keys_len",
                "text",
                "scroll",
                "time",
                "pattern",
                "pattern_len",
            ]
        ),
        _VALUES,
        max_size=6,
    )
)
def test_any_malformed_encoded_action_is_an_action_error(encoded: dict[str, object]) -> None:
    try:
        decode(encoded, ActionSpaceConfig())
    except ActionError:
        pass
