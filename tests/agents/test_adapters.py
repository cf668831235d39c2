"""The adapters: every action and key name of Anthropic's and OpenAI's computer-use tools to CLA,
coordinates rescaled both ways, screenshots to the agent's frame, the tool-result builders, and
one clear ``ValueError`` for every malformed input."""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np
import pytest
from PIL import Image

from hud_gym.actions import ActionError, parse_action
from hud_gym.adapters import (
    CLAUDE_ACTIONS,
    CLAUDE_KEY_MAP,
    OPERATOR_ACTIONS,
    Adapter,
    ClaudeAdapter,
    OperatorAdapter,
    claude_tool_result,
    encode_image,
    operator_call_output,
)
from hud_gym.adapters.results import chat_user_message, operator_error_message

pytestmark = pytest.mark.timeout(30)

# The env's frame is 1280x720 throughout; the adapters' default frame is 1024x768.


def dumped(actions: Any) -> list[dict[str, Any]]:
    items = actions if isinstance(actions, list) else [actions]
    return [a.model_dump(exclude_none=True, exclude={"reasoning", "logs"}) for a in items]


@pytest.fixture
def claude() -> ClaudeAdapter:
    adapter = ClaudeAdapter()
    adapter.set_env_frame(1280, 720)
    return adapter


@pytest.fixture
def operator() -> OperatorAdapter:
    adapter = OperatorAdapter()
    adapter.set_env_frame(1280, 720)
    return adapter


# ----------------------------------------------------------------------------- Claude

CLAUDE_CASES: list[tuple[dict[str, Any], list[dict[str, Any]]]] = [
    ({"action": "key", "text": "Return"}, [{"type": "press", "keys": ["enter"]}]),
    ({"action": "key", "text": "ctrl+shift+t"}, [{"type": "press", "keys": ["ctrl", "shift", "t"]}]),
    ({"action": "key", "text": "Page_Down", "repeat": 2}, [{"type": "press", "keys": ["pagedown"]}] * 2),
    (
        {"action": "key", "text": "ctrl+a BackSpace"},
        [{"type": "press", "keys": ["ctrl", "a"]}, {"type": "press", "keys": ["backspace"]}],
    ),
    (
        {"action": "hold_key", "text": "shift", "duration": 1.5},
        [{"type": "keydown", "keys": ["shift"]}, {"type": "wait", "time": 1500}, {"type": "keyup", "keys": ["shift"]}],
    ),
    ({"action": "type", "text": "héllo\nworld"}, [{"type": "type", "text": "héllo\nworld", "enter_after": False}]),
    ({"action": "mouse_move", "coordinate": [512, 384]}, [{"type": "move", "point": {"x": 640, "y": 360}}]),
    (
        {"action": "left_click", "coordinate": [512, 384]},
        [{"type": "click", "point": {"x": 640, "y": 360}, "button": "left"}],
    ),
    (
        {"action": "left_click", "coordinate": [0, 0], "text": "ctrl+shift"},
        [{"type": "click", "point": {"x": 0, "y": 0}, "button": "left", "hold_keys": ["ctrl", "shift"]}],
    ),
    ({"action": "left_click"}, [{"type": "click", "button": "left"}]),
    (
        {"action": "right_click", "coordinate": [1024, 768]},
        [{"type": "click", "point": {"x": 1280, "y": 720}, "button": "right"}],
    ),
    (
        {"action": "middle_click", "coordinate": [10, 10]},
        [{"type": "click", "point": {"x": 12, "y": 9}, "button": "middle"}],
    ),
    (
        {"action": "double_click", "coordinate": [10, 10]},
        [{"type": "click", "point": {"x": 12, "y": 9}, "button": "left", "pattern": [100]}],
    ),
    (
        {"action": "triple_click", "coordinate": [10, 10], "text": "shift"},
        [
            {
                "type": "click",
                "point": {"x": 12, "y": 9},
                "button": "left",
                "pattern": [100, 100],
                "hold_keys": ["shift"],
            }
        ],
    ),
    (
        {"action": "left_click_drag", "start_coordinate": [0, 0], "coordinate": [512, 384]},
        [{"type": "drag", "path": [{"x": 0, "y": 0}, {"x": 640, "y": 360}]}],
    ),
    (
        {"action": "scroll", "coordinate": [512, 384], "scroll_direction": "down", "scroll_amount": 3},
        [{"type": "scroll", "point": {"x": 640, "y": 360}, "scroll": {"x": 0, "y": 281}}],
    ),
    (
        {"action": "scroll", "scroll_direction": "up", "scroll_amount": 1, "text": "ctrl"},
        [{"type": "scroll", "scroll": {"x": 0, "y": -94}, "hold_keys": ["ctrl"]}],
    ),
    (
        {"action": "scroll", "coordinate": [0, 0], "scroll_direction": "left", "scroll_amount": 2},
        [{"type": "scroll", "point": {"x": 0, "y": 0}, "scroll": {"x": -250, "y": 0}}],
    ),
    (
        {"action": "scroll", "coordinate": [0, 0], "scroll_direction": "right", "scroll_amount": 2},
        [{"type": "scroll", "point": {"x": 0, "y": 0}, "scroll": {"x": 250, "y": 0}}],
    ),
    ({"action": "wait", "duration": 2}, [{"type": "wait", "time": 2000}]),
    ({"action": "screenshot"}, [{"type": "screenshot"}]),
    ({"action": "zoom", "region": [0, 0, 100, 50]}, [{"type": "screenshot"}]),
    ({"action": "cursor_position"}, [{"type": "position"}]),
    ({"action": "response", "text": "42"}, [{"type": "response", "text": "42"}]),
]


