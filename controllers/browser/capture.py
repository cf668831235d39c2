"""How the browser gym captures a tab: a fresh screenshot of the viewport and the page's state.

Screenshots come from the DevTools protocol's ``Page.captureScreenshot`` on the page's own CDP
session (JPEG, ``optimizeForSpeed``), decoded with ``simplejpeg``: about 4x faster than
Playwright's ``page.screenshot()`` PNG + Pillow decode at 1280x720 (``benchmarks/README.md``).
``captureScreenshot`` asks the compositor for a new frame and copies that frame, so the image
always reflects every DOM change made before the call (no stale frame, unlike a screencast).
``format="png"`` gives lossless frames at about twice the cost.

The page's title (and, optionally, its visible elements: :mod:`.page_scan`) come from one ``Runtime.evaluate`` of
:data:`PAGE_STATE_JS`. A capture that fails while the page stays put is retried on the budget of
a :class:`CaptureProgress` (the observation's attempts, :mod:`.observation`).
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import simplejpeg
from PIL import Image
from playwright.async_api import CDPSession

from hud_gym.bounds import TITLE_CHARS
from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.browser.page_scan import ELEMENTS_JS

__all__ = [
    "PAGE_STATE_JS",
    "CaptureProgress",
    "ImageFormat",
    "capture",
    "decode_image",
    "drop_tasks",
    "fit_screen",
    "page_state_expression",
]

ImageFormat = Literal["jpeg", "png"]


def fit_screen(
    screenshot: np.ndarray, screen_size: tuple[int, int], region: tuple[int, int, int, int] | None
) -> np.ndarray:
    """A tab's capture at the screen's size (a page-zoomed or resized tab's padded or cut), then
    just ``region`` ``(x, y, width, height)`` of it (a view, not a copy: the browser encodes the
    whole viewport either way, a CDP clip measured slower, but a remote env is sent only these
    pixels)."""
    width, height = screen_size
    if screenshot.shape[:2] != (height, width):
        canvas = np.full((height, width, 3), 255, np.uint8)
        h, w = min(height, screenshot.shape[0]), min(width, screenshot.shape[1])
        canvas[:h, :w] = screenshot[:h, :w]
        screenshot = canvas
    if region is not None:
        x, y, w, h = region
        screenshot = screenshot[y : y + h, x : x + w]
    return screenshot


def decode_image(data: bytes, image_format: ImageFormat) -> np.ndarray:
    """Decode a JPEG or PNG screenshot to an ``(H, W, 3)`` uint8 RGB array."""
    if image_format == "jpeg":
        return simplejpeg.decode_jpeg(data, colorspace="RGB")
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image.convert("RGB"))


async def capture(session: CDPSession, image_format: ImageFormat = "jpeg", quality: int = 85) -> np.ndarray:
    """A fresh screenshot of the page's viewport as an ``(H, W, 3)`` uint8 RGB array.

    Raises:
        playwright.async_api.Error: the page is gone or crashed.
    """
    params: dict[str, Any] = {"format": image_format, "optimizeForSpeed": True, "captureBeyondViewport": False}
    if image_format == "jpeg":
        params["quality"] = quality
    result = await session.send("Page.captureScreenshot", params)
    return decode_image(base64.b64decode(result["data"]), image_format)


LEAVING_JS = """(() => {
  const key = Symbol.for("hud-gym.leaving");
  const was = window[key] === true;
  if (!Object.prototype.hasOwnProperty.call(window, key)) {
    addEventListener("beforeunload", () => { window[key] = true; }, true);
  }
  Object.defineProperty(window, key, {value: false, writable: true, configurable: true});
  return was;
})()"""
"""Whether the document began to leave (its ``beforeunload`` fired) since the last state read,
which it also clears (the first read adds the listener, which never asks for a dialog). The
renderer fires ``beforeunload`` before it asks the browser for the navigation, so a navigation
a script started before the read is known here even when ``Page.frameStartedLoading`` (sent by
the browser) trails the reply."""

PAGE_STATE_JS = (
    "(elements, limit) => ({title: String(document.title).slice(0, TITLE_CHARS + 1), "
    "elements: elements ? ELEMENTS(limit) : null, probes: elements ? PROBES : null, leaving: LEAVING})"
)
"""Title (at most :data:`~hud_gym.bounds.TITLE_CHARS` + 1 characters of it) and, when asked, the
elements of the page and the values of the suites' page probes (:mod:`.extensions`), and
:data:`LEAVING_JS`, in one round trip."""


def page_state_expression(elements: bool, limit: int, probes: Sequence[tuple[str, str]] = ()) -> str:
    """The ``Runtime.evaluate`` expression returning ``{title, elements, probes, leaving}``
    (``probes``: ``(key, expression)`` pairs, each value under its key)."""
    values = ", ".join(f"{json.dumps(key)}: ({expression})" for key, expression in probes)
    body = (
        PAGE_STATE_JS.replace("TITLE_CHARS", str(TITLE_CHARS))
        .replace("LEAVING", LEAVING_JS)
        .replace("ELEMENTS", f"({ELEMENTS_JS.strip()})")
        .replace("PROBES", f"({{{values}}})")
    )
    return f"({body})({json.dumps(bool(elements))}, {int(limit)})"


@dataclass
class CaptureProgress:
    """What the attempts of one observation carry over: the frame's extra ``info``, whether a load
    in progress is still waited for, whether the window was placed again, the failed captures.

    ``patience``: seconds a page that stays put may keep failing its captures. Chromium answers
    ``Page.captureScreenshot`` with "Unable to capture screenshot" while the tab has no compositor
    frame yet (a document just replaced, a loaded machine) and while its renderer is busy; both
    are retried with a growing pause until ``patience`` has passed since the first failure (the
    step's own timeout ends a busy renderer's step first, as ``timeout``).
    """

    patience: float
    info: dict[str, Any] = field(default_factory=dict)
    patient: bool = True
    replaced: bool = False
    failures: int = 0
    first_failure: float | None = None

    async def fail(self, exc: BaseException) -> None:
        """A capture of a page that stayed put failed: pause, or past ``patience``, raise."""
        now = time.monotonic()
        if self.first_failure is None:
            self.first_failure = now
        self.failures += 1
        if self.failures > 1 and now - self.first_failure >= self.patience:
            raise ControllerError(
                f"the page did not render a frame ({type(exc).__name__}: {exc}); a busy or hung renderer?"
            ) from exc
        await asyncio.sleep(min(0.025 * 2**self.failures, 0.5))


def drop_tasks(*tasks: asyncio.Future[Any] | None) -> None:
    """Cancel the round trips still running; mark those done retrieved (a dropped capture may have failed)."""
    for task in tasks:
        if task is None:
            continue
        if not task.done():
            task.cancel()
        elif not task.cancelled():
            task.exception()
