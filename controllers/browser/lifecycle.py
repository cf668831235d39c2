"""The browser controller's lifecycle: the shared Chromium's lease, the episode reset, health, close.

:meth:`~BrowserLifecycle.start` takes a lease on the process-wide shared Chromium
(:data:`~hud_gym.controllers.browser.chromium.MANAGER`) and opens this env's own
``BrowserContext`` (:mod:`.contexts`: its own cookies, storage, cache, permissions) with its own
download folder (:mod:`.downloads`) and clipboard (:mod:`.clipboard`, emptied at every reset).

Episode reset (``reset_mode="clear"``, the default, ~30 ms): close every extra tab, release held
keys and buttons, clear cookies, permissions, the HTTP cache and the storage (local/session
storage, IndexedDB, cache storage, service workers, ...) of every origin the context loaded,
navigate the main tab to ``about:blank`` and drop its history. ``reset_mode="fresh"`` replaces the
whole context instead (~170 ms); a clear reset does so too every ``fresh_context_every`` episodes,
whenever the context is unhealthy (a tab crashed), and after an episode whose pages opened dialogs
(a ``setInterval(alert)`` page cannot hold a context close back). A task with
``config["keep_page"]`` keeps the main tab's document (pages that reset themselves in
JavaScript); the warm pages of such tasks (:mod:`.warm`) are kept in contexts of their own, which
a reset onto a task without ``keep_page``, and every context replacement, closes.

:meth:`~BrowserLifecycle.close` never hangs: a context that does not close within 10 s (a wedged
renderer) gets the whole browser killed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import Any

from playwright.async_api import Error as PlaywrightError

from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.browser.chromium import MANAGER, BrowserLease
from hud_gym.controllers.browser.contexts import BrowserContexts
from hud_gym.controllers.browser.downloads import BrowserDownloads
from hud_gym.controllers.browser.headed import HeadedView
from hud_gym.controllers.browser.input import BrowserInput
from hud_gym.controllers.browser.state import BrowserState
from hud_gym.controllers.browser.tabs import BrowserTabs, origin_of
from hud_gym.evaluation.threads import run_on_thread
from hud_gym.task import Task

__all__ = ["BrowserLifecycle"]


class BrowserLifecycle:
    """Start, reset, health and close of ``state``'s session, with the collaborators they use."""

    def __init__(
        self,
        state: BrowserState,
        tabs: BrowserTabs,
        contexts: BrowserContexts,
        downloads: BrowserDownloads,
        input: BrowserInput,
    ) -> None:
        self.state = state
        self.tabs = tabs
        self.contexts = contexts
        self.downloads = downloads
        self.input = input
        self._episodes = 0

    async def start(self) -> None:
        """Take a lease on the shared Chromium (launching it if needed) and open a context.

        The headed capture path leases a tile of a shared headed browser on a private display
        (:mod:`.headed`); with ``capture="auto"``, an Xvfb that does not start falls back to CDP.
        """
        state = self.state
        state.closed = False
        state.lease = await self._acquire()
        state.browser = state.lease.browser
        self.downloads.make_folder()
        try:
            display = state.lease.display
            if display is not None:  # (connecting is an X round trip: off the loop, as every X request)
                origin = state.lease.origin or (0, 0)
                state.view = await run_on_thread(lambda: HeadedView(display, state.screen_size, origin))
            await self.contexts.open()
        except BaseException as exc:
            await self.close()  # the env never saw this controller: give everything back now
            if isinstance(exc, PlaywrightError):
                raise ControllerError(f"could not open a browser context: {exc}") from exc
            raise

    async def _acquire(self) -> BrowserLease:
        state = self.state
        options: dict[str, Any] = {
            "executable_path": state.options.executable_path,
            "args": state.options.launch_args,
            "limits": state.limits,
        }
        if state.capture == "headed":
            try:
                return await MANAGER.acquire(display=state.screen_size, **options)
            except ControllerError:
                if state.options.capture != "auto":
                    raise
                state.capture = "cdp"
        return await MANAGER.acquire(headless=state.options.headless, **options)

    async def close(self) -> None:
        """Close the context, remove the download folder, and give the browser lease back (the
        last lease closes Chromium). Never hangs: a context that does not close within 10 s
        (a wedged renderer) gets the whole browser killed. Safe to call twice."""
        state = self.state
        if state.closed:
            return
        state.closed = True
        lease, state.lease = state.lease, None
        connected = state.browser is not None and state.browser.is_connected()
        closed = await self.contexts.close() if connected else await self.contexts.close(timeout=1)
        if not closed and lease is not None:
            await MANAGER.kill(lease.key)
        view, state.view = state.view, None
        if view is not None:
            view.close()
        if lease is not None:
            await MANAGER.release(lease)
        self.downloads.remove_folder()
        state.browser = None

    async def health(self) -> bool:
        """True while the browser is connected, the context is open and no tab crashed."""
        state = self.state
        return (
            not state.closed
            and not state.crashes
            and state.browser is not None
            and state.browser.is_connected()
            and state.context is not None
            and bool(state.pages)
        )

    async def reset(self, task: Task | None, seed: int | None) -> None:
        """A clean state for a new episode; see the module docstring."""
        state = self.state
        state.check_alive()
        self._episodes += 1
        keep_page = bool(task is not None and task.config and task.config.get("keep_page"))
        every = state.options.fresh_context_every
        fresh = (
            state.options.reset_mode == "fresh"
            or (every > 0 and self._episodes % every == 0)
            or not state.pages
            or bool(state.crashed)
            or bool(state.crashes)
            or state.dialogs.opened  # a dialog storm cannot hold a context close back
        )
        try:
            if fresh:
                if not await self.contexts.close():
                    raise ControllerError("the previous browser context did not close (wedged renderer)")
                await self.contexts.open()
            else:
                if not keep_page and state.parked:
                    await self.contexts.close_parked()  # warm pages are for tasks that keep their page
                await self._clear(keep_page)
            await state.clipboard.clear(state.context)
        except PlaywrightError as exc:
            state.check_alive()
            raise ControllerError(f"browser reset failed: {exc}") from exc
        state.loads_at_action = {}
        state.dialogs.records = []
        state.crashes = []
        state.reported_dialogs = state.reported_downloads = 0
        self.downloads.clear_folder()

    async def _clear(self, keep_page: bool) -> None:
        state = self.state
        assert state.context is not None
        main = state.pages[0]
        self.downloads.cancel()
        await self.input.release(main)
        for page in state.pages[1:]:
            with contextlib.suppress(PlaywrightError):
                await page.close()
            self.tabs.on_close(page)
        state.active = main
        session = await self.tabs.session(main)
        if session is None:
            raise ControllerError("the main tab has no DevTools session")
        if not keep_page:
            await main.goto("about:blank", timeout=state.options.navigation_timeout * 1000)
        origins, state.origins = sorted(state.origins), set()
        if keep_page:
            current = origin_of(main.url)
            if current:
                state.origins.add(current)
        calls: list[Awaitable[Any]] = [
            state.context.clear_cookies(),
            state.context.clear_permissions(),
            *(session.send("Storage.clearDataForOrigin", {"origin": o, "storageTypes": "all"}) for o in origins),
        ]
        if state.http_cache_used:
            # Clearing the cache costs the browser's main thread; an episode that fetched
            # nothing over HTTP (a file:// page) left it as it was.
            calls.append(session.send("Network.clearBrowserCache"))
            state.http_cache_used = False
        if not keep_page:
            calls.append(session.send("Page.resetNavigationHistory"))
        await asyncio.gather(*calls)
