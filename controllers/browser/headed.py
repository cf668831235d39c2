"""The headed capture path (``capture="headed"``): Chromium draws into a private Xvfb, frames are grabbed
through MIT-SHM instead of being JPEG-encoded by the browser for CDP.

A :class:`HeadedDisplay` is the X server of one headed browser, shared by up to
:data:`~.tiles.TILES_PER_BROWSER` envs of one process: its own Xvfb (no TCP, a fresh
MIT-MAGIC-COOKIE in a 0600 authority file that only Chromium and this process read: another user
or an agent's shell cannot connect to it) whose screen is a grid of tiles, one virtual monitor per
env (:mod:`.tiles`). Each env's windows are fullscreen on its tile (``--kiosk``); the page keeps the
env's viewport (Playwright's viewport emulation), drawn at the tile's top-left, where the grab is.

A :class:`HeadedView` is one env's view of its tile: an X connection that follows the damage of
the tile's rectangle (XDamage raw rectangles on the root window; other envs' drawing elsewhere on
the screen does not count) and a MIT-SHM grab of that rectangle. The page's viewport is
:data:`MARKER_ROWS` row taller than the observation (``innerHeight`` is one more than the
observation's height; the elements list leaves that row out), and that row is the *frame marker*
(:data:`MARKER_JS`). An observation is proven fresh, not waited for:

1. the state round trip (title, elements) runs in a ``setTimeout(0)`` queued in the page's next
   animation frame after the action (:func:`frame_state_expression`), and in the same task sets
   the marker to this step's number ``k`` (24 bits, a fresh random start per view): a coloured
   strip whose left half is ``k``'s colour and right half the complement's;
2. the tile, marker row included, is grabbed (one ``XShmGetImage``); the grab is this step's frame
   iff its marker row shows ``k``. Else the view waits for damage of the tile (at most
   :data:`MARKER_POLL` s between grabs) and grabs again, for up to :data:`MARKER_LIMIT` s;
3. after a grab that carries ``k``, an ``XSync`` round trip: damage the server handled during the
   grab (a later frame being drawn) means it may mix two frames, both after ``k``, so it is made
   again (up to :data:`MAX_REGRABS` times; each must carry ``k``).

Why a grab that shows ``k`` is fresh: ``k`` was set after the action's input had been handled and
after the animation-frame callbacks and due timers it queued, in one task with the state read;
Chromium's compositor draws a frame from one committed main-thread state, so a frame holding the
marker's change holds every DOM change made before it; the software compositor puts each frame
(one damaged rectangle around every change of it, the marker row included) into the window with
``PutImage`` (Chromium's ``X11SoftwareBitmapPresenter::EndPaint`` with ``--no-xshm``, see
:data:`HEADED_ARGS`; Xvfb runs one request at a time, so a grab sees a put wholly or not at all, and
a frame split into several puts goes top to bottom, its marker row last; step 3 covers the rest);
and no earlier frame of this env's windows ever showed ``k`` (each step has a new number, only the
active tab is marked, and the two halves together never match a uniform row of a page). It also
proves the window is in place: the strip spans the viewport's bottom row at the tile's origin only
when the active tab's window is there and on top (a new popup's first frame, a re-placed window).

What the marker does not cover: a JavaScript dialog's box is drawn by the browser's UI, not the
page's frames. After a step that answered a dialog the view also waits :data:`DIALOG_QUIET` s
without damage (up to :data:`DIALOG_SETTLE_LIMIT` s), then checks the marker again. A document that
cannot show the marker (not HTML, e.g. an SVG file; or its root element filtered, faded or
transformed, which :data:`MARKER_JS` checks) gets the old damage settle
(:data:`FALLBACK_FIRST_PAINT`, :data:`FALLBACK_QUIET`) and its frame is flagged: the step's
``info["frame_unverified"] = "unmarked"`` (and :attr:`HeadedView.unverified` counts it); a frame
whose marker did not come within :data:`MARKER_LIMIT` s is returned as the last grab with
``"late"``. Never a silent stale frame.

An action that changes nothing still changes the marker, so its frame comes at the next vsync:
no first-paint wait. Headed Chromium draws at 60 Hz, so a step costs one or two frame periods of
wall time (idle, not CPU). Measured in ``benchmarks/browser_capture.py`` and ``benchmarks/README.md``.
"""

