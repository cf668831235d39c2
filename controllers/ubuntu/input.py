"""The desktop controller's input: CLA pointer and keyboard actions as XTEST events.

Input goes through one persistent X connection (:mod:`.xinput`); keysyms the keymap lacks are put
on spare keycodes first (:meth:`DesktopInput.keys_ready`). Points outside the screen are clamped
to its edge. Scroll amounts are pixels, positive = down/right, one wheel click per
:data:`PIXELS_PER_WHEEL_CLICK` pixels (rounded; a non-zero amount scrolls at least one click). A
drag moves every ~20 px so that applications see the pointer travel.

Each handler returns :data:`Settled`: the outcome, and how long the screen must stay quiet before
the next observation (``None``: the action sent no input, nothing to wait for).
:class:`DesktopInput` works on the env's :class:`~.state.DesktopState`.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

from hud_gym.actions import (
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
from hud_gym.controllers.ubuntu.keysyms import char_keysym, key_keysym
from hud_gym.controllers.ubuntu.state import DesktopState
from hud_gym.controllers.ubuntu.xinput import BUTTONS, KEYMAP_SETTLE, XInput
from hud_gym.controllers.x11.connection import XConnection

__all__ = ["MAX_WHEEL_CLICKS", "PIXELS_PER_WHEEL_CLICK", "DesktopInput", "Settled", "wheel_clicks"]

Settled = tuple[ActionOutcome, float | None]
"""What an action handler returns: the outcome, and the quiet time the observation settles with."""

PIXELS_PER_WHEEL_CLICK = 100
"""Scroll pixels per mouse-wheel click (X buttons 4-7), as HUD's xdo executor."""
MAX_WHEEL_CLICKS = 200


def wheel_clicks(pixels: int) -> int:
    """Wheel clicks for a scroll of ``pixels``: ``pixels / PIXELS_PER_WHEEL_CLICK`` rounded half up,
    sign kept, at least one click for a non-zero amount (``1 -> 1``, ``150 -> 2``, ``250 -> 3``)."""
    if pixels == 0:
        return 0
    clicks = min(MAX_WHEEL_CLICKS, max(1, math.floor(abs(pixels) / PIXELS_PER_WHEEL_CLICK + 0.5)))
    return clicks if pixels > 0 else -clicks


