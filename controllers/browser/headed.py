"""The headed capture path (``capture="headed"``): Chromium draws into a private Xvfb, frames are grabbed
through MIT-SHM instead of being JPEG-encoded by the browser for CDP.

A :class:`HeadedDisplay` is the X server of one headed browser, shared by up to
:data:`~.tiles.TILES_PER_BROWSER` envs of one process: its own Xvfb (no TCP, a fresh
MIT-MAGIC-COOKIE in a 0600 authority file that only Chromium and this process read: another user
or an agent's shell cannot connect to it) whose screen is a grid of tiles, one virtual monitor per
env (:mod:`.tiles`). Each env's windows are fullscreen on its tile (``--kiosk``); the page keeps the
env's viewport (Playwright's viewport emulation), drawn at the tile's top-left, where the grab is.

A :class:`HeadedView` is one env's view of its tile: an X connection that follows the damage of
the viewport's rectangle (XDamage raw rectangles on the root window; other envs' drawing elsewhere
on the screen does not count) and a MIT-SHM grab of that rectangle.
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
import collections
import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.browser.tiles import MIN_WINDOW_WIDTH, TileLayout
from hud_gym.controllers.x11.capture import ScreenCapture
from hud_gym.controllers.x11.connection import X_ERRORS, XConnection
from hud_gym.controllers.x11.monitors import set_monitors
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
    "TileLayout",
    "frame_state_expression",
    "xvfb_available",
]

HEADED_ARGS: tuple[str, ...] = (
    "--kiosk",  # no tab strip or toolbar: a window fills its monitor (its env's tile)
    "--window-position=0,0",  # a new window opens on the parking monitor
    "--force-device-scale-factor=1",
    "--hide-scrollbars",
)
"""Flags a headed browser gets on top of :data:`~.binary.LAUNCH_ARGS` (and ``--window-size``)."""

FIRST_PAINT = 0.050
"""Seconds the first damage after an action is waited for once its frame was committed (an action
that changes nothing on screen pays it, idle; 10 ms left 1 stale frame in ~2,000 at load 20-60), at
least: a view waits up to twice the longest first-damage delay of the last :data:`LATENCY_WINDOW`
steps of its display's views, up to :data:`FIRST_PAINT_LIMIT`; and that limit for its first
:data:`LATENCY_SAMPLES` steps while the display has fewer samples (one browser composites every
env's window: under load its draws come later)."""
FIRST_PAINT_LIMIT = 0.25
LATENCY_WINDOW = 32
LATENCY_SAMPLES = 8
_LATENCIES: dict[str, collections.deque[float]] = {}
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


def frame_state_expression(state_expression: str) -> str:
    """A ``Runtime.evaluate`` expression resolving to ``state_expression``'s value in the page's
    second animation frame (await it with ``awaitPromise``)."""
    return f"new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r({state_expression}))))"


class HeadedDisplay:
    """The private Xvfb of one headed browser, its screen cut into ``layout``'s tiles; see the
    module docstring."""

    def __init__(self, layout: TileLayout) -> None:
        self.layout = layout
        self.viewport = layout.viewport
        self.screen = layout.screen
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
        return self.layout.window_size_arg()

    async def start(self) -> None:
        """Start Xvfb with a fresh cookie, authorise this process's connections to it, and declare
        the tiles as monitors.

        Raises:
            ControllerError: Xvfb did not start, or has no RandR 1.5.
        """
        auth = write_display_authority(self.folder / "auth", self.cookie)
        self.xvfb = await start_xvfb(self.screen, self.folder / "xvfb.log", auth=auth)
        process_authority().add(self.xvfb.number, self.cookie)
        with process_authority().connecting():
            connection = XConnection(self.xvfb.name)
        try:
            set_monitors(connection.display, self.layout.monitors())
        except X_ERRORS as exc:
            raise ControllerError(f"could not declare the tiles of {self.xvfb.name}: {exc}") from exc
        finally:
            connection.close()

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
    """One env's view of its tile (the viewport at ``origin``): damage tracking and MIT-SHM grabs."""

    def __init__(self, display: str, viewport: tuple[int, int], origin: tuple[int, int] = (0, 0)) -> None:
        self.display = display
        self.viewport = viewport
        self.origin = origin
        with process_authority().connecting():
            self.x = XConnection(display, region=(*origin, *viewport))
            self.capture = ScreenCapture(display, viewport, origin)
        self.regrabs = 0
        """Grabs made again because damage arrived during one (for the benchmarks)."""
        self.latencies = _LATENCIES.setdefault(display, collections.deque(maxlen=LATENCY_WINDOW))
        """Seconds from the frame round trip to the first damage, of the display's last steps that had one."""
        self.settles = 0

    @property
    def first_paint(self) -> float:
        """How long the first damage after an action is waited for (:data:`FIRST_PAINT`)."""
        if len(self.latencies) < LATENCY_SAMPLES and self.settles < LATENCY_SAMPLES:
            return FIRST_PAINT_LIMIT
        return max(FIRST_PAINT, min(FIRST_PAINT_LIMIT, 2 * max(self.latencies, default=0.0)))

    def begin(self) -> None:
        """Forget damage reported before an action (call before its input)."""
        self.x.begin()

    async def settle(self, quiet: float = QUIET, limit: float = SETTLE_LIMIT) -> None:
        """Step 2 of the module docstring (after the frame round trip); never more than ``limit``
        s (an animating page, or one that keeps opening dialogs, never goes quiet)."""
        self.settles += 1
        stats = await self.x.settle(first_paint=self.first_paint, quiet=quiet, limit=max(limit, self.first_paint))
        if stats["first_damage"] >= 0:
            self.latencies.append(stats["first_damage"])

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
