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
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from hud_gym.actions import (
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
from hud_gym.controllers.dispatch import ActionTable, CustomActions
from hud_gym.envs.qa_options import QAOptions
from hud_gym.task import Task

__all__ = ["QAController"]

_FONT_SIZE = 20
_MARGIN = 24


@lru_cache(maxsize=4)
def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=size)


def _wrap(text: str, width_px: int, font_size: int, max_lines: int) -> list[str]:
    """The first ``max_lines`` lines of ``text`` wrapped to ``width_px``: only the text that can
    show is wrapped (``textwrap`` is quadratic in a long word; a 24 MB prompt took minutes)."""
    columns = max(10, int(width_px / (font_size * 0.55)))
    lines: list[str] = []
    start = 0
    while len(lines) < max_lines and start <= len(text):
        chunk = (max_lines + 1) * columns
        end = text.find("\n", start, start + chunk + 1)
        stop = end if end >= 0 else min(len(text), start + chunk)
        lines.extend(textwrap.wrap(text[start:stop], columns, replace_whitespace=False) or [""])
        start = (end + 1) if end >= 0 else (len(text) + 1 if stop >= len(text) else stop)
    return lines[:max_lines]


def _wrap_tail(text: str, width_px: int, font_size: int, max_lines: int) -> list[str]:
    """The last ``max_lines`` lines of ``text`` wrapped to ``width_px`` (only its tail is wrapped)."""
    columns = max(10, int(width_px / (font_size * 0.55)))
    lines: list[str] = []
    for paragraph in text[-(max_lines + 1) * columns :].split("\n"):
        lines.extend(textwrap.wrap(paragraph, columns, replace_whitespace=False) or [""])
    return lines[-max_lines:]


@lru_cache(maxsize=8)
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
        for line in _wrap(body, text_width, _FONT_SIZE, max(1, (answer_top - y) // line_height + 2)):
            if y > answer_top - 2 * line_height:
                draw.text((_MARGIN, y), "...", fill=(0, 0, 0), font=font)
                break
            draw.text((_MARGIN, y), line, fill=(0, 0, 0), font=font)
            y += line_height
        y += line_height // 2
    draw.rectangle(
        (_MARGIN - 8, answer_top - 8, width - _MARGIN + 8, height - _MARGIN + 8), outline=(60, 110, 200), width=2
    )
    draw.text((_MARGIN, answer_top), "Answer", fill=(60, 110, 200), font=font)
    shown = _wrap_tail(answer + "|", text_width, _FONT_SIZE, 2)
    for i, line in enumerate(shown):
        draw.text((_MARGIN, answer_top + (i + 1) * line_height), line, fill=(0, 0, 0), font=font)
    array = np.asarray(image, dtype=np.uint8)
    array.setflags(write=False)
    return array


class QAController(Controller):
    """Question answering on a rendered page; see the module docstring."""

    gym = "qa"

    def __init__(self, screen_size: tuple[int, int] = (1280, 720), options: QAOptions | None = None) -> None:
        super().__init__(screen_size)
        self.options = options if options is not None else QAOptions()
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
        return await ACTIONS.run(self, action)

    # One handler per CLA type (the table is :data:`ACTIONS`, after the class).

    async def _type(self, action: TypeAction) -> ActionOutcome:
        self.answer += action.text
        return ActionOutcome(response=self.answer) if action.enter_after else ActionOutcome()

    async def _press(self, action: PressAction) -> ActionOutcome:
        return self._press_keys(action.keys)

    async def _key_down(self, action: KeyDownAction) -> ActionOutcome:
        self.held_keys.extend(k for k in action.keys if k not in self.held_keys)
        return ActionOutcome()

    async def _key_up(self, action: KeyUpAction) -> ActionOutcome:
        self.held_keys = [k for k in self.held_keys if k not in action.keys]
        return ActionOutcome()

    async def _point_at(self, action: ClickAction | ScrollAction) -> ActionOutcome:
        if action.point is not None:
            self.pointer = self._clamp(action.point.x, action.point.y)
        return ActionOutcome()

    async def _move(self, action: MoveAction) -> ActionOutcome:
        if action.point is not None:
            self.pointer = self._clamp(action.point.x, action.point.y)
        elif action.offset is not None:
            self.pointer = self._clamp(self.pointer[0] + action.offset.x, self.pointer[1] + action.offset.y)
        return ActionOutcome()

    async def _drag(self, action: DragAction) -> ActionOutcome:
        last = action.path[-1]
        self.pointer = self._clamp(last.x, last.y)
        return ActionOutcome()

    async def _wait(self, action: WaitAction) -> ActionOutcome:
        await asyncio.sleep(action.time / 1000)
        return ActionOutcome()

    async def _position(self, action: PositionFetch) -> ActionOutcome:
        return ActionOutcome(info={"position": self.pointer})

    async def _screenshot(self, action: ScreenshotFetch) -> ActionOutcome:
        return ActionOutcome()

    async def _custom(self, action: CustomAction) -> ActionOutcome:
        return await CUSTOM.run(self, action)

    async def _clear(self, args: dict[str, Any]) -> ActionOutcome:
        self.answer = ""
        return ActionOutcome()

    async def _submit(self, args: dict[str, Any]) -> ActionOutcome:
        return ActionOutcome(response=self.answer)

    def _press_keys(self, keys: list[str]) -> ActionOutcome:
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


ACTIONS: ActionTable[QAController, ActionOutcome] = ActionTable(
    QAController.gym,
    {
        ClickAction: QAController._point_at,
        PressAction: QAController._press,
        KeyDownAction: QAController._key_down,
        KeyUpAction: QAController._key_up,
        TypeAction: QAController._type,
        ScrollAction: QAController._point_at,
        MoveAction: QAController._move,
        DragAction: QAController._drag,
        WaitAction: QAController._wait,
        PositionFetch: QAController._position,
        ScreenshotFetch: QAController._screenshot,
        CustomAction: QAController._custom,
    },
)
"""What :meth:`QAController.step` runs for each CLA type (``ResponseAction`` never reaches a controller)."""

CUSTOM: CustomActions[QAController, ActionOutcome] = CustomActions(
    QAController.gym,
    {
        "clear": QAController._clear,
        "submit": QAController._submit,
    },
)
"""The QA gym's custom actions: ``clear`` empties the answer, ``submit`` submits it."""
