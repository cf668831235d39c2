"""The headed capture path (``capture="headed"``): Chromium draws into a private Xvfb, frames are grabbed
through MIT-SHM instead of being JPEG-encoded by the browser for CDP.

A :class:`HeadedDisplay` is the X server of one headed browser: its own Xvfb (no TCP, a fresh
MIT-MAGIC-COOKIE in a 0600 authority file that only Chromium and this process read: another user
or an agent's shell cannot connect to it). The screen is one pixel larger than the window each way
(Chromium on X11 makes a window that exactly covers the screen one pixel smaller) and at least
:data:`MIN_WINDOW_WIDTH` wide (Chromium makes no narrower window); the page keeps the env's
viewport (Playwright's viewport emulation), drawn at the window's top-left, where the grab is.

A :class:`HeadedView` is one env's view of its display: an X connection that follows the
screen's damage (XDamage on the root window) and a MIT-SHM grab of the viewport's rectangle.
:meth:`HeadedView.observe` makes an observation never stale:

1. the state round trip (title, elements) resolves in the page's second ``requestAnimationFrame``
   after the action: the frame holding every DOM change the action made has been committed;
2. the X server must then have the pixels: damage since the action began must have arrived (else
   it is waited for up to :data:`FIRST_PAINT` s: an action that changed nothing pays this, idle)
   and gone :data:`QUIET` s quiet (``XSync`` first, so the server has handled what it received);
   After a step that answered a dialog, quiet means :data:`DIALOG_QUIET` (the dialog box's
   removal is drawn by the browser's UI, outside the page's frames);
3. after the grab, an ``XSync`` round trip: any damage the server handled in the meantime (a
   late or split ``PutImage`` of Chromium's compositor) means the grab may mix two frames, so it
   is made again, until a grab is followed by no damage.

Headed Chromium keeps drawing at 60 Hz, so step 1 costs one or two frame periods of wall time
(idle, not CPU). Measured in ``benchmarks/browser_capture.py`` and ``benchmarks/README.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.x11.capture import ScreenCapture
from hud_gym.controllers.x11.connection import X_ERRORS, XConnection
from hud_gym.controllers.x11.xauth import new_cookie, process_authority, write_display_authority
from hud_gym.controllers.x11.xvfb import XvfbServer, start_xvfb

__all__ = [
    "DIALOG_QUIET",
    "DIALOG_SETTLE_LIMIT",
    "FIRST_PAINT",
    "HEADED_ARGS",
    "MIN_WINDOW_WIDTH",
    "QUIET",
    "HeadedDisplay",
    "HeadedView",
    "frame_state_expression",
    "xvfb_available",
]

HEADED_ARGS: tuple[str, ...] = (
    "--kiosk",  # no tab strip or toolbar: the window is the page
    "--window-position=0,0",
    "--force-device-scale-factor=1",
    "--hide-scrollbars",
)
"""Flags a headed browser gets on top of :data:`~.binary.LAUNCH_ARGS` (and ``--window-size``)."""

SCREEN_PAD = 1
MIN_WINDOW_WIDTH = 500
FIRST_PAINT = 0.050
"""Seconds the first damage after an action is waited for once its frame was committed (an action
that changes nothing on screen pays it, idle; 10 ms left 1 stale frame in ~2,000 at load 20-60)."""
QUIET = 0.001
"""Seconds without damage after which the X server is taken to hold the whole frame."""
DIALOG_QUIET = 0.1
"""The same after a step that answered a dialog: Chromium's dialog box is removed by the browser's
UI, which the page's animation frames do not cover (its fade is turned off through GTK's
``gtk-enable-animations=0``; measured: 49 of 60 dialog steps showed the fading box without it, 0
with it)."""
MAX_REGRABS = 8
SETTLE_LIMIT = 0.3
DIALOG_SETTLE_LIMIT = 0.8
"""The settle limit after a dialog: its box fades out over several frames, slower on a loaded box."""


def xvfb_available() -> bool:
    """True when Xvfb is installed (the headed path can run)."""
    return shutil.which("Xvfb") is not None


def screen_size(viewport: tuple[int, int]) -> tuple[int, int]:
    """The Xvfb screen of a headed browser whose pages have ``viewport``."""
    return max(viewport[0], MIN_WINDOW_WIDTH) + SCREEN_PAD, viewport[1] + SCREEN_PAD


def frame_state_expression(state_expression: str) -> str:
    """A ``Runtime.evaluate`` expression resolving to ``state_expression``'s value in the page's
    second animation frame (await it with ``awaitPromise``)."""
    return f"new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r({state_expression}))))"


class HeadedDisplay:
    """The private Xvfb of one headed browser; see the module docstring."""

    def __init__(self, viewport: tuple[int, int]) -> None:
        self.viewport = viewport
        self.screen = screen_size(viewport)
        self.cookie = new_cookie()
        self.folder = Path(tempfile.mkdtemp(prefix="hud-gym-headed-"))
        self.xvfb: XvfbServer | None = None

    @property
    def name(self) -> str:
        """The display name (``":57"``)."""
        if self.xvfb is None:
            raise ControllerError("the headed display is not started")
        return self.xvfb.name

    def browser_env(self) -> dict[str, str]:
        """The environment Chromium is launched with: this process's, with the display, its cookie,
        and a GTK configuration without UI animations (a dialog box goes at once, not in a fade
        the page's frames do not cover)."""
        config = self.folder / "config"
        for gtk in ("gtk-3.0", "gtk-4.0"):
            (config / gtk).mkdir(parents=True, exist_ok=True)
            (config / gtk / "settings.ini").write_text("[Settings]\ngtk-enable-animations=0\n")
        return {
            **os.environ,
            "DISPLAY": self.name,
            "XAUTHORITY": str(self.folder / "auth" / "Xauthority"),
            "XDG_CONFIG_HOME": str(config),
        }

    def window_size_arg(self) -> str:
        return f"--window-size={self.screen[0] - SCREEN_PAD},{self.screen[1] - SCREEN_PAD}"

    async def start(self) -> None:
        """Start Xvfb with a fresh cookie and authorise this process's connections to it.

        Raises:
            ControllerError: Xvfb did not start.
        """
        auth = write_display_authority(self.folder / "auth", self.cookie)
        self.xvfb = await start_xvfb(self.screen, self.folder / "xvfb.log", auth=auth)
        process_authority().add(self.xvfb.number, self.cookie)

    async def stop(self) -> None:
        """Stop Xvfb and remove the cookie (idempotent)."""
        xvfb, self.xvfb = self.xvfb, None
        try:
            if xvfb is not None:
                process_authority().remove(xvfb.number)
                await xvfb.stop()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


class HeadedView:
    """One env's view of its headed browser's display: damage tracking and MIT-SHM grabs."""

    def __init__(self, display: str, viewport: tuple[int, int]) -> None:
        self.display = display
        self.viewport = viewport
        with process_authority().connecting():
            self.x = XConnection(display)
            self.capture = ScreenCapture(display, viewport)
        self.regrabs = 0
        """Grabs made again because damage arrived during one (for the benchmarks)."""

    def begin(self) -> None:
        """Forget damage reported before an action (call before its input)."""
        self.x.begin()

    async def settle(self, quiet: float = QUIET, limit: float = SETTLE_LIMIT) -> None:
        """Step 2 of the module docstring (after the frame round trip); never more than ``limit``
        s (an animating page, or one that keeps opening dialogs, never goes quiet)."""
        await self.x.settle(first_paint=FIRST_PAINT, quiet=quiet, limit=limit)

    def grab(self) -> np.ndarray:
        """Step 3: a grab no damage followed."""
        try:
            for _ in range(MAX_REGRABS):
                image = self.capture.grab()
                before = self.x.damage_events
                self.x.display.sync()
                self.x.drain()
                if self.x.damage_events == before:
                    return image
                self.regrabs += 1
        except X_ERRORS as exc:
            raise ControllerError(f"the X server of {self.display} is gone: {exc}") from exc
        return image  # a page animating without pause: every frame is as fresh as the last

    async def observe(self, state: asyncio.Future[Any]) -> tuple[Any, np.ndarray]:
        """``(await state, a fresh frame)``, where ``state`` is the frame round trip (step 1)."""
        result = await state
        await self.settle()
        return result, self.grab()

    def close(self) -> None:
        """Close the connection and the grab (idempotent)."""
        with contextlib.suppress(Exception):
            self.capture.close()
        self.x.close()
