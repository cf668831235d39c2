"""The tabs of the browser controller: pages, their DevTools sessions, targets, popups, downloads, crashes.

Every tab of the context is followed from its ``page`` event: a tab a page opens becomes the
active tab (as in a browser), one we open does not take the focus. Each tab gets its own DevTools
session (:class:`~.session.PageSession`), opened in the background and awaited when needed. A
browser-level DevTools session follows page targets, so a tab the page opens during an action is
known before the action's round trip returns (:meth:`BrowserTabs._watch_targets`); the
observation waits for it.

Downloads are saved in the env's download folder under their suggested names (numbered when
taken). A tab whose renderer crashed (killed, out of memory) has lost the episode's page state:
every later ``step``/``observe`` of the episode raises
:class:`~hud_gym.controllers.base.ControllerError` (the env reports ``env_error``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import Download, Page, Response
from playwright.async_api import Error as PlaywrightError

from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.browser.dialogs import retrieve
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


class BrowserTabs(BrowserState):
    """The tabs and their events (a part of :class:`~.controller.BrowserController`)."""

    @property
    def page(self) -> Page:
        """The active tab."""
        if self._active is None:
            raise ControllerError("the browser has no open tab")
        return self._active

    @property
    def dialogs(self) -> list[dict[str, Any]]:
        """The dialogs of this episode, as dicts ``{type, message, default_value, url, handled}``;
        alerts and ``beforeunload`` are accepted, confirm and prompt dismissed (:mod:`.dialogs`)."""
        return self._dialogs.records

    @property
    def pages(self) -> list[Page]:
        """The open tabs, in order."""
        return list(self._pages)

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        task.add_done_callback(retrieve)

    async def _new_tab(self) -> Page:
        """Open a tab ourselves (it does not take the focus, unlike a tab the page opens)."""
        assert self.context is not None
        self._own_tab = True
        try:
            return await self.context.new_page()
        finally:
            self._own_tab = False

    def _on_page(self, page: Page) -> None:
        """A new tab (ours, or opened by a page: it becomes the active tab, as in a browser)."""
        if page in self._pages or self.context is None or page.context is not self.context:
            return  # a late event of a context being closed
        self._pages.append(page)
        page.on("dialog", self._dialogs.answer)
        page.on("download", self._on_download)
        page.on("crash", self._on_crash)
        page.on("close", self._on_close)
        page.on("framenavigated", self._on_navigated)
        if not self._own_tab:
            self._active = page
        self._shown = None  # headed: opening a tab in a window takes it out of fullscreen
        self._session_tasks[page] = task = asyncio.ensure_future(self._open_session(page))
        task.add_done_callback(retrieve)

    async def _open_session(self, page: Page) -> PageSession | None:
        context = self.context
        if context is None or page.context is not context:
            return None
        try:
            session = await PageSession.open(context, page, refuse_files=self.url_policy.file_root is None)
        except (PlaywrightError, KeyError):
            return None
        if page.is_closed():
            await session.detach()
            return None
        self._sessions[page] = session
        if self._view is not None:
            with contextlib.suppress(PlaywrightError, KeyError):
                await self._place(session)  # at once: off the parking monitor (or another env's tile)
        self._target_done(session.target_id)
        return session

    async def _place(self, session: PageSession, force: bool = False) -> None:
        """Put the window of ``session``'s tab fullscreen on this env's tile (:mod:`.tiles`): a new
        window opens on the parking monitor, or where a page's ``window.open`` asked. One window
        at a time (a new tab's session task and the observation may both place it); ``force``:
        take it out of fullscreen and back even when it is in place."""
        origin = self._lease.origin if self._lease is not None else None
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

    async def _session(self, page: Page) -> PageSession | None:
        session = self._sessions.get(page)
        if session is not None:
            return session
        task = self._session_tasks.get(page)
        if task is None:
            task = self._session_tasks[page] = asyncio.ensure_future(self._open_session(page))
            task.add_done_callback(retrieve)
        return await task

    def _on_close(self, page: Page) -> None:
        if page in self._pages:
            index = self._pages.index(page)
            self._pages.remove(page)
            if self._active is page:
                # As Chrome: the tab that takes the closed one's place, else the last one.
                self._active = self._pages[min(index, len(self._pages) - 1)] if self._pages else None
        session = self._sessions.pop(page, None)
        if session is not None:
            self._target_done(session.target_id)
        self._session_tasks.pop(page, None)
        self._crashed.discard(page)
        self._dialogs.forget(page)

    def _on_navigated(self, frame: Any) -> None:
        origin = origin_of(frame.url)
        if origin:
            self._origins.add(origin)

    def _on_response(self, response: Response) -> None:
        origin = origin_of(response.url)
        if origin:
            self._origins.add(origin)
            if origin.startswith("http") and origin not in CACHE_KEPT_ORIGINS:
                self._http_cache_used = True

    def _on_download(self, download: Download) -> None:
        self._spawn(self._save_download(download))

    async def _save_download(self, download: Download) -> None:
        assert self.download_dir is not None
        name = Path(download.suggested_filename or "download").name or "download"
        target = self.download_dir / name
        stem, suffix, n = target.stem, target.suffix, 1
        while target.exists():
            target = self.download_dir / f"{stem} ({n}){suffix}"
            n += 1
        try:
            await download.save_as(target)
        except PlaywrightError:
            return
        self.downloads.append(str(target))

    async def wait_for_downloads(self, timeout: float = 10.0) -> list[str]:
        """Wait for the downloads in progress to be saved; return :attr:`downloads`."""
        pending = [t for t in self._background if not t.done()]
        if pending:
            await asyncio.wait(pending, timeout=timeout)
        return list(self.downloads)

    def _on_crash(self, page: Page) -> None:
        for url, parked in list(self._parked.items()):
            if parked.page is page:
                # A warm page set aside (:mod:`.warm`): dropped, never reused, and no fault of
                # the episode in progress (another context).
                del self._parked[url]
                self._discard_parked(parked)
                return
        if page not in self._crashed:
            self._crashed.add(page)
            self.crashes.append(page.url)

    def _forget_parked(self, parked: Parked) -> None:
        """Drop the DevTools session bookkeeping of a parked context's tab (it is being closed)."""
        self._sessions.pop(parked.page, None)
        self._session_tasks.pop(parked.page, None)

    def _discard_parked(self, parked: Parked) -> None:
        """Close a parked context in the background (nothing waits for it)."""
        self._forget_parked(parked)
        task = asyncio.ensure_future(close_parked(parked))
        task.add_done_callback(retrieve)

    def _check_crashes(self) -> None:
        """Raise once a tab of this episode crashed: the episode's page state is lost with it."""
        if self.crashes:
            raise ControllerError(
                f"the renderer of the tab at {self.crashes[0]} crashed (killed, or out of memory): "
                "this episode's page state is lost"
            )

    # ----------------------------------------------------------------- targets

    async def _watch_targets(self) -> None:
        """Follow page targets created in this context, so a tab the page opens during an action
        is known before the action's round trip returns, and waited for before observing."""
        assert self.browser is not None
        self._pending_targets = set()
        self._targets_settled.set()
        cdp = await self.browser.new_browser_cdp_session()
        ready = False

        def created(event: dict[str, Any]) -> None:
            info = event.get("targetInfo", {})
            if ready and info.get("type") == "page" and info.get("browserContextId") == self._context_id:
                known = {s.target_id for s in self._sessions.values()}
                if info["targetId"] not in known:
                    self._pending_targets.add(info["targetId"])
                    self._targets_settled.clear()

        def destroyed(event: dict[str, Any]) -> None:
            self._target_done(event.get("targetId", ""))

        cdp.on("Target.targetCreated", created)
        cdp.on("Target.targetDestroyed", destroyed)
        await cdp.send("Target.setDiscoverTargets", {"discover": True, "filter": [{"type": "page"}]})
        ready = True
        self._browser_cdp = cdp

    def _target_done(self, target_id: str) -> None:
        self._pending_targets.discard(target_id)
        if not self._pending_targets:
            self._targets_settled.set()