@pytest.mark.parametrize(
    ("data", "expected"), CLAUDE_CASES, ids=[f"{c[0]['action']}-{i}" for i, c in enumerate(CLAUDE_CASES)]
)
def test_claude_actions(claude: ClaudeAdapter, data: dict[str, Any], expected: list[dict[str, Any]]) -> None:
    assert dumped(claude.adapt(data)) == expected
    assert all(isinstance(parse_action(a), type(a)) for a in claude.memory)


def test_every_claude_action_has_a_case() -> None:
    covered = {data["action"] for data, _ in CLAUDE_CASES} | {"left_mouse_down", "left_mouse_up"}
    assert covered == set(CLAUDE_ACTIONS)


def test_claude_stateful_actions(claude: ClaudeAdapter) -> None:
    # A drag without start_coordinate starts at the last pointer position.
    claude.adapt({"action": "mouse_move", "coordinate": [100, 100]})
    assert dumped(claude.adapt({"action": "left_click_drag", "coordinate": [200, 100]}))[0]["path"] == [
        {"x": 125, "y": 94},
        {"x": 250, "y": 94},
    ]
    # left_mouse_down / mouse_move / left_mouse_up become one drag along the moves.
    assert dumped(claude.adapt({"action": "left_mouse_down"})) == [{"type": "screenshot"}]
    claude.adapt({"action": "mouse_move", "coordinate": [300, 100]})
    claude.adapt({"action": "mouse_move", "coordinate": [300, 200]})
    assert dumped(claude.adapt({"action": "left_mouse_up"})) == [
        {"type": "drag", "path": [{"x": 250, "y": 94}, {"x": 375, "y": 94}, {"x": 375, "y": 188}]}
    ]
    # Down and up without a move is a click.
    claude.adapt({"action": "left_mouse_down"})
    assert dumped(claude.adapt({"action": "left_mouse_up"})) == [
        {"type": "click", "point": {"x": 375, "y": 188}, "button": "left"}
    ]
    claude.reset()
    assert claude.memory == [] and claude.position is None


def test_claude_toolset_members_and_sdk_blocks(claude: ClaudeAdapter) -> None:
    from anthropic.types import ToolUseBlock

    block = ToolUseBlock(
        id="toolu_1", type="tool_use", name="left_click", toolset_name="computer", input={"coordinate": [512, 384]}
    )
    assert dumped(claude.adapt(block)) == [{"type": "click", "point": {"x": 640, "y": 360}, "button": "left"}]
    beta = {"type": "tool_use", "id": "t", "name": "computer", "input": {"action": "key", "text": "super"}}
    assert dumped(claude.adapt(beta)) == [{"type": "press", "keys": ["win"]}]


