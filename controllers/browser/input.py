"""The browser controller's input: CLA pointer and keyboard actions as real (trusted) input events.

Actions go through Playwright's mouse and keyboard at screen-pixel coordinates of the viewport
(points outside it are clamped to its edge); the back and forward mouse buttons, which
Playwright's mouse lacks, through the DevTools ``Input`` domain. A drag moves in steps (at most
:data:`_MAX_STEPS` per segment) so that draggables and HTML5 drag-and-drop see the motion.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Awaitable, Callable
from typing import Literal, cast

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from hud_gym.actions import (
    ActionError,
    ClickAction,
    DragAction,
    KeyDownAction,
    KeyUpAction,
    MoveAction,
    Point,
    PositionFetch,
    PressAction,
    ScreenshotFetch,
    ScrollAction,
    TypeAction,
    WaitAction,
)
from hud_gym.controllers.base import ActionOutcome
from hud_gym.controllers.browser.keys import playwright_keys
from hud_gym.controllers.browser.state import BrowserState
from hud_gym.controllers.browser.tabs import BrowserTabs

__all__ = ["BrowserInput"]

# Drag interpolation: one mousemove per _STEP_PX pixels, at most _MAX_STEPS per path segment.
# Chromium delivers mousemoves once per frame (~16 ms each), so a few suffice: draggables,
# sliders and HTML5 drag-and-drop start after a few pixels of motion.
_STEP_PX = 40
_MAX_STEPS = 5


class BrowserInput:
    """The handlers of the pointer and keyboard actions on ``state``'s active tab (``tabs`` gives
    a tab's DevTools session); the keys held down by ``key_down`` are its own."""

    def __init__(self, state: BrowserState, tabs: BrowserTabs) -> None:
        self.state = state
        self.tabs = tabs
        self._held_keys: list[str] = []

    # One handler per CLA type (the table is ``controller.ACTIONS``); each returns the outcome.

    async def click(self, action: ClickAction) -> ActionOutcome:
        page = self.state.page
        await self._holding(page, action.hold_keys, lambda: self._click_at(page, action))
        return ActionOutcome()

    async def press(self, action: PressAction) -> ActionOutcome:
        await self._press_keys(self.state.page, playwright_keys(action.keys))
        return ActionOutcome()

    async def key_down(self, action: KeyDownAction) -> ActionOutcome:
        page = self.state.page
        for key in playwright_keys(action.keys):
            if key not in self._held_keys:
                await page.keyboard.down(key)
                self._held_keys.append(key)
        return ActionOutcome()

    async def key_up(self, action: KeyUpAction) -> ActionOutcome:
        page = self.state.page
        for key in reversed(playwright_keys(action.keys)):
            await page.keyboard.up(key)
            if key in self._held_keys:
                self._held_keys.remove(key)
        return ActionOutcome()

    async def type_text(self, action: TypeAction) -> ActionOutcome:
        page = self.state.page
        if action.text:
            await page.keyboard.type(action.text)
        if action.enter_after:
            await page.keyboard.press("Enter")
        return ActionOutcome()

    async def scroll(self, action: ScrollAction) -> ActionOutcome:
        page = self.state.page
        await self._holding(page, action.hold_keys, lambda: self._scroll_at(page, action))
        return ActionOutcome()

    async def move(self, action: MoveAction) -> ActionOutcome:
        if action.point is not None:
            target = self._clamp(action.point)
        elif action.offset is not None:
            target = self._clamp(
                Point(x=self.state.pointer[0] + action.offset.x, y=self.state.pointer[1] + action.offset.y)
            )
        else:
            return ActionOutcome()
        await self.state.page.mouse.move(*target)  # a jump, as xdotool/pyautogui moves with no duration
        self.state.pointer = target
        return ActionOutcome()

    async def drag(self, action: DragAction) -> ActionOutcome:
        page = self.state.page
        await self._holding(page, action.hold_keys, lambda: self._drag_along(page, action))
        return ActionOutcome()

    async def wait(self, action: WaitAction) -> ActionOutcome:
        await asyncio.sleep(action.time / 1000)
        return ActionOutcome()

    async def position(self, action: PositionFetch) -> ActionOutcome:
        return ActionOutcome(info={"position": self.state.pointer})

    async def screenshot(self, action: ScreenshotFetch) -> ActionOutcome:
        return ActionOutcome()  # the observation after every step is the screenshot

    async def release(self, page: Page) -> None:
        """Release the held keys and put the pointer back at ``(0, 0)`` (a reset)."""
        for key in reversed(self._held_keys):
            with contextlib.suppress(PlaywrightError):
                await page.keyboard.up(key)
        self._held_keys = []
        self.state.pointer = (0, 0)
        with contextlib.suppress(PlaywrightError):
            await page.mouse.move(0, 0)

    # ----------------------------------------------------------------- helpers

    def _clamp(self, point: Point | None) -> tuple[int, int]:
        if point is None:
            return self.state.pointer
        width, height = self.state.screen_size
        return min(max(point.x, 0), width - 1), min(max(point.y, 0), height - 1)

    async def _holding(self, page: Page, hold_keys: list[str] | None, body: Callable[[], Awaitable[None]]) -> None:
        """Run ``body()`` with ``hold_keys`` pressed (down in order, up in reverse order)."""
        keys = [k for k in playwright_keys(hold_keys) if k not in self._held_keys]
        pressed: list[str] = []
        try:
            for key in keys:
                await page.keyboard.down(key)
                pressed.append(key)
            await body()
        finally:
            for key in reversed(pressed):
                with contextlib.suppress(PlaywrightError):
                    await page.keyboard.up(key)

    async def _click_at(self, page: Page, action: ClickAction) -> None:
        x, y = self._clamp(action.point)
        delays = action.pattern or []
        if delays or action.button in ("back", "forward"):
            await page.mouse.move(x, y)
        self.state.pointer = (x, y)
        for i in range(len(delays) + 1):
            # click_count rises with each click, so dblclick (and triple-click selection) fire.
            if action.button in ("back", "forward"):
                await self._side_button(page, x, y, action.button, i + 1)
            elif not delays:
                await page.mouse.click(x, y, button=_main_button(action.button))  # one driver round trip
            else:
                await page.mouse.down(button=_main_button(action.button), click_count=i + 1)
                await page.mouse.up(button=_main_button(action.button), click_count=i + 1)
            if i < len(delays):
                await asyncio.sleep(delays[i] / 1000)

    async def _side_button(self, page: Page, x: int, y: int, button: str, count: int) -> None:
        """Back/forward mouse buttons (Playwright's mouse has only left/middle/right)."""
        session = await self.tabs.session(page)
        if session is None:
            raise ActionError("the active tab has no DevTools session")
        mask = 8 if button == "back" else 16
        base = {"x": x, "y": y, "button": button, "clickCount": count}
        await session.send("Input.dispatchMouseEvent", {"type": "mousePressed", "buttons": mask, **base})
        await session.send("Input.dispatchMouseEvent", {"type": "mouseReleased", "buttons": 0, **base})

    async def _press_keys(self, page: Page, keys: list[str]) -> None:
        if len(keys) == 1:
            await page.keyboard.press(keys[0])
            return
        pressed: list[str] = []
        try:
            for key in keys:
                await page.keyboard.down(key)
                pressed.append(key)
        finally:
            for key in reversed(pressed):
                with contextlib.suppress(PlaywrightError):
                    await page.keyboard.up(key)

    async def _scroll_at(self, page: Page, action: ScrollAction) -> None:
        x, y = self._clamp(action.point)
        await page.mouse.move(x, y)
        self.state.pointer = (x, y)
        if action.scroll is not None and (action.scroll.x or action.scroll.y):
            await page.mouse.wheel(action.scroll.x, action.scroll.y)
            # The compositor scrolls at once; the page's scrollX/Y follow at its next frame.
            session = await self.tabs.session(page)
            if session is not None:
                await session.send(
                    "Runtime.evaluate",
                    {"expression": "new Promise(r => requestAnimationFrame(() => r(0)))", "awaitPromise": True},
                )

    @staticmethod
    def _steps(start: tuple[int, int], end: tuple[int, int]) -> int:
        distance = math.hypot(end[0] - start[0], end[1] - start[1])
        return max(1, min(_MAX_STEPS, math.ceil(distance / _STEP_PX)))

    async def _drag_along(self, page: Page, action: DragAction) -> None:
        path = [self._clamp(p) for p in action.path]
        delays = action.pattern or []
        await page.mouse.move(*path[0])
        self.state.pointer = path[0]
        await page.mouse.down()
        try:
            for i, point in enumerate(path[1:]):
                if delays:
                    await asyncio.sleep(delays[i % len(delays)] / 1000)
                await page.mouse.move(*point, steps=self._steps(self.state.pointer, point))
                self.state.pointer = point
        finally:
            await page.mouse.up()


def _main_button(button: str) -> Literal["left", "middle", "right"]:
    """A button Playwright's mouse presses (back and forward go through CDP: ``_side_button``)."""
    return cast('Literal["left", "middle", "right"]', button)
