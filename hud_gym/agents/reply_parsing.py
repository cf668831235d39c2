"""Actions from a VLM's text reply: CLA JSON, computer-use JSON, or pyautogui-style calls.

:class:`ReplyParser` reads, in this order, fenced code blocks, ``<action>`` / ``<tool_call>``
tags, or else the whole reply, and takes from them:

1. **JSON**: a CLA action (``{"type": "click", "point": {"x": 10, "y": 20}}``) or a list of them;
   a computer-use action with Claude's names (``{"action": "left_click", "coordinate": [10, 20]}``,
   also wrapped as ``{"name": "computer_use", "arguments": {...}}``, the Qwen-VL form).
2. **Calls** (parsed with :mod:`ast`, arguments must be literals): ``click(x=10, y=20)``,
   ``pyautogui.click(10, 20, button='right', clicks=2)``, ``double_click``, ``triple_click``,
   ``right_click``, ``middle_click``, ``moveTo``, ``moveRel``, ``dragTo``, ``drag(x1, y1, x2, y2)``,
   ``scroll(clicks, x, y)`` (positive = up, as pyautogui), ``hscroll``, ``write`` / ``typewrite`` /
   ``type``, ``press`` (a key or a list, ``presses=n``), ``hotkey('ctrl', 'c')``, ``keyDown``,
   ``keyUp``, ``wait`` / ``sleep`` (seconds), ``screenshot()``, and the final answer
   ``answer(text)`` / ``finished(content=...)`` / ``response(...)`` / ``done()``. A point may be
   ``x, y`` or a ``point`` / ``start_box`` string such as ``'(10,20)'`` (a box: its centre).

Coordinates stay in the frame of the image the model saw (the agent adapter rescales them). A reply
with no action raises :class:`~hud_gym.agents.ReplyParseError` quoting it.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

from hud_gym.actions import ActionType
from hud_gym.adapters.claude import CLAUDE_ACTIONS, ClaudeAdapter
from hud_gym.agents.errors import ReplyParseError
from hud_gym.agents.reply_calls import CALLS, call_to_cla

__all__ = ["ParsedReply", "ReplyParser"]

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_TAGS = re.compile(r"<(action|tool_call|answer_action)>(.*?)</\1>", re.DOTALL)
_CALL_START = re.compile(r"(?<![\w.])(?:pyautogui\.)?(" + "|".join(sorted(CALLS, key=len, reverse=True)) + r")\(")
_CLA_TYPES = frozenset(t.value for t in ActionType)


@dataclass
class ParsedReply:
    """The actions of a reply (CLA dicts, agent frame) and the form they were written in."""

    actions: list[dict[str, Any]] = field(default_factory=list)
    format: str = ""


class ReplyParser:
    """Parses replies of one episode (it remembers the pointer for ``dragTo`` and Claude-style drags)."""

    def __init__(self) -> None:
        self._claude = ClaudeAdapter(follow_env=True)
        self.position: tuple[int, int] | None = None

    def reset(self) -> None:
        """A new episode."""
        self._claude.reset()
        self.position = None

    def parse(self, reply: str) -> ParsedReply:
        """The actions of ``reply``.

        Raises:
            ReplyParseError: no action found, or one that is malformed (the message says which).
        """
        if not isinstance(reply, str) or not reply.strip():
            raise ReplyParseError("the model's reply is empty", reply=reply or "")
        candidates = [m.group(1) for m in _FENCE.finditer(reply)] + [m.group(2) for m in _TAGS.finditer(reply)]
        for text in candidates or [reply]:
            parsed = self._json(text) or self._calls(text)
            if parsed.actions:
                return parsed
        if candidates:
            parsed = self._json(reply) or self._calls(reply)
            if parsed.actions:
                return parsed
        raise ReplyParseError(f"no action in the model's reply: {_quote(reply)}", reply=reply)

    # ----------------------------------------------------------------- JSON

    def _json(self, text: str) -> ParsedReply | None:
        decoder = json.JSONDecoder()
        for start in [i for i, c in enumerate(text) if c in "{["]:
            try:
                value, _ = decoder.raw_decode(text, start)
            except json.JSONDecodeError:
                continue
            items = value if isinstance(value, list) else [value]
            if items and all(isinstance(item, dict) for item in items):
                parsed = self._json_actions(items, text)
                if parsed is not None:
                    return parsed
        return None

    def _json_actions(self, items: list[dict[str, Any]], text: str) -> ParsedReply | None:
        items = [item["arguments"] if isinstance(item.get("arguments"), dict) else item for item in items]
        if all(item.get("type") in _CLA_TYPES for item in items):
            for item in items:
                point = item.get("point")
                if isinstance(point, dict) and {"x", "y"} <= set(point):
                    self.position = (point["x"], point["y"])
            return ParsedReply(items, "cla-json")
        if all(item.get("action") in CLAUDE_ACTIONS for item in items):
            actions: list[dict[str, Any]] = []
            for item in items:
                try:
                    converted = self._claude.convert(item)
                except ValueError as exc:
                    raise ReplyParseError(f"{exc} in the model's reply: {_quote(text)}", reply=text) from None
                for action in converted if isinstance(converted, list) else [converted]:
                    actions.append(action.model_dump(mode="json", exclude_none=True))
            if self._claude.position is not None:
                self.position = (self._claude.position.x, self._claude.position.y)
            return ParsedReply(actions, "computer-use-json")
        return None

    # ----------------------------------------------------------------- calls

    def _calls(self, text: str) -> ParsedReply:
        actions: list[dict[str, Any]] = []
        position = 0
        while (match := _CALL_START.search(text, position)) is not None:
            end = _closing_paren(text, match.end() - 1)
            if end is None:
                raise ReplyParseError(f"unbalanced parentheses in {match.group(0)}...: {_quote(text)}", reply=text)
            source = text[match.start() : end + 1]
            try:
                node = ast.parse(source.strip(), mode="eval").body
                if not isinstance(node, ast.Call):
                    raise ValueError("not a call")
                args = [ast.literal_eval(a) for a in node.args]
                kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg is not None}
                converted = call_to_cla(match.group(1), args, kwargs, self)
            except (SyntaxError, ValueError, TypeError) as exc:
                raise ReplyParseError(f"cannot read the call {source!r}: {exc}", reply=text) from None
            actions.extend(converted)
            position = end + 1  # a call inside a string argument is text, not a call
        return ParsedReply(actions, "pyautogui" if actions else "")


def _closing_paren(text: str, open_index: int) -> int | None:
    depth, quote, escaped = 0, "", False
    for index in range(open_index, len(text)):
        char = text[index]
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index
    return None


def _quote(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[:limit] + "...")
