"""The QA controller: a text question on a rendered page and an answer box the agent types into.

The screenshot shows the question (and any passage set up by the task) above the answer typed so
far, rendered with Pillow: deterministic for the same state. ``type`` appends to the answer,
``press`` handles ``backspace``, ``enter`` (submits the answer as the final response) and
``ctrl+a``/``ctrl+u`` (clear); pointer actions move a virtual pointer; ``wait`` waits.
"""

from __future__ import annotations

import asyncio
import textwrap
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from hud_gym.actions import (
    ActionError,
    CLAAction,
    ClickAction,
    CustomAction,
    DragAction,
    KeyDownAction,
    KeyUpAction,
    MoveAction,
    PositionFetch,
    PressAction,
    ScreenshotFetch,
    ScrollAction,
    TypeAction,
    WaitAction,
)
from hud_gym.controllers.base import ActionOutcome, Controller, Frame
from hud_gym.task import Task

__all__ = ["QAController"]

_FONT_SIZE = 20
_MARGIN = 24


@lru_cache(maxsize=4)
def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=size)


def _wrap(text: str, width_px: int, font_size: int) -> list[str]:
    columns = max(10, int(width_px / (font_size * 0.55)))
    lines: list[str] = []
    for paragraph in text.split("\n"):
        lines.extend(textwrap.wrap(paragraph, columns, replace_whitespace=False) or [""])
    return lines


@lru_cache(maxsize=64)
def render_page(width: int, height: int, question: str, passage: str, answer: str) -> np.ndarray:
    """The QA page as an ``(height, width, 3)`` uint8 array (cached; callers must copy)."""
    image = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    font = _font(_FONT_SIZE)
    line_height = int(_FONT_SIZE * 1.35)
    y = _MARGIN
    text_width = width - 2 * _MARGIN
    answer_top = height - _MARGIN - 3 * line_height
    for heading, body in (("Question", question), ("Passage", passage)):
        if not body:
            continue
        draw.text((_MARGIN, y), heading, fill=(90, 90, 90), font=font)
        y += line_height
        for line in _wrap(body, text_width, _FONT_SIZE):
            if y > answer_top - 2 * line_height:
                draw.text((_MARGIN, y), "...", fill=(0, 0, 0), font=font)
                break
            draw.text((_MARGIN, y), line, fill=(0, 0, 0), font=font)
            y += line_height
        y += line_height // 2
    draw.rectangle((_MARGIN - 8, answer_top - 8, width - _MARGIN + 8, height - _MARGIN + 8), outline=(60, 110, 200), width=2)
    draw.text((_MARGIN, answer_top), "Answer", fill=(60, 110, 200), font=font)
    shown = _wrap(answer + "|", text_width, _FONT_SIZE)[-2:]
    for i, line in enumerate(shown):
        draw.text((_MARGIN, answer_top + (i + 1) * line_height), line, fill=(0, 0, 0), font=font)
    array = np.asarray(image, dtype=np.uint8)
    array.setflags(write=False)
    return array


class QAController(Controller):
    """Question answering on a rendered page; see the module docstring."""

    gym = "qa"

    def __init__(self, screen_size: tuple[int, int] = (1280, 720)) -> None:
        super().__init__(screen_size)
        self.question = ""
        self.passage = ""
        self.answer = ""
        self.pointer = (0, 0)
        self.held_keys: list[str] = []
        self.started = False

    async def start(self) -> None:
        self.started = True

    async def reset(self, task: Task | None, seed: int | None) -> None:
        from hud_gym.core.env import format_prompt

        self.question = format_prompt(task)
        self.passage = ""
        self.answer = ""
        self.pointer = (0, 0)
        self.held_keys = []

    def _clamp(self, x: int, y: int) -> tuple[int, int]:
        width, height = self.screen_size
        return min(max(x, 0), width - 1), min(max(y, 0), height - 1)

    async def step(self, action: CLAAction) -> ActionOutcome:
        if isinstance(action, TypeAction):
            self.answer += action.text
            if action.enter_after:
                return ActionOutcome(response=self.answer)
        elif isinstance(action, PressAction):
            return self._press(action.keys)
        elif isinstance(action, KeyDownAction):
            self.held_keys.extend(k for k in action.keys if k not in self.held_keys)
        elif isinstance(action, KeyUpAction):
            self.held_keys = [k for k in self.held_keys if k not in action.keys]
        elif isinstance(action, (ClickAction, ScrollAction)):
            if action.point is not None:
                self.pointer = self._clamp(action.point.x, action.point.y)
        elif isinstance(action, MoveAction):
            if action.point is not None:
                self.pointer = self._clamp(action.point.x, action.point.y)
            elif action.offset is not None:
                self.pointer = self._clamp(self.pointer[0] + action.offset.x, self.pointer[1] + action.offset.y)
        elif isinstance(action, DragAction):
            last = action.path[-1]
            self.pointer = self._clamp(last.x, last.y)
        elif isinstance(action, WaitAction):
            await asyncio.sleep(action.time / 1000)
        elif isinstance(action, PositionFetch):
            return ActionOutcome(info={"position": self.pointer})
        elif isinstance(action, ScreenshotFetch):
            pass
        elif isinstance(action, CustomAction):
            if action.action == "clear":
                self.answer = ""
            elif action.action == "submit":
                return ActionOutcome(response=self.answer)
            else:
                raise ActionError(f"custom action {action.action!r} is not supported by the qa gym (supported: clear, submit)")
        return ActionOutcome()

    def _press(self, keys: list[str]) -> ActionOutcome:
        modifiers = {k for k in keys + self.held_keys if k.startswith(("ctrl", "command"))}
        if modifiers and ("a" in keys or "u" in keys):
            self.answer = ""
        elif "backspace" in keys:
            self.answer = self.answer[:-1]
        elif "enter" in keys or "\n" in keys or "\r" in keys:
            return ActionOutcome(response=self.answer)
        elif len(keys) == 1 and len(keys[0]) == 1 and not modifiers:
            self.answer += keys[0]
        elif keys == ["space"]:
            self.answer += " "
        return ActionOutcome()

    async def observe(self) -> Frame:
        width, height = self.screen_size
        page = render_page(width, height, self.question, self.passage, self.answer)
        text = f"Passage: {self.passage}\n" if self.passage else ""
        return Frame(screenshot=page.copy(), text=f"{text}Answer so far: {self.answer}")

    async def close(self) -> None:
        self.started = False