CLAUDE_KEYS = {
    "Return": "enter",
    "KP_Enter": "enter",
    "Page_Down": "pagedown",
    "Page_Up": "pageup",
    "BackSpace": "backspace",
    "Escape": "escape",
    "Tab": "tab",
    "Up": "up",
    "Down": "down",
    "Left": "left",
    "Right": "right",
    "Home": "home",
    "End": "end",
    "Delete": "delete",
    "Insert": "insert",
    "super": "win",
    "Super_L": "winleft",
    "Super_R": "winright",
    "Control_L": "ctrlleft",
    "Alt_R": "altright",
    "Shift_L": "shiftleft",
    "Meta_L": "winleft",
    "Menu": "apps",
    "Caps_Lock": "capslock",
    "Num_Lock": "numlock",
    "F1": "f1",
    "F12": "f12",
    "KP_0": "num0",
    "KP_Add": "add",
    "space": "space",
    "minus": "-",
    "plus": "+",
    "period": ".",
    "slash": "/",
    "a": "a",
    "A": "a",
    "1": "1",
    **{name: value for name, value in CLAUDE_KEY_MAP.items()},
}


@pytest.mark.parametrize(("name", "canonical"), sorted(CLAUDE_KEYS.items()))
def test_claude_key_names(claude: ClaudeAdapter, name: str, canonical: str) -> None:
    assert dumped(claude.adapt({"action": "key", "text": name})) == [{"type": "press", "keys": [canonical]}]
    assert dumped(claude.adapt({"action": "key", "text": f"ctrl+{name}"})) == [
        {"type": "press", "keys": ["ctrl", canonical]}
    ]


def test_claude_frame_from_tool_and_plus_key() -> None:
    adapter = ClaudeAdapter.from_tool({"type": "computer_20250124", "display_width_px": 1280, "display_height_px": 800})
    assert adapter.agent_frame == (1280, 800)
    assert ClaudeAdapter().agent_frame == (1024, 768)
    assert dumped(adapter.adapt({"action": "key", "text": "ctrl++"})) == [{"type": "press", "keys": ["ctrl", "+"]}]


CLAUDE_MALFORMED = [
    (None, "Invalid action"),
    ("left_click", "Invalid action"),
    ([1, 2], "Invalid action"),
    ({}, "no 'action'"),
    ({"action": "fly"}, "Unsupported action type: 'fly'"),
    ({"action": 3}, "no 'action'"),
    ({"action": "left_click", "coordinate": "10,20"}, "'coordinate' must be [x, y]"),
    ({"action": "left_click", "coordinate": [10]}, "'coordinate' must be [x, y]"),
    ({"action": "left_click", "coordinate": [-1, 5]}, "at least 0"),
    ({"action": "left_click", "coordinate": [1.5, 2]}, "must be an integer"),
    ({"action": "left_click", "coordinate": [True, 2]}, "must be an integer"),
    ({"action": "mouse_move"}, "mouse_move needs 'coordinate'"),
    ({"action": "left_click_drag", "start_coordinate": [0, 0]}, "left_click_drag needs 'coordinate'"),
    ({"action": "left_click_drag", "coordinate": [5, 5]}, "needs 'start_coordinate'"),
    ({"action": "key"}, "key needs 'text'"),
    ({"action": "key", "text": 5}, "must be a string"),
    ({"action": "key", "text": "ctrl+"}, "has an empty key"),
    ({"action": "key", "text": "Hyperdrive"}, "unknown key"),
    ({"action": "key", "text": "a", "repeat": 0}, "at least 1"),
    ({"action": "key", "text": "a", "repeat": 1000}, "at most"),
    ({"action": "hold_key", "text": "shift"}, "hold_key needs 'duration'"),
    ({"action": "type"}, "type needs 'text'"),
    ({"action": "type", "text": ["a"]}, "must be a string"),
    ({"action": "scroll", "scroll_direction": "sideways", "scroll_amount": 1}, "up, down, left or right"),
    ({"action": "scroll", "scroll_direction": "up", "scroll_amount": -1}, "at least 0"),
    ({"action": "scroll", "scroll_direction": "up"}, "scroll needs 'scroll_amount'"),
    ({"action": "wait"}, "wait needs 'duration'"),
    ({"action": "wait", "duration": -1}, "between 0 and"),
    ({"action": "wait", "duration": 1e9}, "between 0 and"),
    ({"action": "wait", "duration": "1"}, "number of seconds"),
    ({"action": "zoom", "region": [0, 0, 10]}, "[x0, y0, x1, y1]"),
    ({"action": "zoom", "region": [5, 5, 1, 1]}, "x0 < x1"),
    ({"action": "left_mouse_up"}, "without a left_mouse_down"),
    ({"action": "left_mouse_down"}, "pointer position unknown"),
    ({"type": "tool_use", "name": "computer", "input": "click"}, "input must be an object"),
]


