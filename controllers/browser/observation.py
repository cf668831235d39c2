"""What the browser controller observes after an action: the active tab, once the action's effects are in.

After the action, one ``Runtime.evaluate`` round trip on the tab's own DevTools session returns the
title (and the elements); a navigation the action started has been reported by then (its load
start, or the document's ``beforeunload``, read in the same round trip: the load start is sent by
the browser and can trail the reply), and is waited for (up to ``navigation_timeout``); a new tab the page opened is waited for and becomes the active
tab; then ``Page.captureScreenshot`` renders a new frame (:mod:`.capture`). The frame's ``info``
has the URL, title, tabs, and the dialogs and downloads since the last observation.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import numpy as np
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from hud_gym.bounds import LIST_ITEMS, TITLE_CHARS, URL_CHARS, clip_text
from hud_gym.controllers.base import ControllerError, Frame
from hud_gym.controllers.browser.accessibility import bounded_elements, node_info
from hud_gym.controllers.browser.capture import CaptureProgress, drop_tasks, fit_screen
from hud_gym.controllers.browser.session import PageSession
from hud_gym.controllers.browser.state import BrowserState
from hud_gym.controllers.browser.tabs import BrowserTabs

__all__ = ["BrowserObservation"]


LOAD_START_LIMIT = 2.0
"""Seconds a navigation the page began (``beforeunload`` fired) may take to report its load start."""

TAB_CHANGES = 6
"""Times the observed tab may navigate, close or change before the observation gives up."""


class BrowserObservation:
    """:meth:`observe` of ``state``'s active tab (``tabs`` gives its DevTools session)."""

    def __init__(self, state: BrowserState, tabs: BrowserTabs) -> None:
        self.state = state
        self.tabs = tabs

    async def begin_action(self) -> None:
        """An action begins: a load from now on is the action's (and headed, the view's frame)."""
        state = self.state
        state.loads_at_action = {page: session.loads for page, session in state.sessions.items()}
        if state.view is not None:
            await state.view.begin()

    async def observe(self, region: tuple[int, int, int, int] | None = None) -> Frame:
        """The active tab after everything the last action started (its pixels in ``region`` of
        the screen, all of it with ``None``): see the module docstring.

        Raises:
            ControllerError: the browser is gone, or a tab of this episode crashed.
        """
        self.state.check_alive()
        self.state.check_crashes()
        try:
            return await self._observe(region)
        except PlaywrightError as exc:
            self.state.check_alive()
            self.state.check_crashes()
            raise ControllerError(f"could not observe the page: {exc}") from exc

    async def _observe(self, region: tuple[int, int, int, int] | None) -> Frame:
        progress = CaptureProgress(patience=self.state.options.navigation_timeout)
        changes = 0
        while changes < TAB_CHANGES:
            failures = progress.failures
            page, session = await self._attached_tab()
            if session is not None:  # None: the active tab closed: observe the next one
                frame = await self._observe_tab(page, session, progress, region)
                if frame is not None:
                    return frame
            if progress.failures == failures:
                changes += 1  # a failed capture is retried on its own budget (``CaptureProgress.fail``)
        raise ControllerError("the active tab kept changing while it was observed")

    async def _attached_tab(self) -> tuple[Page, PageSession | None]:
        """The active tab (a blank one when there is none) and its session, ``None`` when the tab
        closed meanwhile."""
        if not self.state.targets_settled.is_set():
            # The page opened a tab during the action: wait until Playwright has it.
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.state.targets_settled.wait(), self.state.options.navigation_timeout)
        if self.state.active is None:
            self.state.active = await self.tabs.new_tab()
        page = self.state.page
        self.state.check_crashes()
        session = await self.tabs.session(page)
        if session is None and not page.is_closed():
            raise ControllerError("could not attach to the active tab")
        return page, session

    async def _observe_tab(
        self, page: Page, session: PageSession, progress: CaptureProgress, region: tuple[int, int, int, int] | None
    ) -> Frame | None:
        """One attempt at observing ``page``: its frame, or ``None`` to observe again (the page
        navigated, the active tab changed, the capture failed once)."""
        others = [p for p in self.state.pages if p is not page]
        loads_before = session.loads
        # No load started since the action began: a load in progress is an old one.
        wait = progress.patient and self.state.loads_at_action.get(page) != loads_before

        def navigated() -> bool:
            return session.loads != loads_before or (wait and session.loading)

        # The state round trip and the capture go out together; the capture is fresh
        # anyway (a new compositor frame after the action). The round trip's reply comes
        # after any navigation the action started was reported: then the capture (which
        # may never finish on a document being replaced) is dropped, the navigation waited
        # for, and the page observed again.
        # Headed: the round trip resolves in the page's second animation frame, where it sets
        # the frame marker; the tile is grabbed until a grab carries it (:mod:`.headed`).
        view = self.state.view
        if view is not None and self.state.shown is not page:
            await self.tabs.show(page, session)
        marker = view.next_marker() if view is not None else None
        state_task = asyncio.ensure_future(
            session.state(
                self.state.options.elements,
                self.state.options.max_elements,
                marker=marker,
                probes=self.state.extension.probe_expressions,
            )
        )
        shot_task = (
            asyncio.ensure_future(
                session.screenshot(self.state.options.screenshot_format, self.state.options.jpeg_quality)
            )
            if view is None
            else None
        )
        try:
            state = await asyncio.wait_for(asyncio.shield(state_task), self.state.options.navigation_timeout)
            if state["leaving"] and not navigated():
                # The document began to leave before the reply, whose load start (sent by the
                # browser, not the renderer) can trail it: wait for that (a navigation the
                # browser then drops, a 204, starts no load: the wait is bounded).
                await session.wait_started(loads_before, LOAD_START_LIMIT)
            if not navigated() and self.state.targets_settled.is_set():
                screenshot = await self._tab_capture(shot_task, marker, state, progress)
                if screenshot is None:
                    return None  # the window is placed again: observe again at once
                if not navigated() and self.state.active is page:
                    titles = await asyncio.gather(*(self._title(p) for p in others))
                    names = {**dict(zip(others, titles, strict=True)), page: state["title"]}
                    nodes = await node_info(session, self.state.options)  # the opt-in axtree / som
                    return self._frame(page, state, screenshot, {**progress.info, **nodes}, names, region)
        except (PlaywrightError, asyncio.TimeoutError) as exc:
            self.state.check_alive()
            self.state.check_crashes()
            if not navigated() and self._stayed(page):
                await progress.fail(exc)
        finally:
            drop_tasks(state_task, shot_task)
        if wait or session.loads != loads_before:
            await self._wait_loaded(session, progress)
        return None

    def _stayed(self, page: Page) -> bool:
        """Whether ``page`` is still the active tab, alive and open."""
        return page not in self.state.crashed and not page.is_closed() and self.state.active is page

    async def _wait_loaded(self, session: PageSession, progress: CaptureProgress) -> None:
        """Wait for the load in progress (the action's); a page still loading after that is
        observed as it is (``info["loading"]``), and no load is waited for again."""
        if session.loading and not await session.wait_loaded(self.state.options.navigation_timeout):
            progress.info["loading"] = True
            progress.patient = False

    async def _tab_capture(
        self,
        shot_task: asyncio.Future[Any] | None,
        marker: int | None,
        state: dict[str, Any],
        progress: CaptureProgress,
    ) -> np.ndarray | None:
        """The capture of this attempt: the screenshot's, or headed, the view's frame carrying
        ``marker``; ``None`` when the tab's window is to be placed again first."""
        if shot_task is not None:
            screenshot: np.ndarray = await asyncio.wait_for(
                asyncio.shield(shot_task), self.state.options.navigation_timeout
            )
            return screenshot
        view = self.state.view
        assert view is not None and marker is not None
        # A dialog answered during the action: the browser's own UI (not the page's frames)
        # removes its box; the view waits until that has stopped.
        dialogs = len(self.state.dialogs.records) > self.state.reported_dialogs
        screenshot, problem = await view.frame(marker, state["marked"], dialog=dialogs)
        if problem == "late" and not progress.replaced:
            # The tab's window drew no frame with the marker (seen with a new tab's window on a
            # shared browser): place it again, observe again.
            progress.replaced = self.state.replace_window = True
            self.state.shown = None
            return None
        if problem is not None:
            progress.info["frame_unverified"] = problem
        return screenshot

    async def _title(self, page: Page) -> str:
        """The title of a background tab ('' when it does not answer within a second)."""
        session = self.state.sessions.get(page)
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
        region: tuple[int, int, int, int] | None,
    ) -> Frame:
        # A page names itself (its URL, its title): both are cut before they are reported.
        url, title = clip_text(page.url, URL_CHARS), clip_text(state["title"], TITLE_CHARS)
        tabs = [
            {
                "index": i,
                "url": clip_text(p.url, URL_CHARS),
                "title": clip_text(titles.get(p, ""), TITLE_CHARS),
                "active": p is page,
            }
            for i, p in enumerate(self.state.pages[:LIST_ITEMS])
        ]
        info: dict[str, Any] = {
            "url": url,
            "title": title,
            "tabs": tabs,
            "dialogs": [dict(d) for d in self.state.dialogs.records[self.state.reported_dialogs :]],
            "downloads": self.state.downloads[self.state.reported_downloads :],
            **extra,
        }
        self.state.reported_dialogs = len(self.state.dialogs.records)
        self.state.reported_downloads = len(self.state.downloads)
        if self.state.options.elements:
            info["elements"] = bounded_elements(state["elements"], self.state.options.max_elements)
            info.update(self.state.extension.probe_info(state["probes"]))
        screenshot = fit_screen(screenshot, self.state.screen_size, region)
        return Frame(screenshot=screenshot, text=f"URL: {url}\nTitle: {title}", info=info, region=region)
