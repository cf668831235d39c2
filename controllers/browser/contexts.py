"""The browser session's ``BrowserContext``: opened with its first tab, closed with every parked one.

:meth:`BrowserContexts.open` opens this env's own context in the shared browser (its own cookies,
storage, cache, permissions; the viewport of the env's screen, with the headed frame marker's rows
below it: :mod:`.headed`), installs the env's clipboard (:mod:`.clipboard`) and the navigation
guard (:mod:`.urls`), follows its tabs (:mod:`.tabs`), opens the first tab and its DevTools
session, and watches the context's page targets. :meth:`BrowserContexts.close` closes it, and the
warm pages' parked contexts (:mod:`.warm`), within a bounded time: ``False`` tells the caller a
wedged renderer held a close back.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from typing import Any

from playwright.async_api import Error as PlaywrightError

from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.browser.downloads import BrowserDownloads
from hud_gym.controllers.browser.headed import MARKER_ROWS
from hud_gym.controllers.browser.state import BrowserState
from hud_gym.controllers.browser.tabs import BrowserTabs, close_parked

__all__ = ["BrowserContexts"]


class BrowserContexts:
    """Opens and closes ``state``'s context (its tabs followed by ``tabs``)."""

    def __init__(self, state: BrowserState, tabs: BrowserTabs, downloads: BrowserDownloads) -> None:
        self.state = state
        self.tabs = tabs
        self.downloads = downloads

    async def open(self) -> None:
        """Open a new context as the session's, with one tab (the active one).

        Raises:
            ControllerError: the first tab did not open.
            playwright.async_api.Error: the browser refused.
        """
        state = self.state
        assert state.browser is not None
        # Headed: the frame marker's rows below the observation (:mod:`.headed`).
        rows = MARKER_ROWS if state.view is not None else 0
        width, height = state.screen_size
        options: dict[str, Any] = {
            "viewport": {"width": width, "height": height + rows},
            "screen": {"width": width, "height": height},
            "device_scale_factor": 1,
            "accept_downloads": True,
            **state.options.context_options,
        }
        context = await state.browser.new_context(**options)
        state.context = context
        await state.clipboard.install(context)
        await state.url_policy.guard_context(context)
        state.pages = []
        state.active = None
        state.origins = set()
        state.http_cache_used = False
        self.tabs.follow(context)
        page = await self.tabs.new_tab()
        state.active = page
        session = await self.tabs.session(page)
        if session is None:
            raise ControllerError("the first tab of a new context did not open")
        info = await session.send("Target.getTargetInfo")
        state.context_id = info["targetInfo"].get("browserContextId")
        if state.view is not None:
            await self.tabs.show(page, session)
        await self.tabs.watch_targets()

    async def close(self, timeout: float = 10.0) -> bool:
        """Close the context and the parked ones; False when one did not close in time (a wedged
        renderer)."""
        state = self.state
        self.downloads.cancel()
        for task in state.session_tasks.values():
            task.cancel()
        state.background.clear()
        state.session_tasks.clear()
        context = state.context
        cdp = state.browser_cdp
        state.forget_context()
        state.sessions.clear()
        state.crashed.clear()
        state.dialogs.forget()
        if cdp is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(cdp.detach(), 2)
        closed = await self.close_parked(timeout)
        if context is None:
            return closed
        try:
            await asyncio.wait_for(context.close(), timeout)
        except asyncio.TimeoutError:
            return False
        except PlaywrightError:
            pass  # already gone with its browser
        return closed

    async def close_parked(self, timeout: float = 10.0) -> bool:
        """Close every parked context (:mod:`.warm`); False when one did not close in time."""
        parked, self.state.parked = list(self.state.parked.values()), OrderedDict()
        closed = True
        for entry in parked:
            self.tabs.forget_parked(entry)
            closed = await close_parked(entry, timeout) and closed
        return closed