from __future__ import annotations

import os
import secrets
import shutil
import time

import numpy as np

from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.browser.tiles import MIN_WINDOW_WIDTH, TileLayout
from hud_gym.controllers.temp_folders import make_temp_folder
from hud_gym.controllers.x11.capture import ScreenCapture
from hud_gym.controllers.x11.connection import X_ERRORS, XConnection
from hud_gym.controllers.x11.monitors import set_monitors
from hud_gym.controllers.x11.xauth import new_cookie, process_authority, write_display_authority
from hud_gym.controllers.x11.xvfb import XvfbServer, start_xvfb

__all__ = [
    "DIALOG_QUIET",
    "DIALOG_SETTLE_LIMIT",
    "HEADED_ARGS",
    "MARKER_JS",
    "MARKER_LIMIT",
    "MARKER_ROWS",
    "MIN_WINDOW_WIDTH",
    "HeadedDisplay",
    "HeadedView",
    "TileLayout",
    "frame_state_expression",
    "marker_colours",
    "xvfb_available",
]

HEADED_ARGS: tuple[str, ...] = (
    "--kiosk",  # no tab strip or toolbar: a window fills its monitor (its env's tile)
    "--window-position=0,0",  # a new window opens on the parking monitor
    "--force-device-scale-factor=1",
    "--hide-scrollbars",
    "--disable-backgrounding-occluded-windows",  # a tab's window under another still draws its frames
    "--no-xshm",  # frames go to the window with PutImage: no MIT-SHM swap acknowledgement to lose (below)
)
"""Flags a headed browser gets on top of :data:`~.binary.LAUNCH_ARGS` (and ``--window-size``).

``--no-xshm``: with MIT-SHM, Chromium's software compositor puts a window's frame with ``ShmPutImage``
and draws that window's next frame only after the X server's ``ShmCompletion`` event for it has been
handled (two frames in flight at most). On a browser whose windows several envs step at once (the
shared layout, :mod:`.tiles`), a window sometimes stopped drawing for good after a navigation: no
put reached the X server again, not even after the window was resized, while its page kept running
animation frames (issue 13's "late" frames; about one window in 1,500 concurrent steps on a loaded
box). Recorded with the X RECORD extension, the server had sent a ``ShmCompletion`` for every
``ShmPutImage`` of that window and no request of it had failed: the acknowledgement was lost inside
Chromium. Without MIT-SHM each frame is a plain ``PutImage`` acknowledged at once."""

MARKER_ROWS = 1
"""Rows the page's viewport has below the observation: the frame marker's strip."""
MARKER_LIMIT = 2.0
"""Seconds a frame carrying this step's marker is waited for; after that the step's frame is the
last grab, reported as unverified (``info["frame_unverified"]``)."""
MARKER_POLL = 0.05
"""The longest wait for damage before grabbing again anyway (a bound on latency, not on freshness)."""
FALLBACK_FIRST_PAINT = 0.25
FALLBACK_QUIET = 0.005
FALLBACK_LIMIT = 0.5
"""The damage settle of a document that cannot show the marker (not HTML, or its root element
filtered or transformed): first damage waited for, quiet, limit (s); its frame is unverified."""
DIALOG_QUIET = 0.1
"""Seconds without damage after a step that answered a dialog: Chromium's dialog box is removed by
the browser's UI, which the page's frames (and so the marker) do not cover (its fade is turned off
through GTK's ``gtk-enable-animations=0``; measured: 49 of 60 dialog steps showed the fading box
without it, 0 with it)."""
DIALOG_SETTLE_LIMIT = 0.8
"""The settle limit after a dialog: its box fades out over several frames, slower on a loaded box."""
MAX_REGRABS = 8

