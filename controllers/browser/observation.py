"""What the browser controller observes after an action: the active tab, once the action's effects are in.

After the action, one ``Runtime.evaluate`` round trip on the tab's own DevTools session returns the
title (and the elements); a navigation the action started has been reported by then (its load
start, or the document's ``beforeunload``, read in the same round trip: the load start is sent by
the browser and can trail the reply), and is waited for (up to ``navigation_timeout``); a new tab the page opened is waited for and becomes the active
tab; then ``Page.captureScreenshot`` renders a new frame (:mod:`.capture`). The frame's ``info``
has the URL, title, tabs, and the dialogs and downloads since the last observation.

The capture primitives live in :mod:`.capture`; their names are importable from here as well.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from hud_gym.bounds import LIST_ITEMS, TITLE_CHARS, URL_CHARS, clip_text
from hud_gym.controllers.base import ControllerError, Frame
from hud_gym.controllers.browser.capture import (
    ELEMENTS_JS,
    PAGE_STATE_JS,
    ImageFormat,
    capture,
    decode_image,
    page_state_expression,
)
from hud_gym.controllers.browser.lifecycle import BrowserLifecycle
from hud_gym.controllers.browser.session import PageSession

__all__ = [
    "ELEMENTS_JS",
    "PAGE_STATE_JS",
    "BrowserObservation",
    "ImageFormat",
    "capture",
    "decode_image",
    "page_state_expression",
]


LOAD_START_LIMIT = 2.0
"""Seconds a navigation the page began (``beforeunload`` fired) may take to report its load start."""

TAB_CHANGES = 6
"""Times the observed tab may navigate, close or change before the observation gives up."""


class BrowserObservation(BrowserLifecycle):
    """:meth:`observe` (a part of :class:`~.controller.BrowserController`)."""

    async def observe(self) -> Frame:
        """The active tab after everything the last action started: see the module docstring.

        Raises:
            ControllerError: the browser is gone, or a tab of this episode crashed.
        """
        self._check_alive()
        self._check_crashes()
        try:
            return await self._observe()
        except PlaywrightError as exc:
            self._check_alive()
            self._check_crashes()
            raise ControllerError(f"could not observe the page: {exc}") from exc

    async def _observe(self) -> Frame:
        progress = _Progress(patience=self.options.navigation_timeout)
        changes = 0
        while changes < TAB_CHANGES:
            failures = progress.failures
            page, session = await self._attached_tab()
            if session is not None:  # None: the active tab closed: observe the next one
                frame = await self._observe_tab(page, session, progress)
                if frame is not None:
                    return frame
            if progress.failures == failures:
                changes += 1  # a failed capture is retried on its own budget (``_Progress.fail``)
        raise ControllerError("the active tab kept changing while it was observed")

    async def _attached_tab(self) -> tuple[Page, PageSession | None]:
        """The active tab (a blank one when there is none) and its session, ``None`` when the tab
        closed meanwhile."""
        if not self._targets_settled.is_set():
            # The page opened a tab during the action: wait until Playwright has it.
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._targets_settled.wait(), self.options.navigation_timeout)
        if self._active is None:
            await self._open_blank()
        page = self.page
        self._check_crashes()
        session = await self._session(page)
        if session is None and not page.is_closed():
            raise ControllerError("could not attach to the active tab")
        return page, session

    async def _observe_tab(self, page: Page, session: PageSession, progress: _Progress) -> Frame | None:
        """One attempt at observing ``page``: its frame, or ``None`` to observe again (the page
        navigated, the active tab changed, the capture failed once)."""
        others = [p for p in self._pages if p is not page]
        loads_before = session.loads
        # No load started since the action began: a load in progress is an old one.
        wait = progress.patient and self._loads_at_action.get(page) != loads_before

        def navigated() -> bool:
            return session.loads != loads_before or (wait and session.loading)

        # The state round trip and the capture go out together; the capture is fresh
        # anyway (a new compositor frame after the action). The round trip's reply comes
        # after any navigation the action started was reported: then the capture (which
        # may never finish on a document being replaced) is dropped, the navigation waited
        # for, and the page observed again.
        # Headed: the round trip resolves in the page's second animation frame, where it sets
        # the frame marker; the tile is grabbed until a grab carries it (:mod:`.headed`).
        view = self._view
        if view is not None and self._shown is not page:
            await self._show(page, session)
        marker = view.next_marker() if view is not None else None
        state_task = asyncio.ensure_future(
            session.state(
                self.options.elements, self.options.max_elements, marker=marker, probes=self.extension.probe_expressions
            )
        )
        shot_task = (
            asyncio.ensure_future(session.screenshot(self.options.screenshot_format, self.options.jpeg_quality))
            if view is None
            else None
        )
        try:
            state = await asyncio.wait_for(asyncio.shield(state_task), self.options.navigation_timeout)
            if state["leaving"] and not navigated():
                # The document began to leave before the reply, whose load start (sent by the
                # browser, not the renderer) can trail it: wait for that (a navigation the
                # browser then drops, a 204, starts no load: the wait is bounded).
                await session.wait_started(loads_before, LOAD_START_LIMIT)
            if not navigated() and self._targets_settled.is_set():
                screenshot = await self._tab_capture(shot_task, marker, state, progress)
                if screenshot is None:
                    return None  # the window is placed again: observe again at once
                if not navigated() and self._active is page:
                    titles = await asyncio.gather(*(self._title(p) for p in others))
                    names = {**dict(zip(others, titles, strict=True)), page: state["title"]}
                    return self._frame(page, state, screenshot, progress.info, names)
        except (PlaywrightError, asyncio.TimeoutError) as exc:
            self._check_alive()
            self._check_crashes()
            if not navigated() and self._stayed(page):
                await progress.fail(exc)
        finally:
            _drop(state_task, shot_task)
        if wait or session.loads != loads_before:
            await self._wait_loaded(session, progress)
        return None

    def _stayed(self, page: Page) -> bool:
        """Whether ``page`` is still the active tab, alive and open."""
        return page not in self._crashed and not page.is_closed() and self._active is page

    async def _wait_loaded(self, session: PageSession, progress: _Progress) -> None:
        """Wait for the load in progress (the action's); a page still loading after that is
        observed as it is (``info["loading"]``), and no load is waited for again."""
        if session.loading and not await session.wait_loaded(self.options.navigation_timeout):
            progress.info["loading"] = True
            progress.patient = False

    async def _tab_capture(
        self, shot_task: asyncio.Future[Any] | None, marker: int | None, state: dict[str, Any], progress: _Progress
    ) -> np.ndarray | None:
        """The capture of this attempt: the screenshot's, or headed, the view's frame carrying
        ``marker``; ``None`` when the tab's window is to be placed again first."""
        if shot_task is not None:
            screenshot: np.ndarray = await asyncio.wait_for(asyncio.shield(shot_task), self.options.navigation_timeout)
            return screenshot
        view = self._view
        assert view is not None and marker is not None
        # A dialog answered during the action: the browser's own UI (not the page's frames)
        # removes its box; the view waits until that has stopped.
        dialogs = len(self.dialogs) > self._reported_dialogs
        screenshot, problem = await view.frame(marker, state["marked"], dialog=dialogs)
        if problem == "late" and not progress.replaced:
            # The tab's window drew no frame with the marker (seen with a new tab's window on a
            # shared browser): place it again, observe again.
            progress.replaced = self._replace_window = True
            self._shown = None
            return None
        if problem is not None:
            progress.info["frame_unverified"] = problem
        return screenshot

    async def _open_blank(self) -> None:
        page = await self._new_tab()
        self._active = page

    async def _title(self, page: Page) -> str:
        """The title of a background tab ('' when it does not answer within a second)."""
        session = self._sessions.get(page)
        if session is None:
            return ""
        try:
            return (await asyncio.wait_for(session.state(), 1.0))["title"]
        except (asyncio.TimeoutError, PlaywrightError):
            return ""

    def _frame(
        self,
        page: Page,
        state: dict[str, Any],
        screenshot: np.ndarray,
        extra: dict[str, Any],
        titles: dict[Page, str],
    ) -> Frame:
        width, height = self.screen_size
        if screenshot.shape[:2] != (height, width):
            # A page-zoomed or resized tab: keep the observation at the screen size.
            canvas = np.full((height, width, 3), 255, np.uint8)
            h, w = min(height, screenshot.shape[0]), min(width, screenshot.shape[1])
            canvas[:h, :w] = screenshot[:h, :w]
            screenshot = canvas
        # A page names itself (its URL, its title): both are cut before they are reported.
        url, title = clip_text(page.url, URL_CHARS), clip_text(state["title"], TITLE_CHARS)
        tabs = [
            {
                "index": i,
                "url": clip_text(p.url, URL_CHARS),
                "title": clip_text(titles.get(p, ""), TITLE_CHARS),
                "active": p is page,
            }
            for i, p in enumerate(self._pages[:LIST_ITEMS])
        ]
        info: dict[str, Any] = {
            "url": url,
            "title": title,
            "tabs": tabs,
            "dialogs": [dict(d) for d in self.dialogs[self._reported_dialogs :]],
            "downloads": self.downloads[self._reported_downloads :],
            **extra,
        }
        self._reported_dialogs = len(self.dialogs)
        self._reported_downloads = len(self.downloads)
        if self.options.elements:
            info["elements"] = state["elements"] or []
            info.update(self.extension.probe_info(state["probes"]))
        if self.capture_region is not None:
            # A view, not a copy: the browser encodes the whole viewport either way (a CDP clip
            # measured slower), but a remote env is sent only these pixels.
            x, y, w, h = self.capture_region
            screenshot = screenshot[y : y + h, x : x + w]
        return Frame(screenshot=screenshot, text=f"URL: {url}\nTitle: {title}", info=info, region=self.capture_region)


@dataclass
class _Progress:
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


def _drop(*tasks: asyncio.Future[Any] | None) -> None:
    """Cancel the round trips still running; mark those done retrieved (a dropped capture may have failed)."""
    for task in tasks:
        if task is None:
            continue
        if not task.done():
            task.cancel()
        elif not task.cancelled():
            task.exception()