@pytest.mark.parametrize(("data", "message"), CLAUDE_MALFORMED, ids=[str(i) for i in range(len(CLAUDE_MALFORMED))])
def test_claude_malformed(claude: ClaudeAdapter, data: Any, message: str) -> None:
    with pytest.raises(ValueError, match="^(Invalid action|Unsupported action type)") as raised:
        claude.adapt(data)
    assert message in str(raised.value)
    assert isinstance(raised.value, ActionError) and claude.memory == []


# ----------------------------------------------------------------------------- OpenAI

OPERATOR_CASES: list[tuple[dict[str, Any], list[dict[str, Any]]]] = [
    (
        {"type": "click", "x": 512, "y": 384, "button": "left"},
        [{"type": "click", "point": {"x": 640, "y": 360}, "button": "left"}],
    ),
    (
        {"type": "click", "x": 10, "y": 10, "button": "right", "keys": ["SHIFT"]},
        [{"type": "click", "point": {"x": 12, "y": 9}, "button": "right", "hold_keys": ["shift"]}],
    ),
    (
        {"type": "click", "x": 10, "y": 10, "button": "wheel"},
        [{"type": "click", "point": {"x": 12, "y": 9}, "button": "middle"}],
    ),
    (
        {"type": "click", "x": 10, "y": 10, "button": "back"},
        [{"type": "click", "point": {"x": 12, "y": 9}, "button": "back"}],
    ),
    (
        {"type": "click", "x": 10, "y": 10, "button": "forward"},
        [{"type": "click", "point": {"x": 12, "y": 9}, "button": "forward"}],
    ),
    (
        {"type": "double_click", "x": 10, "y": 10},
        [{"type": "click", "point": {"x": 12, "y": 9}, "button": "left", "pattern": [100]}],
    ),
    (
        {"type": "scroll", "x": 512, "y": 384, "scroll_x": 0, "scroll_y": 300},
        [{"type": "scroll", "point": {"x": 640, "y": 360}, "scroll": {"x": 0, "y": 281}}],
    ),
    (
        {"type": "scroll", "x": 0, "y": 0, "scroll_x": -100, "scroll_y": -96, "keys": ["CTRL"]},
        [{"type": "scroll", "point": {"x": 0, "y": 0}, "scroll": {"x": -125, "y": -90}, "hold_keys": ["ctrl"]}],
    ),
    ({"type": "type", "text": "hello"}, [{"type": "type", "text": "hello", "enter_after": False}]),
    ({"type": "keypress", "keys": ["CTRL", "ALT", "T"]}, [{"type": "press", "keys": ["ctrl", "alt", "t"]}]),
    ({"type": "wait"}, [{"type": "wait", "time": 1000}]),
    ({"type": "wait", "ms": 250}, [{"type": "wait", "time": 250}]),
    ({"type": "move", "x": 512, "y": 384}, [{"type": "move", "point": {"x": 640, "y": 360}}]),
    (
        {"type": "move", "x": 0, "y": 0, "keys": ["SHIFT"]},
        [
            {"type": "keydown", "keys": ["shift"]},
            {"type": "move", "point": {"x": 0, "y": 0}},
            {"type": "keyup", "keys": ["shift"]},
        ],
    ),
    (
        {"type": "drag", "path": [{"x": 0, "y": 0}, {"x": 512, "y": 384}, {"x": 1024, "y": 768}]},
        [{"type": "drag", "path": [{"x": 0, "y": 0}, {"x": 640, "y": 360}, {"x": 1280, "y": 720}]}],
    ),
    (
        {"type": "drag", "path": [{"x": 0, "y": 0}, {"x": 8, "y": 8}], "keys": ["ALT"]},
        [{"type": "drag", "path": [{"x": 0, "y": 0}, {"x": 10, "y": 8}], "hold_keys": ["alt"]}],
    ),
    ({"type": "screenshot"}, [{"type": "screenshot"}]),
    ({"type": "response", "text": "done"}, [{"type": "response", "text": "done"}]),
]


@pytest.mark.parametrize(
    ("data", "expected"), OPERATOR_CASES, ids=[f"{c[0]['type']}-{i}" for i, c in enumerate(OPERATOR_CASES)]
)
def test_operator_actions(operator: OperatorAdapter, data: dict[str, Any], expected: list[dict[str, Any]]) -> None:
    assert dumped(operator.adapt(data)) == expected