MARKER_JS = """((n, rows) => {
  const key = Symbol.for("hud-gym.marker");
  const html = document.documentElement;
  if (!html || html.namespaceURI !== "http://www.w3.org/1999/xhtml") return false;
  let mark = window[key];
  if (!mark) {
    const host = document.createElement("hud-gym-marker");
    host.setAttribute("aria-hidden", "true");
    host.style.cssText = "all: initial !important; display: block !important; position: fixed !important; " +
      "left: 0 !important; bottom: 0 !important; width: 100% !important; height: " + rows + "px !important; " +
      "margin: 0 !important; border: 0 !important; padding: 0 !important; z-index: 2147483647 !important; " +
      "pointer-events: none !important; overflow: hidden !important; contain: strict !important";
    if (typeof host.showPopover === "function") host.popover = "manual";
    const left = document.createElement("div"), right = document.createElement("div");
    const cell = "all: initial; display: block; float: left; width: 50%; pointer-events: none; height: " + rows + "px";
    left.style.cssText = right.style.cssText = cell;
    host.attachShadow({mode: "closed"}).append(left, right);
    mark = {host, left, right};
    Object.defineProperty(window, key, {value: mark, configurable: true});
  }
  const {host, left, right} = mark;
  if (html.lastElementChild !== host) html.appendChild(host);
  if (host.popover === "manual") {
    if (host.matches(":popover-open")) host.hidePopover();
    host.showPopover();  // the last in the top layer: above the page's modal dialogs and popovers
  }
  const colour = (v) => "rgb(" + (v >> 16 & 255) + "," + (v >> 8 & 255) + "," + (v & 255) + ")";
  left.style.background = colour(n);
  right.style.background = colour(n ^ 0xffffff);
  const box = host.getBoundingClientRect(), style = getComputedStyle(html);
  return box.left === 0 && box.top === innerHeight - rows && box.width === innerWidth && box.height === rows &&
    style.filter === "none" && style.opacity === "1" && style.mixBlendMode === "normal";
})"""
"""Sets the frame marker of the page's next frame to step number ``n`` (24 bits) and says whether it
shows: a strip of the viewport's last ``rows`` rows (below the observation), its left half
``n``'s colour (``rgb(n >> 16, n >> 8 & 255, n & 255)``), its right half the complement's (no
uniform row of a page matches both). The strip is an element after ``<body>`` (outside the
elements list and the body's text), its halves in a closed shadow root (a page's mutation observers
see it inserted, never recoloured), all its styles inline ``!important``, ``pointer-events: none``,
``aria-hidden``, a manual popover shown again every step (the last in the top layer). False: the
document is not HTML, or its root element is filtered, faded or moved (the strip would not show
the colour at the viewport's bottom)."""


def xvfb_available() -> bool:
    """True when Xvfb is installed (the headed path can run)."""
    return shutil.which("Xvfb") is not None


def frame_state_expression(state_expression: str, marker: int) -> str:
    """A ``Runtime.evaluate`` expression resolving to ``state_expression``'s value (an object) with
    ``marked``: whether the page's next frame carries ``marker`` (:data:`MARKER_JS`; await it with
    ``awaitPromise``). Both are read in a ``setTimeout(0)`` queued in the page's next animation
    frame: after the animation-frame callbacks and the timers due by then that the action queued
    (timers run in the order they fall due: a navigation a click scheduled with ``setTimeout(0)``
    has begun, and the state says the document is leaving)."""
    return (
        "new Promise(r => requestAnimationFrame(() => setTimeout(() => {"
        f" const marked = {MARKER_JS}({int(marker)}, {MARKER_ROWS}); const s = {state_expression};"
        " s.marked = marked; r(s); }, 0)))"
    )


def marker_colours(marker: int) -> tuple[np.ndarray, np.ndarray]:
    """The RGB colours of the marker strip's left and right halves for step number ``marker``."""
    left = np.array([(marker >> 16) & 255, (marker >> 8) & 255, marker & 255], np.uint8)
    return left, 255 - left