class DesktopInput:
    """The handlers of the pointer and keyboard actions (a part of :class:`~.controller.UbuntuController`).

    One handler per CLA type (the table is :data:`~.controller.ACTIONS`), run on the X connection's
    thread. Each returns the outcome and the quiet time the observation should settle with
    (``None``: no input was sent).

    Args:
        state: the env's desktop state (its X connection and input).
    """

    def __init__(self, state: DesktopState) -> None:
        self.state = state

    async def click(self, action: ClickAction) -> Settled:
        conn, xin = self.state.io
        await self._holding(conn, xin, action.hold_keys, lambda: self._clicks(conn, xin, action))
        return ActionOutcome(), self.state.options.quiet

    async def press(self, action: PressAction) -> Settled:
        conn, xin = self.state.io
        await self.keys_ready(conn, xin, action.keys)
        xin.press(action.keys)
        return ActionOutcome(), self.state.options.quiet

    async def key_down(self, action: KeyDownAction) -> Settled:
        conn, xin = self.state.io
        await self.keys_ready(conn, xin, action.keys)
        xin.key_down(action.keys)
        return ActionOutcome(), self.state.options.quiet

    async def key_up(self, action: KeyUpAction) -> Settled:
        _, xin = self.state.io
        xin.key_up(action.keys)
        return ActionOutcome(), self.state.options.quiet

    async def type_text(self, action: TypeAction) -> Settled:
        conn, xin = self.state.io
        for chunk in xin.chunks(action.text.replace("\r\n", "\n")):
            await self._map_keysyms(conn, xin, [char_keysym(c) for c in chunk])
            xin.type_text(chunk)
        if action.enter_after:
            xin.press(["enter"])
        return ActionOutcome(), self.state.options.quiet

    async def scroll(self, action: ScrollAction) -> Settled:
        conn, xin = self.state.io
        await self._holding(conn, xin, action.hold_keys, lambda: self._scroll_at(xin, action))
        return ActionOutcome(), self.state.options.quiet

    async def move(self, action: MoveAction) -> Settled:
        _, xin = self.state.io
        if action.point is not None:
            xin.move(*self._clamp(xin, action.point))
        elif action.offset is not None:
            x, y, _ = xin.pointer()
            xin.move(*self._clamp(xin, Point(x=x + action.offset.x, y=y + action.offset.y)))
        return ActionOutcome(), self.state.options.quiet

    async def drag(self, action: DragAction) -> Settled:
        conn, xin = self.state.io
        await self._holding(conn, xin, action.hold_keys, lambda: self._drag_along(conn, xin, action))
        return ActionOutcome(), self.state.options.quiet

    async def wait(self, action: WaitAction) -> Settled:
        await asyncio.sleep(action.time / 1000)
        return ActionOutcome(), None

    async def position(self, action: PositionFetch) -> Settled:
        x, y, _mask = self.state.io[1].pointer()
        return ActionOutcome(info={"position": (x, y)}), None

    async def screenshot(self, action: ScreenshotFetch) -> Settled:
        return ActionOutcome(), None  # the observation after every step is the screenshot

    # ----------------------------------------------------------------- helpers

    def _clamp(self, xin: XInput, point: Point | None) -> tuple[int, int]:
        if point is None:
            x, y, _ = xin.pointer()
            return x, y
        width, height = self.state.screen_size
        return min(max(point.x, 0), width - 1), min(max(point.y, 0), height - 1)

    async def keys_ready(self, conn: XConnection, xin: XInput, keys: list[str]) -> None:
        """Map the keysyms of ``keys`` the keymap lacks (see :meth:`_map_keysyms`)."""
        await self._map_keysyms(conn, xin, [key_keysym(k) for k in keys])

    async def _map_keysyms(self, conn: XConnection, xin: XInput, keysyms: list[int]) -> None:
        """Put ``keysyms`` the keymap lacks on spare keycodes, with the waits of :mod:`.xinput`:
        after the last use of a reused keycode, and after the change, :data:`KEYMAP_SETTLE`."""
        plan = xin.plan(keysyms)
        if not plan:
            return
        delay = xin.reuse_delay(plan)
        if delay > 0:
            conn.sync()
            await asyncio.sleep(delay)
        xin.apply(plan)
        conn.sync()
        await asyncio.sleep(KEYMAP_SETTLE)

    async def _holding(self, conn: XConnection, xin: XInput, keys: list[str] | None, body: Any) -> None:
        """Run ``await body()`` with ``keys`` held (down in order, up in reverse order)."""
        await self.keys_ready(conn, xin, keys or [])
        codes = [c for c in xin.chord_keycodes([key_keysym(k) for k in keys or []]) if c not in xin.pressed]
        pressed: list[int] = []
        try:
            for code in codes:
                xin.key_event(code, True)
                pressed.append(code)
            await body()
        finally:
            for code in reversed(pressed):
                xin.key_event(code, False)

    async def _clicks(self, conn: XConnection, xin: XInput, action: ClickAction) -> None:
        x, y = self._clamp(xin, action.point)
        xin.move(x, y)
        delays = action.pattern or []
        number = BUTTONS[action.button]
        for i in range(len(delays) + 1):
            xin.click(number)
            if i < len(delays):
                conn.display.flush()  # the server timestamps each click when it gets it
                await asyncio.sleep(delays[i] / 1000)

    async def _scroll_at(self, xin: XInput, action: ScrollAction) -> None:
        x, y = self._clamp(xin, action.point)
        xin.move(x, y)
        if action.scroll is None:
            return
        for amount, (negative, positive) in ((action.scroll.y, (4, 5)), (action.scroll.x, (6, 7))):
            clicks = wheel_clicks(amount)
            for _ in range(abs(clicks)):
                xin.click(positive if clicks > 0 else negative)

    async def _drag_along(self, conn: XConnection, xin: XInput, action: DragAction) -> None:
        path = [self._clamp(xin, p) for p in action.path]
        delays = action.pattern or []
        xin.move(*path[0])
        xin.button(1, True)
        try:
            previous = path[0]
            for i, point in enumerate(path[1:]):
                if delays:
                    conn.display.flush()
                    await asyncio.sleep(delays[i % len(delays)] / 1000)
                # Intermediate motion (every ~20 px) so applications see the pointer travel.
                steps = max(1, min(20, math.ceil(math.hypot(point[0] - previous[0], point[1] - previous[1]) / 20)))
                for s in range(1, steps + 1):
                    xin.move(
                        round(previous[0] + (point[0] - previous[0]) * s / steps),
                        round(previous[1] + (point[1] - previous[1]) * s / steps),
                    )
                previous = point
        finally:
            xin.button(1, False)
