"""The CLA action Dict, encode/decode, and text sanitising (hud_gym.spaces)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from gymnasium import spaces
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hud_gym.actions import (
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
)
from hud_gym.keys import KEYS
from hud_gym.spaces import (
    BUTTONS,
    TEXT_CHARSET,
    ActionSpaceConfig,
    decode,
    encode,
    make_action_space,
    make_observation_space,
    sanitize_text,
    text_space,
)

SMALL = ActionSpaceConfig(width=200, height=100)
DEFAULT = ActionSpaceConfig()
CONFIGS = {"small": SMALL, "default": DEFAULT}

PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ----------------------------------------------------------------------------- strategies

_CHARSET = sorted(TEXT_CHARSET)
_TEXT_CHAR = st.one_of(
    st.sampled_from("abcxyz ,.!?\n\tü"),  # common characters, so shrinking lands on readable text
    st.sampled_from(_CHARSET),  # anything the space admits
)


def texts(max_size: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=_TEXT_CHAR, max_size=max_size)


def points(cfg: ActionSpaceConfig) -> st.SearchStrategy[Point]:
    return st.builds(Point, x=st.integers(0, cfg.width - 1), y=st.integers(0, cfg.height - 1))


def vectors(limit_x: int, limit_y: int) -> st.SearchStrategy[Point]:
    return st.builds(Point, x=st.integers(-limit_x, limit_x), y=st.integers(-limit_y, limit_y))


def keys(max_size: int, min_size: int = 1) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(KEYS), min_size=min_size, max_size=max_size)


def hold_keys(cfg: ActionSpaceConfig) -> st.SearchStrategy[list[str] | None]:
    # [] is stored as None, so it must survive the round trip too
    return st.none() | keys(cfg.max_hold_keys, min_size=0)


def patterns(cfg: ActionSpaceConfig) -> st.SearchStrategy[list[int] | None]:
    return st.none() | st.lists(st.integers(0, cfg.max_delay_ms), max_size=cfg.max_pattern)


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=6,
)


def custom_args(cfg: ActionSpaceConfig) -> st.SearchStrategy[dict | None]:
    # the ASCII-escaped JSON is the longest encoding encode() may choose
    args = st.dictionaries(st.text(max_size=8), _JSON, max_size=4)
    return st.none() | args.filter(lambda a: len(json.dumps(a, ensure_ascii=True)) <= cfg.max_args_length)


def action_strategy(action_type: ActionType, cfg: ActionSpaceConfig) -> st.SearchStrategy:
    w, h = cfg.width - 1, cfg.height - 1
    optional_point = st.none() | points(cfg)
    return {
        ActionType.CLICK: st.builds(
            ClickAction,
            point=optional_point,
            button=st.sampled_from(BUTTONS),
            pattern=patterns(cfg),
            hold_keys=hold_keys(cfg),
        ),
        ActionType.PRESS: st.builds(PressAction, keys=keys(cfg.max_keys)),
        ActionType.KEYDOWN: st.builds(KeyDownAction, keys=keys(cfg.max_keys)),
        ActionType.KEYUP: st.builds(KeyUpAction, keys=keys(cfg.max_keys)),
        ActionType.TYPE: st.builds(TypeAction, text=texts(cfg.max_text_length), enter_after=st.booleans()),
        ActionType.SCROLL: st.builds(
            ScrollAction,
            point=optional_point,
            scroll=st.none() | vectors(cfg.max_scroll, cfg.max_scroll),
            hold_keys=hold_keys(cfg),
        ),
        ActionType.MOVE: st.builds(MoveAction, point=optional_point, offset=st.none() | vectors(w, h)),
        ActionType.WAIT: st.builds(WaitAction, time=st.integers(0, cfg.max_wait_ms)),
        ActionType.DRAG: st.builds(
            DragAction,
            path=st.lists(points(cfg), min_size=2, max_size=cfg.max_drag_points),
            pattern=patterns(cfg),
            hold_keys=hold_keys(cfg),
        ),
        ActionType.RESPONSE: st.builds(ResponseAction, text=texts(cfg.max_text_length)),
        ActionType.SCREENSHOT: st.builds(ScreenshotFetch),
        ActionType.POSITION: st.builds(PositionFetch),
        ActionType.CUSTOM: st.builds(CustomAction, action=texts(cfg.max_text_length), args=custom_args(cfg)),
    }[action_type]


# ----------------------------------------------------------------------------- round trip


@pytest.mark.parametrize("cfg_name", list(CONFIGS))
@pytest.mark.parametrize("action_type", list(ActionType), ids=[t.value for t in ActionType])
def test_encode_decode_round_trip(action_type, cfg_name):
    cfg = CONFIGS[cfg_name]
    space = make_action_space(cfg)

    @PROPERTY
    @given(action=action_strategy(action_type, cfg))
    def check(action):
        encoded = encode(action, cfg)
        assert space.contains(encoded), f"encode({action!r}) is not in the action space"
        decoded = decode(encoded, cfg)
        assert type(decoded) is type(action)
        assert decoded == action
        assert decoded.reasoning is None and decoded.logs is None

    check()


def test_round_trip_drops_annotations_only():
    action = ResponseAction(text="Paris", reasoning="I know it", logs={"k": 1})
    assert decode(encode(action, SMALL), SMALL) == ResponseAction(text="Paris")


def test_encode_fills_unused_slots_with_zeros():
    encoded = encode(PressAction(keys=["ctrl", "c"]), SMALL)
    assert encoded["keys_len"] == 1
    assert list(encoded["keys"][2:]) == [0] * (SMALL.max_keys - 2)
    assert encoded["has_point"] == 0 and not encoded["point"].any()
    assert encoded["text"] == "" and encoded["args"] == ""


def test_decode_ignores_slots_past_the_length():
    encoded = encode(DragAction(path=[(1, 1), (2, 2)]), SMALL)
    encoded["path"][5] = [7, 7]
    encoded["keys"][:] = 3
    assert decode(encoded, SMALL) == DragAction(path=[(1, 1), (2, 2)])


def test_action_type_subset():
    cfg = ActionSpaceConfig(width=50, height=50, action_types=("click", ActionType.RESPONSE))
    space = make_action_space(cfg)
    assert space["action_type"].n == 2
    encoded = encode(ResponseAction(text="ok"), cfg)
    assert encoded["action_type"] == 1
    assert decode(encoded, cfg) == ResponseAction(text="ok")
    with pytest.raises(ActionError) as info:
        encode(TypeAction(text="x"), cfg)
    assert "'type'" in str(info.value)


def test_config_validation():
    with pytest.raises(ValueError, match="positive"):
        ActionSpaceConfig(width=0, height=10)
    with pytest.raises(ValueError, match="max_drag_points"):
        ActionSpaceConfig(max_drag_points=1)
    with pytest.raises(ValueError, match="action_types"):
        ActionSpaceConfig(action_types=())
    with pytest.raises(ValueError):
        ActionSpaceConfig(action_types=("clik",))


# ----------------------------------------------------------------------------- samples


@pytest.mark.parametrize(("cfg_name", "n"), [("small", 300), ("default", 100)])
def test_every_sample_decodes_to_a_valid_action(cfg_name, n):
    cfg = CONFIGS[cfg_name]
    space = make_action_space(cfg, seed=1234)
    seen = set()
    for _ in range(n):
        sample = space.sample()
        assert space.contains(sample)
        action = decode(sample, cfg)
        seen.add(action.type)
        assert action.type == cfg.action_types[int(sample["action_type"])].value
        assert parse_action(action.model_dump()) == action
        assert parse_action(action.model_dump(mode="json")) == action
        # a decoded sample is within the limits, so it encodes again (custom args may be re-escaped
        # past the args limit, so skip those), and that encoding decodes to the same action
        if action.type != "custom":
            again = encode(action, cfg)
            assert space.contains(again)
            assert decode(again, cfg) == action
    assert len(seen) >= 10  # the samples cover (nearly) every type


def test_samples_are_reproducible_with_a_seed():
    space_a, space_b = make_action_space(SMALL, seed=7), make_action_space(SMALL, seed=7)
    assert [decode(space_a.sample(), SMALL) for _ in range(20)] == [decode(space_b.sample(), SMALL) for _ in range(20)]


# ----------------------------------------------------------------------------- encode errors


def _encode_error(action, cfg=SMALL) -> str:
    with pytest.raises(ActionError) as info:
        encode(action, cfg)
    return str(info.value)


@pytest.mark.parametrize(
    ("action", "field"),
    [
        (TypeAction(text="a" * (SMALL.max_text_length + 1)), "text"),
        (TypeAction(text="emoji 😀"), "text"),
        (ResponseAction(text="x" * (SMALL.max_text_length + 1)), "text"),
        (PressAction(keys=["a"] * (SMALL.max_keys + 1)), "keys"),
        (KeyDownAction(keys=["a"] * (SMALL.max_keys + 1)), "keys"),
        (ClickAction(hold_keys=["ctrl"] * (SMALL.max_hold_keys + 1)), "hold_keys"),
        (ClickAction(point=(200, 0)), "point"),
        (ClickAction(point=(0, 100)), "point"),
        (ClickAction(point=(-1, 5)), "point"),
        (ScrollAction(point=(0, 0), scroll=(0, SMALL.max_scroll + 1)), "scroll"),
        (MoveAction(offset=(-200, 0)), "offset"),
        (DragAction(path=[(0, 0)] * (SMALL.max_drag_points + 1)), "path"),
        (DragAction(path=[(0, 0), (500, 5)]), "path[1]"),
        (ClickAction(pattern=[0] * (SMALL.max_pattern + 1)), "pattern"),
        (DragAction(path=[(0, 0), (1, 1)], pattern=[SMALL.max_delay_ms + 1]), "pattern"),
        (WaitAction(time=SMALL.max_wait_ms + 1), "time"),
        (CustomAction(action="x" * (SMALL.max_text_length + 1)), "action"),
        (CustomAction(action="goto", args={"url": "x" * SMALL.max_args_length}), "args"),
        (CustomAction(action="goto", args={"bad": object()}), "args"),
        (CustomAction(action="goto", args={"nan": float("nan")}), "args"),
    ],
)
def test_encode_errors_name_the_field(action, field):
    message = _encode_error(action)
    assert message.startswith(f"{field}:") or f"{field}:" in message


def test_limits_are_inclusive():
    cfg = SMALL
    for action in (
        TypeAction(text="a" * cfg.max_text_length),
        PressAction(keys=["a"] * cfg.max_keys),
        ClickAction(
            point=(cfg.width - 1, cfg.height - 1),
            pattern=[cfg.max_delay_ms] * cfg.max_pattern,
            hold_keys=["shift"] * cfg.max_hold_keys,
        ),
        DragAction(path=[(0, 0)] * cfg.max_drag_points),
        WaitAction(time=cfg.max_wait_ms),
        ScrollAction(scroll=(-cfg.max_scroll, cfg.max_scroll)),
        MoveAction(offset=(-(cfg.width - 1), cfg.height - 1)),
    ):
        assert decode(encode(action, cfg), cfg) == action


def test_custom_args_outside_the_charset_are_ascii_escaped():
    action = CustomAction(action="say", args={"text": "hi 😀"})
    encoded = encode(action, SMALL)
    assert "\\ud83d" in encoded["args"]
    assert make_action_space(SMALL).contains(encoded)
    assert decode(encoded, SMALL) == action


def test_decode_of_non_object_args():
    encoded = encode(CustomAction(action="x"), SMALL)
    encoded["args"] = "not json"
    assert decode(encoded, SMALL).args == {"text": "not json"}
    encoded["args"] = "[1, 2]"
    assert decode(encoded, SMALL).args == {"value": [1, 2]}


# ----------------------------------------------------------------------------- decode errors


def test_decode_errors_name_the_field():
    encoded = encode(ClickAction(point=(1, 1)), SMALL)
    del encoded["has_point"]
    with pytest.raises(ActionError, match="has_point"):
        decode(encoded, SMALL)
    bad = encode(ClickAction(), SMALL)
    bad["action_type"] = 99
    with pytest.raises(ActionError, match="action_type"):
        decode(bad, SMALL)
    bad["action_type"] = "abc"
    with pytest.raises(ActionError, match="malformed"):
        decode(bad, SMALL)


# ----------------------------------------------------------------------------- text


_NASTY = st.sampled_from(
    ["\r\n", "\r", "\n", "\t", "\x00", "\x1b", "\x7f", "😀", "👍🏽", "\u200b", "\ufffd", "é", "\u2028"]
)
ANY_TEXT = st.lists(st.one_of(st.text(), _NASTY), max_size=20).map("".join)


_TEXT_SPACES = {n: text_space(n) for n in range(65)}  # building a Text space over ~55k characters is slow


@PROPERTY
@given(text=ANY_TEXT, max_len=st.integers(0, 64))
def test_sanitize_text_fits_the_space(text, max_len):
    result = sanitize_text(text, max_len)
    assert len(result) <= max_len
    assert _TEXT_SPACES[max_len].contains(result)
    assert "\r" not in result
    assert sanitize_text(result, max_len) == result  # idempotent
    normalised = text.replace("\r\n", "\n").replace("\r", "\n")
    assert len(result) == min(len(normalised), max_len)  # one character in, one character out


@PROPERTY
@given(text=texts(64))
def test_sanitize_text_keeps_valid_text(text):
    assert sanitize_text(text, 64) == text


def test_sanitize_text_examples():
    assert sanitize_text("a\r\nb\rc", 10) == "a\nb\nc"
    assert sanitize_text("x😀\x00y", 10) == "x\ufffd\ufffdy"
    assert sanitize_text("hello", 3) == "hel"
    assert sanitize_text("", 0) == ""


def test_text_charset():
    assert {"\n", "\t", " ", "a", "ü", "中", "\ufffd"} <= TEXT_CHARSET
    assert not {"\r", "\x00", "😀", "\ud800"} & TEXT_CHARSET


@pytest.mark.parametrize("cfg_name", list(CONFIGS))
def test_default_charset_trap(cfg_name):
    """gymnasium's Text defaults to alphanumerics only; these spaces must accept ordinary text."""
    action_space = make_action_space(CONFIGS[cfg_name])
    observation_space = make_observation_space(64, 32, 100)
    for space in (action_space["text"], action_space["args"], observation_space["text"], text_space(20)):
        assert isinstance(space, spaces.Text)
        assert space.contains("")
        assert space.contains("hello, world! ü")
        assert space.contains("line one\n\ttwo")
        assert not space.contains("😀")


def test_observation_space_shape():
    space = make_observation_space(64, 32, 100)
    assert space["screenshot"].shape == (32, 64, 3)
    assert space["screenshot"].dtype == np.uint8
    assert space.contains({"screenshot": np.zeros((32, 64, 3), np.uint8), "text": "ok"})
    assert not space.contains({"screenshot": np.zeros((64, 32, 3), np.uint8), "text": "ok"})