def test_every_operator_action_has_a_case_and_sdk_objects_convert(operator: OperatorAdapter) -> None:
    from openai.types.responses.response_computer_tool_call import ActionClick

    assert {data["type"] for data, _ in OPERATOR_CASES} == set(OPERATOR_ACTIONS)
    assert dumped(operator.adapt(ActionClick(type="click", x=512, y=384, button="left"))) == [
        {"type": "click", "point": {"x": 640, "y": 360}, "button": "left"}
    ]


OPERATOR_KEYS = {
    "/": "/",
    "\\": "\\",
    "ALT": "alt",
    "ARROWDOWN": "down",
    "ARROWLEFT": "left",
    "ARROWRIGHT": "right",
    "ARROWUP": "up",
    "BACKSPACE": "backspace",
    "CAPSLOCK": "capslock",
    "CMD": "win",
    "CTRL": "ctrl",
    "DELETE": "delete",
    "END": "end",
    "ENTER": "enter",
    "ESC": "esc",
    "HOME": "home",
    "INSERT": "insert",
    "OPTION": "alt",
    "PAGEDOWN": "pagedown",
    "PAGEUP": "pageup",
    "SHIFT": "shift",
    "SPACE": "space",
    "SUPER": "win",
    "TAB": "tab",
    "WIN": "win",
    "META": "win",
    "RETURN": "enter",
    "A": "a",
    "F5": "f5",
}


@pytest.mark.parametrize(("name", "canonical"), sorted(OPERATOR_KEYS.items()))
def test_operator_key_names(operator: OperatorAdapter, name: str, canonical: str) -> None:
    assert dumped(operator.adapt({"type": "keypress", "keys": [name]})) == [{"type": "press", "keys": [canonical]}]


OPERATOR_MALFORMED = [
    (None, "Invalid action"),
    ("click", "Invalid action"),
    ({}, "has no 'type'"),
    ({"type": "teleport"}, "Unsupported action type"),
    ({"type": "click", "x": 1}, "click needs 'y'"),
    ({"type": "click", "x": 1, "y": 1, "button": "thumb"}, "'button' must be"),
    ({"type": "click", "x": "1", "y": 1}, "must be an integer"),
    ({"type": "double_click", "y": 1}, "needs 'x'"),
    ({"type": "drag", "path": [{"x": 1, "y": 1}]}, "at least two"),
    ({"type": "drag"}, "drag needs 'path'"),
    ({"type": "drag", "path": [{"x": 1}, {"x": 2, "y": 2}]}, "must be [x, y]"),
    ({"type": "keypress", "keys": []}, "non-empty list"),
    ({"type": "keypress"}, "keypress needs 'keys'"),
    ({"type": "keypress", "keys": ["NOTAKEY"]}, "unknown key"),
    ({"type": "keypress", "keys": "CTRL"}, "non-empty list"),
    ({"type": "scroll", "x": 1, "y": 1, "scroll_y": "a"}, "must be an integer"),
    ({"type": "wait", "ms": -5}, "at least 0"),
    ({"type": "type"}, "type needs 'text'"),
    ({"type": "move", "x": 1}, "move needs 'y'"),
]


@pytest.mark.parametrize(("data", "message"), OPERATOR_MALFORMED, ids=[str(i) for i in range(len(OPERATOR_MALFORMED))])
def test_operator_malformed(operator: OperatorAdapter, data: Any, message: str) -> None:
    with pytest.raises(ValueError, match="^(Invalid action|Unsupported action type)") as raised:
        operator.adapt(data)
    assert message in str(raised.value)


def test_adapt_list_names_the_bad_item_and_needs_a_list(operator: OperatorAdapter) -> None:
    with pytest.raises(ValueError, match=r"^action 1: Unsupported action type: 'teleport'"):
        operator.adapt_list([{"type": "screenshot"}, {"type": "teleport"}])
    with pytest.raises(ValueError, match="Invalid action list"):
        operator.adapt_list({"type": "screenshot"})


# ----------------------------------------------------------------------------- frames and screenshots


