"""The browser controller's lifecycle: the shared Chromium's lease, the context, the episode reset.

:meth:`~BrowserLifecycle.start` takes a lease on the process-wide shared Chromium
(:data:`~hud_gym.controllers.browser.chromium.MANAGER`) and opens this env's own
``BrowserContext`` (its own cookies, storage, cache, permissions and download folder) with the
env's own clipboard (:mod:`.clipboard`, emptied at every reset).

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
import shutil
from collections import OrderedDict
from collections.abc import Awaitable
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.browser.chromium import MANAGER, BrowserLease
from hud_gym.controllers.browser.headed import MARKER_ROWS, HeadedView
from hud_gym.controllers.browser.session import PageSession
from hud_gym.controllers.browser.tabs import BrowserTabs, close_parked, origin_of
from hud_gym.controllers.temp_folders import make_temp_folder
from hud_gym.evaluation.threads import run_on_thread
from hud_gym.task import Task

__all__ = ["BrowserLifecycle"]


class BrowserLifecycle(BrowserTabs):
    """Start, reset, health and close (a part of :class:`~.controller.BrowserController`)."""

    async def start(self) -> None:
        """Take a lease on the shared Chromium (launching it if needed) and open a context.

        The headed capture path leases a tile of a shared headed browser on a private display
        (:mod:`.headed`); with ``capture="auto"``, an Xvfb that does not start falls back to CDP.
        """
        self._closed = False
        self._lease = await self._acquire()
        self.browser = self._lease.browser
        self.download_dir = make_temp_folder("hud-gym-downloads-", self)
        try:
            display = self._lease.display
            if display is not None:  # (connecting is an X round trip: off the loop, as every X request)
                origin = self._lease.origin or (0, 0)
                self._view = await run_on_thread(lambda: HeadedView(display, self.screen_size, origin))
            await self._open_context()
        except BaseException as exc:
            await self.close()  # the env never saw this controller: give everything back now
            if isinstance(exc, PlaywrightError):
                raise ControllerError(f"could not open a browser context: {exc}") from exc
            raise

    async def _acquire(self) -> BrowserLease:
        options: dict[str, Any] = {
            "executable_path": self.options.executable_path,
            "args": self.options.launch_args,
            "limits": self.limits,
        }
        if self.capture == "headed":
            try:
                return await MANAGER.acquire(display=self.screen_size, **options)
            except ControllerError:
                if self.options.capture != "auto":
                    raise
                self.capture = "cdp"
        return await MANAGER.acquire(headless=self.options.headless, **options)

    async def _show(self, page: Page, session: PageSession) -> None:
        """Make ``page`` the one this env's tile shows: its window fullscreen there, and on top."""
        self._shown = page
        force, self._replace_window = self._replace_window, False
        await self._place(session, force=force)
        await page.bring_to_front()

    async def _open_context(self) -> None:
        assert self.browser is not None
        # Headed: the frame marker's rows below the observation (:mod:`.headed`).
        rows = MARKER_ROWS if self._view is not None else 0
        options: dict[str, Any] = {
            "viewport": {"width": self.screen_size[0], "height": self.screen_size[1] + rows},
            "screen": {"width": self.screen_size[0], "height": self.screen_size[1]},
            "device_scale_factor": 1,
            "accept_downloads": True,
            **self.options.context_options,
        }
        context = await self.browser.new_context(**options)
        self.context = context
        await self.clipboard.install(context)
        await self.url_policy.guard_context(context)
        self._pages = []
        self._active = None
        self._origins = set()
        self._http_cache_used = False
        context.on("page", self._on_page)
        context.on("response", self._on_response)
        page = await self._new_tab()
        self._active = page
        session = await self._session(page)
        if session is None:
            raise ControllerError("the first tab of a new context did not open")
        info = await session.send("Target.getTargetInfo")
        self._context_id = info["targetInfo"].get("browserContextId")
        if self._view is not None:
            await self._show(page, session)
        await self._watch_targets()

    async def _close_context(self, timeout: float = 10.0) -> bool:
        """Close the context; False when it did not close in time (a wedged renderer)."""
        for task in list(self._background) + list(self._session_tasks.values()):
            task.cancel()
        self._background.clear()
        self._session_tasks.clear()
        context, self.context = self.context, None
        cdp, self._browser_cdp = self._browser_cdp, None
        self._sessions.clear()
        self._pages = []
        self._active = None
        self._shown = None
        self._crashed.clear()
        self._dialogs.forget()
        self._pending_targets.clear()
        self._targets_settled.set()
        self._warm_url = None
        if cdp is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(cdp.detach(), 2)
        closed = await self._close_parked(timeout)
        if context is None:
            return closed
        try:
            await asyncio.wait_for(context.close(), timeout)
        except asyncio.TimeoutError:
            return False
        except PlaywrightError:
            pass  # already gone with its browser
        return closed

    async def _close_parked(self, timeout: float = 10.0) -> bool:
        """Close every parked context (:mod:`.warm`); False when one did not close in time."""
        parked, self._parked = list(self._parked.values()), OrderedDict()
        closed = True
        for entry in parked:
            self._forget_parked(entry)
            closed = await close_parked(entry, timeout) and closed
        return closed

    async def close(self) -> None:
        """Close the context, remove the download folder, and give the browser lease back (the
        last lease closes Chromium). Never hangs: a context that does not close within 10 s
        (a wedged renderer) gets the whole browser killed. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        lease, self._lease = self._lease, None
        connected = self.browser is not None and self.browser.is_connected()
        closed = await self._close_context() if connected else await self._close_context(timeout=1)
        if not closed and lease is not None:
            await MANAGER.kill(lease.key)
        view, self._view = self._view, None
        if view is not None:
            view.close()
        if lease is not None:
            await MANAGER.release(lease)
        if self.download_dir is not None:
            shutil.rmtree(self.download_dir, ignore_errors=True)
        self.browser = None

    async def health(self) -> bool:
        """True while the browser is connected, the context is open and no tab crashed."""
        return (
            not self._closed
            and not self.crashes
            and self.browser is not None
            and self.browser.is_connected()
            and self.context is not None
            and bool(self._pages)
        )

    def _check_alive(self) -> None:
        if self.browser is None or self.context is None:
            raise ControllerError("the browser controller is not started")
        if not self.browser.is_connected():
            raise ControllerError("Chromium disconnected (the browser process died)")

    # ----------------------------------------------------------------- reset

    async def reset(self, task: Task | None, seed: int | None) -> None:
        """A clean state for a new episode; see the module docstring."""
        self._check_alive()
        self._episodes += 1
        keep_page = bool(task is not None and task.config and task.config.get("keep_page"))
        fresh = (
            self.options.reset_mode == "fresh"
            or (self.options.fresh_context_every > 0 and self._episodes % self.options.fresh_context_every == 0)
            or not self._pages
            or bool(self._crashed)
            or bool(self.crashes)
            or self._dialogs.opened  # a dialog storm cannot hold a context close back
        )
        try:
            if fresh:
                if not await self._close_context():
                    raise ControllerError("the previous browser context did not close (wedged renderer)")
                await self._open_context()
            else:
                if not keep_page and self._parked:
                    await self._close_parked()  # warm pages are for tasks that keep their page
                await self._clear(keep_page)
            await self.clipboard.clear(self.context)
        except PlaywrightError as exc:
            self._check_alive()
            raise ControllerError(f"browser reset failed: {exc}") from exc
        self._loads_at_action = {}
        self._dialogs.records = []
        self.downloads = []
        self.crashes = []
        self._reported_dialogs = self._reported_downloads = 0
        if self.download_dir is not None:
            for path in self.download_dir.iterdir():
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)

    async def _clear(self, keep_page: bool) -> None:
        assert self.context is not None
        main = self._pages[0]
        for task in list(self._background):
            task.cancel()
        await self._release_inputs(main)
        for page in self._pages[1:]:
            with contextlib.suppress(PlaywrightError):
                await page.close()
            self._on_close(page)
        self._active = main
        session = await self._session(main)
        if session is None:
            raise ControllerError("the main tab has no DevTools session")
        if not keep_page:
            await main.goto("about:blank", timeout=self.options.navigation_timeout * 1000)
        origins, self._origins = sorted(self._origins), set()
        if keep_page:
            current = origin_of(main.url)
            if current:
                self._origins.add(current)
        calls: list[Awaitable[Any]] = [
            self.context.clear_cookies(),
            self.context.clear_permissions(),
            *(session.send("Storage.clearDataForOrigin", {"origin": o, "storageTypes": "all"}) for o in origins),
        ]
        if self._http_cache_used:
            # Clearing the cache costs the browser's main thread; an episode that fetched
            # nothing over HTTP (a file:// page) left it as it was.
            calls.append(session.send("Network.clearBrowserCache"))
            self._http_cache_used = False
        if not keep_page:
            calls.append(session.send("Page.resetNavigationHistory"))
        await asyncio.gather(*calls)

    async def _release_inputs(self, page: Page) -> None:
        for key in reversed(self._held_keys):
            with contextlib.suppress(PlaywrightError):
                await page.keyboard.up(key)
        self._held_keys = []
        self.pointer = (0, 0)
        with contextlib.suppress(PlaywrightError):
            await page.mouse.move(0, 0)
