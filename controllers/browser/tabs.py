"""The tabs of the browser session: pages, their DevTools sessions, windows, targets, crashes.

Every tab of the context is followed from its ``page`` event: a tab a page opens becomes the
active tab (as in a browser), one we open does not take the focus. Each tab gets its own DevTools
session (:class:`~.session.PageSession`), opened in the background and awaited when needed. A
browser-level DevTools session follows page targets, so a tab the page opens during an action is
known before the action's round trip returns (:meth:`BrowserTabs.watch_targets`); the
observation waits for it.

A tab whose renderer crashed (killed, out of memory) has lost the episode's page state: every
later ``step``/``observe`` of the episode raises
:class:`~hud_gym.controllers.base.ControllerError` (the env reports ``env_error``). Downloads are
:mod:`.downloads`'.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import BrowserContext, Page, Response
from playwright.async_api import Error as PlaywrightError

from hud_gym.controllers.browser.dialogs import retrieve
from hud_gym.controllers.browser.downloads import BrowserDownloads
from hud_gym.controllers.browser.session import PageSession
from hud_gym.controllers.browser.state import BrowserState, Parked

__all__ = ["CACHE_KEPT_ORIGINS", "BrowserTabs", "close_parked", "origin_of"]

CACHE_KEPT_ORIGINS: set[str] = set()
"""Origins whose responses leave the HTTP cache in place at a clear reset: hud-gym's own loopback
servers of unchanging static files (a suite's task pages), so a reset onto another of their tasks
loads no script again. Their responses carry no episode's data."""


def origin_of(url: str) -> str | None:
    """The storage origin of ``url`` (``None`` for ``about:``, ``data:`` and other opaque ones)."""
    parts = urlsplit(url)
    if parts.scheme in ("http", "https", "ws", "wss") and parts.netloc:
        return f"{parts.scheme}://{parts.netloc.rsplit('@', 1)[-1]}"
    if parts.scheme == "file":
        return "file://"
    return None


async def close_parked(parked: Parked, timeout: float = 10.0) -> bool:
    """Close a parked context (:mod:`.warm`) and its browser-level DevTools session; False when
    the context did not close within ``timeout`` s."""
    if parked.watcher is not None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(parked.watcher.detach(), 2)
    try:
        await asyncio.wait_for(parked.context.close(), timeout)
    except asyncio.TimeoutError:
        return False
    except PlaywrightError:
        pass  # already gone with its browser
    return True


class BrowserTabs:
    """The tabs of ``state``'s context and their events (``downloads`` saves what they download)."""

    def __init__(self, state: BrowserState, downloads: BrowserDownloads) -> None:
        self.state = state
        self.downloads = downloads
        self._own_tab = False
        self._placing = asyncio.Lock()

    def follow(self, context: BrowserContext) -> None:
        """Follow the tabs ``context`` opens and the origins it loads."""
        context.on("page", self._on_page)
        context.on("response", self._on_response)

    async def new_tab(self) -> Page:
        """Open a tab ourselves (it does not take the focus, unlike a tab the page opens)."""
        assert self.state.context is not None
        self._own_tab = True
        try:
            return await self.state.context.new_page()
        finally:
            self._own_tab = False

    def _on_page(self, page: Page) -> None:
        """A new tab (ours, or opened by a page: it becomes the active tab, as in a browser)."""
        state = self.state
        if page in state.pages or state.context is None or page.context is not state.context:
            return  # a late event of a context being closed
        state.pages.append(page)
        page.on("dialog", state.dialogs.answer)
        page.on("download", self.downloads.on_download)
        page.on("crash", self._on_crash)
        page.on("close", self.on_close)
        page.on("framenavigated", self._on_navigated)
        if not self._own_tab:
            state.active = page
        state.shown = None  # headed: opening a tab in a window takes it out of fullscreen
        state.session_tasks[page] = task = asyncio.ensure_future(self._open_session(page))
        task.add_done_callback(retrieve)

    async def _open_session(self, page: Page) -> PageSession | None:
        state = self.state
        context = state.context
        if context is None or page.context is not context:
            return None
        try:
            session = await PageSession.open(context, page, refuse_files=state.url_policy.file_root is None)
        except (PlaywrightError, KeyError):
            return None
        if page.is_closed():
            await session.detach()
            return None
        state.sessions[page] = session
        if state.view is not None:
            with contextlib.suppress(PlaywrightError, KeyError):
                await self._place(session)  # at once: off the parking monitor (or another env's tile)
        self.target_done(session.target_id)
        return session

    async def session(self, page: Page) -> PageSession | None:
        """The DevTools session of ``page`` (waiting for it to open); ``None`` when it could not."""
        session = self.state.sessions.get(page)
        if session is not None:
            return session
        task = self.state.session_tasks.get(page)
        if task is None:
            task = self.state.session_tasks[page] = asyncio.ensure_future(self._open_session(page))
            task.add_done_callback(retrieve)
        return await task

    async def show(self, page: Page, session: PageSession) -> None:
        """Make ``page`` the one this env's tile shows: its window fullscreen there, and on top."""
        self.state.shown = page
        force, self.state.replace_window = self.state.replace_window, False
        await self._place(session, force=force)
        await page.bring_to_front()

    async def _place(self, session: PageSession, force: bool = False) -> None:
        """Put the window of ``session``'s tab fullscreen on this env's tile (:mod:`.tiles`): a new
        window opens on the parking monitor, or where a page's ``window.open`` asked. One window
        at a time (a new tab's session task and the observation may both place it); ``force``:
        take it out of fullscreen and back even when it is in place."""
        origin = self.state.lease.origin if self.state.lease is not None else None
        if origin is None:
            return
        async with self._placing:
            window = await session.send("Browser.getWindowForTarget")
            bounds, window_id = window.get("bounds", {}), window["windowId"]
            placed = bounds.get("windowState") == "fullscreen" and (bounds.get("left"), bounds.get("top")) == origin
            if placed and not force:
                return
            steps: list[dict[str, Any]] = [{"left": origin[0], "top": origin[1]}, {"windowState": "fullscreen"}]
            if bounds.get("windowState") != "normal":
                steps.insert(0, {"windowState": "normal"})  # a window is moved in its normal state only
            for step in steps:
                await session.send("Browser.setWindowBounds", {"windowId": window_id, "bounds": step})

    def on_close(self, page: Page) -> None:
        """Forget a closed tab (the active one passes to its neighbour, as in Chrome)."""
        state = self.state
        if page in state.pages:
            index = state.pages.index(page)
            state.pages.remove(page)
            if state.active is page:
                # As Chrome: the tab that takes the closed one's place, else the last one.
                state.active = state.pages[min(index, len(state.pages) - 1)] if state.pages else None
        session = state.sessions.pop(page, None)
        if session is not None:
            self.target_done(session.target_id)
        state.session_tasks.pop(page, None)
        state.crashed.discard(page)
        state.dialogs.forget(page)

    def _on_navigated(self, frame: Any) -> None:
        origin = origin_of(frame.url)
        if origin:
            self.state.origins.add(origin)

    def _on_response(self, response: Response) -> None:
        origin = origin_of(response.url)
        if origin:
            self.state.origins.add(origin)
            if origin.startswith("http") and origin not in CACHE_KEPT_ORIGINS:
                self.state.http_cache_used = True

    def _on_crash(self, page: Page) -> None:
        state = self.state
        for url, parked in list(state.parked.items()):
            if parked.page is page:
                # A warm page set aside (:mod:`.warm`): dropped, never reused, and no fault of
                # the episode in progress (another context).
                del state.parked[url]
                self.discard_parked(parked)
                return
        if page not in state.crashed:
            state.crashed.add(page)
            state.crashes.append(page.url)

    def forget_parked(self, parked: Parked) -> None:
        """Drop the DevTools session bookkeeping of a parked context's tab (it is being closed)."""
        self.state.sessions.pop(parked.page, None)
        self.state.session_tasks.pop(parked.page, None)

    def discard_parked(self, parked: Parked) -> None:
        """Close a parked context in the background (nothing waits for it)."""
        self.forget_parked(parked)
        task = asyncio.ensure_future(close_parked(parked))
        task.add_done_callback(retrieve)

    async def watch_targets(self) -> None:
        """Follow page targets created in this context, so a tab the page opens during an action
        is known before the action's round trip returns, and waited for before observing."""
        state = self.state
        assert state.browser is not None
        state.pending_targets = set()
        state.targets_settled.set()
        cdp = await state.browser.new_browser_cdp_session()
        ready = False

        def created(event: dict[str, Any]) -> None:
            info = event.get("targetInfo", {})
            if ready and info.get("type") == "page" and info.get("browserContextId") == state.context_id:
                known = {s.target_id for s in state.sessions.values()}
                if info["targetId"] not in known:
                    state.pending_targets.add(info["targetId"])
                    state.targets_settled.clear()

        def destroyed(event: dict[str, Any]) -> None:
            self.target_done(event.get("targetId", ""))

        cdp.on("Target.targetCreated", created)
        cdp.on("Target.targetDestroyed", destroyed)
        await cdp.send("Target.setDiscoverTargets", {"discover": True, "filter": [{"type": "page"}]})
        ready = True
        state.browser_cdp = cdp

    def target_done(self, target_id: str) -> None:
        """A page target is known (its session opened) or gone: no longer waited for."""
        self.state.pending_targets.discard(target_id)
        if not self.state.pending_targets:
            self.state.targets_settled.set()