def test_rescaling_both_ways_and_the_screenshot() -> None:
    adapter = Adapter(1024, 768)
    assert adapter.env_frame == (1024, 768)  # identity until the env's frame is known
    frame = np.arange(720 * 1280 * 3, dtype=np.uint32).astype(np.uint8).reshape(720, 1280, 3)
    scaled = adapter.rescale({"screenshot": frame, "text": ""})
    assert scaled.shape == (768, 1024, 3) and adapter.env_frame == (1280, 720)
    assert adapter.to_env(512, 384) == (640, 360) and adapter.to_agent(640, 360) == (512, 384)
    assert adapter.to_agent(*adapter.to_env(1023, 767)) == (1023, 767)
    move = adapter.adapt({"type": "move", "offset": {"x": 100, "y": 100}})
    assert dumped(move) == [{"type": "move", "offset": {"x": 125, "y": 94}}]
    # HUD's convention: base64 text in, base64 PNG at the agent's frame out.
    buffer = io.BytesIO()
    Image.fromarray(frame).save(buffer, format="PNG")
    out = adapter.rescale(base64.b64encode(buffer.getvalue()).decode())
    assert Image.open(io.BytesIO(base64.b64decode(out))).size == (1024, 768)
    assert adapter.rescale(None) is None
    same = Adapter(follow_env=True)
    assert same.rescale(frame) is frame and same.agent_frame == (1280, 720)  # no copy, no resize
    with pytest.raises(ValueError, match="screenshot"):
        adapter.rescale({"text": "no image"})
    with pytest.raises(ValueError, match="not base64"):
        adapter.rescale("@@@")


def test_base_adapter_takes_cla_and_rejects_the_rest() -> None:
    adapter = Adapter()
    assert dumped(adapter.adapt({"type": "press", "keys": ["Control", "A"]})) == [
        {"type": "press", "keys": ["ctrl", "a"]}
    ]
    with pytest.raises(ValueError, match="^Unsupported action type: 'jump'"):
        adapter.adapt({"type": "jump"})
    with pytest.raises(ValueError, match="^Invalid action: invalid 'click' action"):
        adapter.adapt({"type": "click", "point": {"x": "a", "y": 1}})
    with pytest.raises(ValueError, match="^Invalid action"):
        adapter.adapt(None)


def test_tool_result_builders() -> None:
    image = encode_image(np.zeros((768, 1024, 3), np.uint8))
    assert image.media_type == "image/jpeg" and image.data_url.startswith("data:image/jpeg;base64,")
    result = claude_tool_result("toolu_1", image=image, toolset_name="computer")
    assert result["tool_use_id"] == "toolu_1" and result["toolset_name"] == "computer" and "is_error" not in result
    assert result["content"][0]["source"] == {"type": "base64", "media_type": "image/jpeg", "data": image.data}
    error = claude_tool_result("toolu_2", image=image, error="unknown key 'x'")
    assert error["is_error"] is True and error["content"] == [{"type": "text", "text": "unknown key 'x'"}]
    output = operator_call_output("call_1", image, [{"id": "sc_1", "code": "malicious_instructions", "message": "m"}])
    assert output["output"] == {"type": "computer_screenshot", "image_url": image.data_url}
    assert output["acknowledged_safety_checks"] == [{"id": "sc_1", "code": "malicious_instructions", "message": "m"}]
    assert "acknowledged_safety_checks" not in operator_call_output("call_2", image)
    assert "failed: boom" in operator_error_message("boom")["content"][0]["text"]
    assert chat_user_message("look", image)["content"][1] == {"type": "image_url", "image_url": {"url": image.data_url}}
    png = encode_image(np.zeros((10, 20, 3), np.uint8), "png")
    assert png.media_type == "image/png" and Image.open(io.BytesIO(base64.b64decode(png.data))).size == (20, 10)


# ----------------------------------------------------------------------------- settable frame


def test_agent_frame_is_settable_as_huds_adapters_set_it() -> None:
    """HUD's adapters assign ``agent_width`` / ``agent_height`` after construction; the
    screenshots and the actions' rescaling follow the new frame."""
    adapter = ClaudeAdapter()
    adapter.set_env_frame(1280, 720)
    adapter.agent_width, adapter.agent_height = 640, 360
    assert (adapter.agent_width, adapter.agent_height) == (640, 360)
    assert adapter.rescale(np.zeros((720, 1280, 3), np.uint8)).shape == (360, 640, 3)
    assert adapter.adapt({"action": "left_click", "coordinate": [320, 180]}).point.model_dump() == {"x": 640, "y": 360}
    following = Adapter(follow_env=True)
    following.set_env_frame(1280, 720)
    following.agent_width = 1024  # the other side stays the env's until set
    assert following.agent_frame == (1024, 720)
    for bad in (0, -3, 2.5, True, "800"):
        with pytest.raises(ValueError, match="agent_width must be a positive integer"):
            adapter.agent_width = bad  # type: ignore[assignment]
    assert adapter.agent_frame == (640, 360)