class HeadedDisplay:
    """The private Xvfb of one headed browser, its screen cut into ``layout``'s tiles; see the
    module docstring."""

    def __init__(self, layout: TileLayout) -> None:
        self.layout = layout
        self.viewport = layout.viewport
        self.screen = layout.screen
        self.cookie = new_cookie()
        self.folder = make_temp_folder("hud-gym-headed-", self)
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
    """One env's view of its tile (the viewport at ``origin``, and the marker rows below it):
    damage tracking, MIT-SHM grabs, the frame marker's check; see the module docstring."""

    def __init__(self, display: str, viewport: tuple[int, int], origin: tuple[int, int] = (0, 0)) -> None:
        self.display = display
        self.viewport = viewport
        self.origin = origin
        grabbed = (viewport[0], viewport[1] + MARKER_ROWS)
        with process_authority().connecting():
            self.x = XConnection(display, region=(*origin, *grabbed))
            self.capture = ScreenCapture(display, grabbed, origin)
        self.marker = secrets.randbelow(1 << 24)
        self.unverified = 0
        """Frames returned without this step's marker (:data:`MARKER_LIMIT` passed, or a document
        that cannot show it)."""
        self.last_unverified: tuple[str, int, list[int], list[int]] | None = None
        """The last of them: why, the marker, and the marker row's first and last pixels."""

    def next_marker(self) -> int:
        """A new step number for :func:`frame_state_expression` (24 bits, wrapping)."""
        self.marker = (self.marker + 1) & 0xFFFFFF
        return self.marker

    async def begin(self) -> None:
        """Forget damage reported before an action (call before its input)."""
        await self.x.call(self.x.begin)

    async def frame(self, marker: int, marked: bool, dialog: bool = False) -> tuple[np.ndarray, str | None]:
        """``(the frame, None)`` after the state round trip set ``marker`` (``marked``: the page
        says it shows); ``dialog``: the step answered a dialog. Unverified frames come with why:
        ``"unmarked"`` (the document cannot show the marker) or ``"late"`` (no grab carried it
        within :data:`MARKER_LIMIT` s). See the module docstring. The X work runs on the X
        connection's thread (:mod:`~hud_gym.controllers.x11.xthread`): a frozen X server times
        the step out and stops no other env of the process."""
        return await self.x.run(lambda: self._x_frame(marker, marked, dialog))

    async def _x_frame(self, marker: int, marked: bool, dialog: bool) -> tuple[np.ndarray, str | None]:
        problem: str | None = None
        try:
            if not marked:
                await self.x.settle(first_paint=FALLBACK_FIRST_PAINT, quiet=FALLBACK_QUIET, limit=FALLBACK_LIMIT)
                image, problem = self._grab(None), "unmarked"
            else:
                image, verified = await self._marked(marker)
                if verified and dialog:
                    await self.x.settle(first_paint=0.0, quiet=DIALOG_QUIET, limit=DIALOG_SETTLE_LIMIT)
                    image, verified = await self._marked(marker)
                problem = None if verified else "late"
        except X_ERRORS as exc:
            raise ControllerError(f"the X server of {self.display} is gone: {exc}") from exc
        if problem is not None:
            self.unverified += 1
            rows = image[self.viewport[1] :]
            self.last_unverified = (problem, marker, rows[0, 0].tolist(), rows[0, -1].tolist())
        return image[: self.viewport[1]], problem

    def _carries(self, image: np.ndarray, marker: int) -> bool:
        """Whether the grab's marker rows show ``marker`` (each half checked away from the middle)."""
        left, right = marker_colours(marker)
        rows = image[self.viewport[1] :]
        quarter = max(1, self.viewport[0] // 4)
        return bool((rows[:, :quarter] == left).all() and (rows[:, -quarter:] == right).all())

    def _grab(self, marker: int | None) -> np.ndarray:
        """A grab no damage followed (an ``XSync`` round trip after it: a frame drawn during the
        grab may have been half taken), else grabbed again; with ``marker``, only while it carries
        that marker (a frame after it)."""
        for _ in range(MAX_REGRABS):
            before = self.x.damage_events
            image = self.capture.grab()
            if marker is not None and not self._carries(image, marker):
                return image
            self.x.display.sync()
            self.x.drain()
            if self.x.damage_events == before:
                return image
        return image  # a page animating without pause: every frame is as fresh as the last

    async def _marked(self, marker: int) -> tuple[np.ndarray, bool]:
        """Grab until a grab carries ``marker`` (after each miss, wait for damage of the tile),
        for up to :data:`MARKER_LIMIT` s."""
        deadline = time.perf_counter() + MARKER_LIMIT
        while True:
            self.x.drain()
            seen = self.x.damage_events
            image = self._grab(marker)
            if self._carries(image, marker):
                return image, True
            now = time.perf_counter()
            if now >= deadline:
                return image, False
            self.x.drain()
            if self.x.damage_events == seen:
                await self.x.wait_readable(min(MARKER_POLL, deadline - now))

    def close(self) -> None:
        """Close the connection and the grab (idempotent)."""
        self.x.thread.call_soon(self.capture.close)  # after a grab it may be in (never blocks here)
        self.x.close()
