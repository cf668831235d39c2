"""Warm pages: a reset onto a recently used page (a task with ``keep_page``) without loading it again.

A task whose page keeps its document across episodes (``config["keep_page"]``) opens it with
:meth:`BrowserWarm.show` (``ctx.controller.warm.show(url)``). When the env then switches from page A to page B, A's browser
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
from hud_gym.controllers.browser.contexts import BrowserContexts
from hud_gym.controllers.browser.dialogs import retrieve
from hud_gym.controllers.browser.session import PageSession
from hud_gym.controllers.browser.state import BrowserState, Parked
from hud_gym.controllers.browser.tabs import BrowserTabs, origin_of

__all__ = ["BrowserWarm"]


async def _pause(session: PageSession) -> None:
    """Pause the tab's scripts at their next statement (an idle tab runs none till then)."""
    await session.send("Debugger.enable")
    await session.send("Debugger.pause")


class BrowserWarm:
    """:meth:`show` on ``state``'s session (``contexts`` opens a new context, ``tabs`` closes and
    discards); see the module docstring."""

    def __init__(self, state: BrowserState, tabs: BrowserTabs, contexts: BrowserContexts) -> None:
        self.state = state
        self.tabs = tabs
        self.contexts = contexts

    async def show(self, url: str, timeout: float = 15.0) -> Page:
        """Make the env's only tab show ``url`` (loaded, its scripts running): the tab itself if it
        shows it, else a parked context's tab that does; else ``url`` is loaded in the least
        recently used parked context once ``warm_pages`` are parked, in a new context before. The
        current context is parked when it was opened here and still shows its URL; with
        ``warm_pages=0`` (or a current tab that cannot be parked) the tab navigates, as before.

        Raises:
            ControllerError: the browser is gone.
            playwright.async_api.Error: ``url`` did not load within ``timeout`` seconds.
        """
        self.state.check_alive()
        page = self.state.page
        if page.url == url:
            return page
        warm = self.state.parked.pop(url, None)
        if warm is not None and not await self._resume(warm):
            warm = None
        parkable = self.state.options.warm_pages > 0 and self._parkable(page)
        recycled = None
        if warm is None and parkable and len(self.state.parked) >= self.state.options.warm_pages:
            # Loaded in the least recently used parked context, whose HTTP cache holds the shared
            # scripts already (a new context's is empty, and its renderer new: ~1 s more, loaded).
            _, oldest = self.state.parked.popitem(last=False)
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
            await self.contexts.open()
        else:
            self._enter(target)
            await self.state.clipboard.sync(self.state.context)  # its frames still hold what they had when parked
        return self.state.page if warm is not None else await self._load(url, timeout)

    async def _load(self, url: str, timeout: float) -> Page:
        """Load ``url`` in the current tab; it is then the tab's warm URL (it may be parked)."""
        await self.state.page.goto(url, wait_until="load", timeout=timeout * 1000)
        self.state.warm_url = url
        return self.state.page

    def _parkable(self, page: Page) -> bool:
        return (
            self.state.warm_url is not None
            and page.url == self.state.warm_url
            and self.state.pages == [page]
            and not self.state.crashes
            and not self.state.crashed
            and not self.state.dialogs.opened
        )

    async def _park(self, page: Page) -> None:
        """Set the current context aside, its tab's scripts paused; close the least recently used
        parked contexts beyond ``warm_pages``."""
        assert self.state.context is not None and self.state.warm_url is not None
        session = await self.tabs.session(page)
        if session is None:
            raise ControllerError("the active tab has no DevTools session")
        # Sent in the background (Debugger.enable replays every script of the page: 15-25 ms);
        # resuming the tab waits for it. Until it lands the tab's timers may run, in its own context.
        pausing = asyncio.ensure_future(_pause(session))
        pausing.add_done_callback(retrieve)
        self.state.parked[self.state.warm_url] = Parked(
            url=self.state.warm_url,
            context=self.state.context,
            page=page,
            context_id=self.state.context_id,
            watcher=self.state.browser_cdp,
            pausing=pausing,
        )
        self.state.forget_context()
        while len(self.state.parked) > self.state.options.warm_pages:
            _, oldest = self.state.parked.popitem(last=False)
            self.tabs.discard_parked(oldest)

    async def _resume(self, parked: Parked) -> bool:
        """Resume a parked tab's scripts; False (the context then closed) when it is gone."""
        session = self.state.sessions.get(parked.page)
        if session is None or parked.page.is_closed():
            self.tabs.discard_parked(parked)
            return False
        try:
            if parked.pausing is not None:
                await parked.pausing
            # Disabling the debugger resumes a paused tab, and cancels a pause still waiting for
            # a script to run in an idle one.
            await session.send("Debugger.disable")
        except PlaywrightError:
            self.tabs.discard_parked(parked)
            return False
        return True

    def _enter(self, parked: Parked) -> None:
        """Make a parked context the env's context (its tab the only, active one)."""
        self.state.context = parked.context
        self.state.context_id = parked.context_id
        self.state.browser_cdp = parked.watcher
        self.state.pages = [parked.page]
        self.state.active = parked.page
        self.state.shown = None
        self.state.warm_url = parked.url
        origin = origin_of(parked.url)
        self.state.origins = {origin} if origin else set()
        self.state.http_cache_used = False  # its cache was cleared (or kept) by the reset before it was parked

    async def _close_current(self, page: Page) -> None:
        """Close the current context (it cannot be parked) in the background."""
        assert self.state.context is not None
        current = Parked(url="", context=self.state.context, page=page, context_id=None, watcher=self.state.browser_cdp)
        for tab in list(self.state.pages):
            self.tabs.on_close(tab)
        self.state.forget_context()
        self.tabs.discard_parked(current)
