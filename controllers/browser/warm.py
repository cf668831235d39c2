"""Warm pages: a reset onto a recently used page (a task with ``keep_page``) without loading it again.

A task whose page keeps its document across episodes (``config["keep_page"]``) opens it with
:meth:`BrowserWarm.show_warm`. When the env then switches from page A to page B, A's browser
context, just cleared by the reset that ended A's episode, is *parked*: its tab's scripts paused
in the debugger (``Debugger.pause``, sent in the background: from then on no timer, animation frame
or event handler of it runs, and it costs no CPU), its tab left out of every list the agent sees.
B's parked context, if there is one, becomes the env's context at once (its tab the only tab, what
actions target and observations capture; on the headed path its window is raised on the env's
tile by the next observation), its scripts resumed. Otherwise B is loaded in the least recently
used parked context once ``warm_pages`` are parked (its HTTP cache holds the shared scripts), in a
new context before that. 0 turns warm pages off: the one tab navigates, as before.

Why a context per page rather than a tab per page: tabs of one context share their origin's
storage, cookies and cross-tab channels, and a paused tab still receives another task's storage
events and ``BroadcastChannel`` messages, delivered when it resumes. Contexts share none of these,
so no global, timer, listener, storage, cookie or DOM of one task reaches another task's episode;
within one task a warm switch guarantees what a same-task reset does (the document kept, restarted
in JavaScript by the task; its cookies and storage cleared at the reset).

Faults: a parked tab that crashed or closed is dropped (its context closed) and its URL opened
anew, never failing the episode in progress. Replacing the context (a fresh reset), closing the
env, or a reset onto a task without ``keep_page`` closes every parked context.
"""

from __future__ import annotations

import asyncio

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.browser.dialogs import retrieve
from hud_gym.controllers.browser.lifecycle import BrowserLifecycle
from hud_gym.controllers.browser.session import PageSession
from hud_gym.controllers.browser.state import Parked
from hud_gym.controllers.browser.tabs import origin_of

__all__ = ["BrowserWarm"]


async def _pause(session: PageSession) -> None:
    """Pause the tab's scripts at their next statement (an idle tab runs none till then)."""
    await session.send("Debugger.enable")
    await session.send("Debugger.pause")


class BrowserWarm(BrowserLifecycle):
    """:meth:`show_warm` (a part of :class:`~.controller.BrowserController`); see the module docstring."""

    async def show_warm(self, url: str, timeout: float = 15.0) -> Page:
        """Make the env's only tab show ``url`` (loaded, its scripts running): the tab itself if it
        shows it, else a parked context's tab that does; else ``url`` is loaded in the least
        recently used parked context once ``warm_pages`` are parked, in a new context before. The
        current context is parked when it was opened here and still shows its URL; with
        ``warm_pages=0`` (or a current tab that cannot be parked) the tab navigates, as before.

        Raises:
            ControllerError: the browser is gone.
            playwright.async_api.Error: ``url`` did not load within ``timeout`` seconds.
        """
        self._check_alive()
        page = self.page
        if page.url == url:
            return page
        warm = self._parked.pop(url, None)
        if warm is not None and not await self._resume(warm):
            warm = None
        parkable = self.options.warm_pages > 0 and self._parkable(page)
        recycled = None
        if warm is None and parkable and len(self._parked) >= self.options.warm_pages:
            # Loaded in the least recently used parked context, whose HTTP cache holds the shared
            # scripts already (a new context's is empty, and its renderer new: ~1 s more, loaded).
            _, oldest = self._parked.popitem(last=False)
            if await self._resume(oldest):
                recycled = oldest
        if warm is None and recycled is None and not parkable:
            return await self._load(url, timeout)
        if parkable:
            await self._park(page)
        else:
            await self._close_current(page)
        target = warm or recycled
        if target is None:
            await self._open_context()
        else:
            self._enter(target)
            await self.clipboard.sync(self.context)  # its frames still hold what they had when parked
        return self.page if warm is not None else await self._load(url, timeout)

    async def _load(self, url: str, timeout: float) -> Page:
        """Load ``url`` in the current tab; it is then the tab's warm URL (it may be parked)."""
        await self.page.goto(url, wait_until="load", timeout=timeout * 1000)
        self._warm_url = url
        return self.page

    def _parkable(self, page: Page) -> bool:
        return (
            self._warm_url is not None
            and page.url == self._warm_url
            and self._pages == [page]
            and not self.crashes
            and not self._crashed
            and not self._dialogs.opened
        )

    async def _park(self, page: Page) -> None:
        """Set the current context aside, its tab's scripts paused; close the least recently used
        parked contexts beyond ``warm_pages``."""
        assert self.context is not None and self._warm_url is not None
        session = await self._session(page)
        if session is None:
            raise ControllerError("the active tab has no DevTools session")
        # Sent in the background (Debugger.enable replays every script of the page: 15-25 ms);
        # resuming the tab waits for it. Until it lands the tab's timers may run, in its own context.
        pausing = asyncio.ensure_future(_pause(session))
        pausing.add_done_callback(retrieve)
        self._parked[self._warm_url] = Parked(
            url=self._warm_url,
            context=self.context,
            page=page,
            context_id=self._context_id,
            watcher=self._browser_cdp,
            pausing=pausing,
        )
        self._detach_current()
        while len(self._parked) > self.options.warm_pages:
            _, oldest = self._parked.popitem(last=False)
            self._discard_parked(oldest)

    async def _resume(self, parked: Parked) -> bool:
        """Resume a parked tab's scripts; False (the context then closed) when it is gone."""
        session = self._sessions.get(parked.page)
        if session is None or parked.page.is_closed():
            self._discard_parked(parked)
            return False
        try:
            if parked.pausing is not None:
                await parked.pausing
            # Disabling the debugger resumes a paused tab, and cancels a pause still waiting for
            # a script to run in an idle one.
            await session.send("Debugger.disable")
        except PlaywrightError:
            self._discard_parked(parked)
            return False
        return True

    def _enter(self, parked: Parked) -> None:
        """Make a parked context the env's context (its tab the only, active one)."""
        self.context = parked.context
        self._context_id = parked.context_id
        self._browser_cdp = parked.watcher
        self._pages = [parked.page]
        self._active = parked.page
        self._shown = None
        self._warm_url = parked.url
        origin = origin_of(parked.url)
        self._origins = {origin} if origin else set()
        self._http_cache_used = False  # its cache was cleared (or kept) by the reset before it was parked

    def _detach_current(self) -> None:
        """Forget the current context without closing it (it was parked, or is being closed)."""
        self.context = None
        self._browser_cdp = None
        self._context_id = None
        self._pages = []
        self._active = None
        self._shown = None
        self._warm_url = None
        self._pending_targets.clear()
        self._targets_settled.set()

    async def _close_current(self, page: Page) -> None:
        """Close the current context (it cannot be parked) in the background."""
        assert self.context is not None
        current = Parked(url="", context=self.context, page=page, context_id=None, watcher=self._browser_cdp)
        for tab in list(self._pages):
            self._on_close(tab)
        self._detach_current()
        self._discard_parked(current)
