"""Reading a VLM's reply: CLA JSON, computer-use JSON (Claude's names, Qwen-VL's tool-call form) and
pyautogui-style calls, in fences, tags or bare text; one clear error for a reply with no action
or a malformed one."""

from __future__ import annotations

from typing import Any

import pytest

from hud_gym.actions import parse_actions
from hud_gym.agents import ReplyParseError
from hud_gym.agents.reply_parsing import ReplyParser

pytestmark = pytest.mark.timeout(30)

CASES: list[tuple[str, str, list[dict[str, Any]]]] = [
    ("click(x=10, y=20)", "pyautogui", [{"type": "click", "button": "left", "point": {"x": 10, "y": 20}}]),
    (
        "Thought: the button.\n```python\npyautogui.click(100, 200, button='right')\npyautogui.hotkey('ctrl', 'c')\n```",
        "pyautogui",
        [{"type": "click", "button": "right", "point": {"x": 100, "y": 200}}, {"type": "press", "keys": ["ctrl", "c"]}],
    ),
    (
        "doubleClick(5, 6)\ntriple_click(x=5, y=6)\nrightClick(1, 2)\nmiddle_click(1, 2)",
        "pyautogui",
        [
            {"type": "click", "button": "left", "point": {"x": 5, "y": 6}, "pattern": [100]},
            {"type": "click", "button": "left", "point": {"x": 5, "y": 6}, "pattern": [100, 100]},
            {"type": "click", "button": "right", "point": {"x": 1, "y": 2}},
            {"type": "click", "button": "middle", "point": {"x": 1, "y": 2}},
        ],
    ),
    (
        "click(start_box='(10,20,30,40)')",
        "pyautogui",
        [{"type": "click", "button": "left", "point": {"x": 20, "y": 30}}],
    ),
    (
        "moveTo(7, 8)\nmoveRel(-5, 5)\ndragTo(17, 18)",
        "pyautogui",
        [
            {"type": "move", "point": {"x": 7, "y": 8}},
            {"type": "move", "offset": {"x": -5, "y": 5}},
            {"type": "drag", "path": [{"x": 7, "y": 8}, {"x": 17, "y": 18}]},
        ],
    ),
    ("drag(1, 2, 3, 4)", "pyautogui", [{"type": "drag", "path": [{"x": 1, "y": 2}, {"x": 3, "y": 4}]}]),
    (
        "scroll(-3, x=5, y=6)\nhscroll(2)\nscroll(direction='up', amount=1)",
        "pyautogui",
        [
            {"type": "scroll", "scroll": {"x": 0, "y": 300}, "point": {"x": 5, "y": 6}},
            {"type": "scroll", "scroll": {"x": 200, "y": 0}},
            {"type": "scroll", "scroll": {"x": 0, "y": -100}},
        ],
    ),
    (
        "write('a(b)c click(1,2)')\ntypewrite(['a', 'enter'])\ntype(text=\"it's\")",
        "pyautogui",
        [
            {"type": "type", "text": "a(b)c click(1,2)"},
            {"type": "press", "keys": ["a"]},
            {"type": "press", "keys": ["enter"]},
            {"type": "type", "text": "it's"},
        ],
    ),
    (
        "press('enter', presses=2)\npress('ctrl+s')\nhotkey(key='ctrl shift t')\nkeyDown('shift')\nkeyUp('shift')",
        "pyautogui",
        [
            {"type": "press", "keys": ["enter"]},
            {"type": "press", "keys": ["enter"]},
            {"type": "press", "keys": ["ctrl", "s"]},
            {"type": "press", "keys": ["ctrl", "shift", "t"]},
            {"type": "keydown", "keys": ["shift"]},
            {"type": "keyup", "keys": ["shift"]},
        ],
    ),
    (
        "wait(0.5)\nscreenshot()\nanswer('Paris')",
        "pyautogui",
        [{"type": "wait", "time": 500}, {"type": "screenshot"}, {"type": "response", "text": "Paris"}],
    ),
    ("finished(content='42')", "pyautogui", [{"type": "response", "text": "42"}]),
    ("done()", "pyautogui", [{"type": "response", "text": ""}]),
    ('{"type": "click", "point": {"x": 1, "y": 2}}', "cla-json", [{"type": "click", "point": {"x": 1, "y": 2}}]),
    (
        'Sure:\n```json\n[{"type": "type", "text": "hi"}, {"type": "press", "keys": ["enter"]}]\n```',
        "cla-json",
        [{"type": "type", "text": "hi"}, {"type": "press", "keys": ["enter"]}],
    ),
    (
        '<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [5, 6]}}</tool_call>',
        "computer-use-json",
        [{"type": "click", "point": {"x": 5, "y": 6}, "button": "left"}],
    ),
    ('{"action": "key", "text": "ctrl+a"}', "computer-use-json", [{"type": "press", "keys": ["ctrl", "a"]}]),
]


@pytest.mark.parametrize(("reply", "form", "expected"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_replies(reply: str, form: str, expected: list[dict[str, Any]]) -> None:
    parsed = ReplyParser().parse(reply)
    assert (parsed.format, parsed.actions) == (form, expected)
    parse_actions(parsed.actions)  # every one is a valid CLA action


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("", "reply is empty"),
        ("I think the answer is in the top left corner.", "no action in the model's reply: 'I think the answer"),
        ("click(x=10)", "cannot read the call"),
        ("click(x=foo, y=2)", "cannot read the call"),
        ("click(x=1, y=2", "unbalanced parentheses"),
        ("dragTo(5, 5)", "needs a known start"),
        ("wait(-1)", "0 to 300 seconds"),
        ("scroll(direction='sideways')", "up, down, left or right"),
        ('{"action": "left_click", "coordinate": [1]}', "'coordinate' must be [x, y]"),
    ],
)
def test_bad_replies(reply: str, message: str) -> None:
    with pytest.raises(ReplyParseError, match=message.replace("(", r"\(").replace("[", r"\[")):
        ReplyParser().parse(reply)
