"""The Chromium controller of ``hud/Browser-v0``.

One :class:`BrowserController` drives one isolated ``BrowserContext`` (its own cookies, storage,
cache, permissions and download folder) in the process-wide shared Chromium
(:data:`~hud_gym.controllers.browser.chromium.MANAGER`). Actions are real (trusted) input events
sent with Playwright's mouse and keyboard, at screen-pixel coordinates of the viewport.

Episode reset (``reset_mode="clear"``, the default, ~30 ms): close every extra tab, release held
keys and buttons, clear cookies, permissions, the HTTP cache and the storage (local/session
storage, IndexedDB, cache storage, service workers, ...) of every origin the context loaded,
navigate the main tab to ``about:blank`` and drop its history. ``reset_mode="fresh"`` replaces the
whole context instead (~170 ms); a clear reset does so too every ``fresh_context_every`` episodes,
and whenever the context is unhealthy. A task with ``config["keep_page"]`` keeps the main tab's
document (MiniWoB++ pages reset themselves in JavaScript).

Observation: after the action, one ``Runtime.evaluate`` round trip on the tab's own DevTools
session returns the title (and the elements); a navigation the action started has been reported
by then, and is waited for (up to ``navigation_timeout``); a new tab the page opened is waited
for and becomes the active tab; then ``Page.captureScreenshot`` renders a new frame.

Navigation policy (:mod:`.urls`): ``file:`` URLs (unless ``allow_file_urls`` names a directory),
``view-source:``, ``chrome:``, ``devtools:``, ``javascript:`` ... are refused: an agent's ``goto``
or ``new_tab`` to one is an :class:`~hud_gym.actions.ActionError`, and pages cannot reach them.

Faults: a tab whose renderer crashed (killed, out of memory) has lost the episode's page state, so
every later ``step``/``observe`` of the episode raises :class:`ControllerError` (the env reports
``env_error``); the next reset opens a fresh context. Dialogs are answered as they open, without
waiting on the page (:mod:`.dialogs`): the agent's ``goto``/``back``/``forward``/``reload`` away
from a tab that opened dialogs stops its scripts first, and the reset after an episode with dialogs
replaces the context, so a ``setInterval(alert)`` page holds back neither.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import numpy as np
from playwright.async_api import Browser, BrowserContext, CDPSession, Download, Page, Response
from playwright.async_api import Error as PlaywrightError

from hud_gym.actions import (
    ActionError,
    CLAAction,
    ClickAction,
    CustomAction,
    DragAction,
    KeyDownAction,
    KeyUpAction,
    MoveAction,
    Point,
    PositionFetch,
    PressAction,
    ScreenshotFetch,
    ScrollAction,
    TypeAction,
    WaitAction,
)
from hud_gym.controllers.base import ActionOutcome, Controller, ControllerError, Frame
from hud_gym.controllers.browser.chromium import MANAGER, BrowserLease
from hud_gym.controllers.browser.dialogs import Dialogs, WaitUntil, retrieve
from hud_gym.controllers.browser.keys import playwright_keys
from hud_gym.controllers.browser.observation import ImageFormat
from hud_gym.controllers.browser.session import PageSession
from hud_gym.controllers.browser.urls import NavigationRefused, UrlPolicy, with_scheme
from hud_gym.controllers.dispatch import ActionTable, CustomActions
from hud_gym.task import Task

__all__ = ["CUSTOM_ACTIONS", "BrowserController", "ResetMode", "with_scheme"]

ResetMode = Literal["clear", "fresh"]

# Drag interpolation: one mousemove per _STEP_PX pixels, at most _MAX_STEPS per path segment.
# Chromium delivers mousemoves once per frame (~16 ms each), so a few suffice: draggables,
# sliders and HTML5 drag-and-drop start after a few pixels of motion.
_STEP_PX = 40
_MAX_STEPS = 5


def origin_of(url: str) -> str | None:
    """The storage origin of ``url`` (``None`` for ``about:``, ``data:`` and other opaque ones)."""
    parts = urlsplit(url)
    if parts.scheme in ("http", "https", "ws", "wss") and parts.netloc:
        return f"{parts.scheme}://{parts.netloc.rsplit('@', 1)[-1]}"
    if parts.scheme == "file":
        return "file://"
    return None


class BrowserController(Controller):
    """Drives one isolated browser context in the shared Chromium; see the module docstring.

    Args:
        screen_size: viewport ``(width, height)`` in CSS pixels (device scale factor 1).
        headless: run Chromium without a window.
        elements: report the visible interactive and text elements in ``info["elements"]``.
        executable_path: the Chromium to run (default: :func:`~.chromium.find_chromium`).
        launch_args: extra Chromium flags (envs with different flags get different browsers).
        context_options: extra ``browser.new_context`` options (``locale``, ``timezone_id``,
            ``user_agent``, ``ignore_https_errors``, ...).
        reset_mode: ``"clear"`` (default) or ``"fresh"``; see the module docstring.
        fresh_context_every: with ``"clear"``, replace the context every this many episodes
            (0 = never).
        screenshot_format: ``"jpeg"`` (fast) or ``"png"`` (lossless, about twice as slow).
        jpeg_quality: JPEG quality 1-100.
        navigation_timeout: seconds a navigation (goto, back, a clicked link) is waited for.
        max_elements: cap on ``info["elements"]``.
        allow_file_urls: a directory whose files pages may open as ``file:`` URLs (``None``: no
            file at all); see :mod:`.urls`.

    Attributes:
        browser: the shared Playwright ``Browser`` (after :meth:`start`).
        context: this env's ``BrowserContext``.
        page: the active tab (a Playwright ``Page``).
        pages: the open tabs, in the order of ``info["tabs"]``.
        downloads: paths of the files downloaded in this episode (in :attr:`download_dir`).
        download_dir: this env's download folder (removed on close).
        last_response: the main-frame response of the active tab's last navigation, if any.
        pointer: the last pointer position ``(x, y)`` in screen pixels.
        crashes: URLs of the tabs whose renderer crashed in this episode (then every ``step`` and
            ``observe`` raises :class:`ControllerError` until the next reset).
        url_policy: the URLs this env opens (:class:`~.urls.UrlPolicy`).
    """

    gym = "browser"
    supports_capture_region = True

    def __init__(
        self,
        screen_size: tuple[int, int] = (1280, 720),
        *,
        headless: bool = True,
        elements: bool = False,
        executable_path: str | None = None,
        launch_args: tuple[str, ...] | list[str] = (),
        context_options: dict[str, Any] | None = None,
        reset_mode: ResetMode = "clear",
        fresh_context_every: int = 100,
        screenshot_format: ImageFormat = "jpeg",
        jpeg_quality: int = 85,
        navigation_timeout: float = 10.0,
        max_elements: int = 500,
        allow_file_urls: str | Path | None = None,
    ) -> None:
        super().__init__(screen_size)
        if reset_mode not in ("clear", "fresh"):
            raise ValueError(f"reset_mode must be 'clear' or 'fresh', got {reset_mode!r}")
        if screenshot_format not in ("jpeg", "png"):
            raise ValueError(f"screenshot_format must be 'jpeg' or 'png', got {screenshot_format!r}")
        if not 1 <= jpeg_quality <= 100:
            raise ValueError(f"jpeg_quality must be in 1..100, got {jpeg_quality}")
        self.headless = headless
        self.elements = elements
        self.executable_path = executable_path
        self.launch_args = tuple(launch_args)
        self.context_options = dict(context_options or {})
        self.reset_mode: ResetMode = reset_mode
        self.fresh_context_every = fresh_context_every
        self.screenshot_format: ImageFormat = screenshot_format
        self.jpeg_quality = jpeg_quality
        self.navigation_timeout = navigation_timeout
        self.max_elements = max_elements
        self.url_policy = UrlPolicy(allow_file_urls)

        self.browser: Browser | None = None
        self.context: BrowserContext | None = None
        self._dialogs = Dialogs()
        self.downloads: list[str] = []
        self.crashes: list[str] = []
        self.pointer: tuple[int, int] = (0, 0)
        self.download_dir: Path | None = None

        self._lease: BrowserLease | None = None
        self._pages: list[Page] = []
        self._active: Page | None = None
        self._sessions: dict[Page, PageSession] = {}
        self._session_tasks: dict[Page, asyncio.Task[PageSession | None]] = {}
        self._responses: dict[Page, Response] = {}
        self._crashed: set[Page] = set()
        self._origins: set[str] = set()
        # Whether an HTTP(S) response may have filled the HTTP cache since it was last cleared.
        self._http_cache_used = False
        self._held_keys: list[str] = []
        self._background: set[asyncio.Task[Any]] = set()
        self._browser_cdp: CDPSession | None = None
        self._context_id: str | None = None
        self._pending_targets: set[str] = set()
        self._targets_settled = asyncio.Event()
        self._targets_settled.set()
        self._own_tab = False
        self._reported_dialogs = 0
        self._reported_downloads = 0
        self._episodes = 0
        self._closed = False
        self._loads_at_action: dict[Page, int] = {}

    # ================================================================= lifecycle

    async def start(self) -> None:
        """Take a lease on the shared Chromium (launching it if needed) and open a context."""
        self._closed = False
        self._lease = await MANAGER.acquire(
            headless=self.headless, executable_path=self.executable_path, args=self.launch_args
        )
        self.browser = self._lease.browser
        self.download_dir = Path(tempfile.mkdtemp(prefix="hud-gym-downloads-"))
        try:
            await self._open_context()
        except BaseException as exc:
            await self.close()  # the env never saw this controller: give everything back now
            if isinstance(exc, PlaywrightError):
                raise ControllerError(f"could not open a browser context: {exc}") from exc
            raise

    async def _open_context(self) -> None:
        assert self.browser is not None
        options: dict[str, Any] = {
            "viewport": {"width": self.screen_size[0], "height": self.screen_size[1]},
            "screen": {"width": self.screen_size[0], "height": self.screen_size[1]},
            "device_scale_factor": 1,
            "accept_downloads": True,
            **self.context_options,
        }
        context = await self.browser.new_context(**options)
        self.context = context
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
        await self._watch_targets()

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
        self._crashed.clear()
        self._dialogs.forget()
        self._responses.clear()
        self._pending_targets.clear()
        self._targets_settled.set()
        if cdp is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(cdp.detach(), 2)
        if context is None:
            return True
        try:
            await asyncio.wait_for(context.close(), timeout)
        except asyncio.TimeoutError:
            return False
        except PlaywrightError:
            pass  # already gone with its browser
        return True

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

    # ================================================================= tabs and events

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

    @property
    def last_response(self) -> Response | None:
        """The main-frame response of the active tab's last navigation."""
        return self._responses.get(self._active) if self._active is not None else None

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
        self._target_done(session.target_id)
        return session

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
        self._responses.pop(page, None)
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
            if origin.startswith("http"):
                self._http_cache_used = True
        try:
            frame = response.frame
            if response.request.is_navigation_request() and frame.parent_frame is None:
                self._responses[frame.page] = response
        except PlaywrightError:
            pass

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
        if page not in self._crashed:
            self._crashed.add(page)
            self.crashes.append(page.url)

    def _check_crashes(self) -> None:
        """Raise once a tab of this episode crashed: the episode's page state is lost with it."""
        if self.crashes:
            raise ControllerError(
                f"the renderer of the tab at {self.crashes[0]} crashed (killed, or out of memory): "
                "this episode's page state is lost")

    # ================================================================= reset

    async def reset(self, task: Task | None, seed: int | None) -> None:
        """A clean state for a new episode; see the module docstring."""
        self._check_alive()
        self._episodes += 1
        keep_page = bool(task is not None and task.config and task.config.get("keep_page"))
        fresh = (
            self.reset_mode == "fresh"
            or (self.fresh_context_every > 0 and self._episodes % self.fresh_context_every == 0)
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
                await self._clear(keep_page)
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
            await main.goto("about:blank", timeout=self.navigation_timeout * 1000)
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
            # nothing over HTTP (a file:// page such as MiniWoB's) left it as it was.
            calls.append(session.send("Network.clearBrowserCache"))
            self._http_cache_used = False
        if not keep_page:
            calls.append(session.send("Page.resetNavigationHistory"))
        await asyncio.gather(*calls)
        self._responses.clear()

    async def _release_inputs(self, page: Page) -> None:
        for key in reversed(self._held_keys):
            with contextlib.suppress(PlaywrightError):
                await page.keyboard.up(key)
        self._held_keys = []
        self.pointer = (0, 0)
        with contextlib.suppress(PlaywrightError):
            await page.mouse.move(0, 0)

    # ================================================================= actions

    async def step(self, action: CLAAction) -> ActionOutcome:
        """Execute one CLA action (coordinates in screen pixels).

        Raises:
            ActionError: an invalid action (unknown key or custom action, bad arguments).
            ControllerError: the browser is gone.
        """
        self._check_alive()
        self._check_crashes()
        if self._active is None:
            raise ControllerError("the browser has no open tab")
        self._loads_at_action = {page: session.loads for page, session in self._sessions.items()}
        try:
            return await ACTIONS.run(self, action)
        except ActionError:
            raise
        except PlaywrightError as exc:
            self._check_alive()
            self._check_crashes()
            return ActionOutcome(info={"browser_error": str(exc).splitlines()[0]})

    # One handler per CLA type (the table is :data:`ACTIONS`, after the class); each returns the outcome.

    async def _click(self, action: ClickAction) -> ActionOutcome:
        page = self.page
        await self._holding(page, action.hold_keys, lambda: self._click_at(page, action))
        return ActionOutcome()

    async def _press(self, action: PressAction) -> ActionOutcome:
        await self._press_keys(self.page, playwright_keys(action.keys))
        return ActionOutcome()

    async def _key_down(self, action: KeyDownAction) -> ActionOutcome:
        page = self.page
        for key in playwright_keys(action.keys):
            if key not in self._held_keys:
                await page.keyboard.down(key)
                self._held_keys.append(key)
        return ActionOutcome()

    async def _key_up(self, action: KeyUpAction) -> ActionOutcome:
        page = self.page
        for key in reversed(playwright_keys(action.keys)):
            await page.keyboard.up(key)
            if key in self._held_keys:
                self._held_keys.remove(key)
        return ActionOutcome()

    async def _type(self, action: TypeAction) -> ActionOutcome:
        page = self.page
        if action.text:
            await page.keyboard.type(action.text)
        if action.enter_after:
            await page.keyboard.press("Enter")
        return ActionOutcome()

    async def _scroll(self, action: ScrollAction) -> ActionOutcome:
        page = self.page
        await self._holding(page, action.hold_keys, lambda: self._scroll_at(page, action))
        return ActionOutcome()

    async def _move(self, action: MoveAction) -> ActionOutcome:
        if action.point is not None:
            target = self._clamp(action.point)
        elif action.offset is not None:
            target = self._clamp(Point(x=self.pointer[0] + action.offset.x, y=self.pointer[1] + action.offset.y))
        else:
            return ActionOutcome()
        await self.page.mouse.move(*target)  # a jump, as xdotool/pyautogui moves with no duration
        self.pointer = target
        return ActionOutcome()

    async def _drag(self, action: DragAction) -> ActionOutcome:
        page = self.page
        await self._holding(page, action.hold_keys, lambda: self._drag_along(page, action))
        return ActionOutcome()

    async def _wait(self, action: WaitAction) -> ActionOutcome:
        await asyncio.sleep(action.time / 1000)
        return ActionOutcome()

    async def _position(self, action: PositionFetch) -> ActionOutcome:
        return ActionOutcome(info={"position": self.pointer})

    async def _screenshot(self, action: ScreenshotFetch) -> ActionOutcome:
        return ActionOutcome()  # the observation after every step is the screenshot

    def _clamp(self, point: Point | None) -> tuple[int, int]:
        if point is None:
            return self.pointer
        width, height = self.screen_size
        return min(max(point.x, 0), width - 1), min(max(point.y, 0), height - 1)

    async def _holding(self, page: Page, hold_keys: list[str] | None, body: Callable[[], Awaitable[None]]) -> None:
        """Run ``body()`` with ``hold_keys`` pressed (down in order, up in reverse order)."""
        keys = [k for k in playwright_keys(hold_keys) if k not in self._held_keys]
        pressed: list[str] = []
        try:
            for key in keys:
                await page.keyboard.down(key)
                pressed.append(key)
            await body()
        finally:
            for key in reversed(pressed):
                with contextlib.suppress(PlaywrightError):
                    await page.keyboard.up(key)

    async def _click_at(self, page: Page, action: ClickAction) -> None:
        x, y = self._clamp(action.point)
        delays = action.pattern or []
        if delays or action.button in ("back", "forward"):
            await page.mouse.move(x, y)
        self.pointer = (x, y)
        for i in range(len(delays) + 1):
            # click_count rises with each click, so dblclick (and triple-click selection) fire.
            if action.button in ("back", "forward"):
                await self._side_button(page, x, y, action.button, i + 1)
            elif not delays:
                await page.mouse.click(x, y, button=action.button)  # one driver round trip
            else:
                await page.mouse.down(button=action.button, click_count=i + 1)
                await page.mouse.up(button=action.button, click_count=i + 1)
            if i < len(delays):
                await asyncio.sleep(delays[i] / 1000)

    async def _side_button(self, page: Page, x: int, y: int, button: str, count: int) -> None:
        """Back/forward mouse buttons (Playwright's mouse has only left/middle/right)."""
        session = await self._session(page)
        if session is None:
            raise ActionError("the active tab has no DevTools session")
        mask = 8 if button == "back" else 16
        base = {"x": x, "y": y, "button": button, "clickCount": count}
        await session.send("Input.dispatchMouseEvent", {"type": "mousePressed", "buttons": mask, **base})
        await session.send("Input.dispatchMouseEvent", {"type": "mouseReleased", "buttons": 0, **base})

    async def _press_keys(self, page: Page, keys: list[str]) -> None:
        if len(keys) == 1:
            await page.keyboard.press(keys[0])
            return
        pressed: list[str] = []
        try:
            for key in keys:
                await page.keyboard.down(key)
                pressed.append(key)
        finally:
            for key in reversed(pressed):
                with contextlib.suppress(PlaywrightError):
                    await page.keyboard.up(key)

    async def _scroll_at(self, page: Page, action: ScrollAction) -> None:
        x, y = self._clamp(action.point)
        await page.mouse.move(x, y)
        self.pointer = (x, y)
        if action.scroll is not None and (action.scroll.x or action.scroll.y):
            await page.mouse.wheel(action.scroll.x, action.scroll.y)
            # The compositor scrolls at once; the page's scrollX/Y follow at its next frame.
            session = await self._session(page)
            if session is not None:
                await session.send(
                    "Runtime.evaluate",
                    {"expression": "new Promise(r => requestAnimationFrame(() => r(0)))", "awaitPromise": True},
                )

    @staticmethod
    def _steps(start: tuple[int, int], end: tuple[int, int]) -> int:
        distance = math.hypot(end[0] - start[0], end[1] - start[1])
        return max(1, min(_MAX_STEPS, math.ceil(distance / _STEP_PX)))

    async def _drag_along(self, page: Page, action: DragAction) -> None:
        path = [self._clamp(p) for p in action.path]
        delays = action.pattern or []
        await page.mouse.move(*path[0])
        self.pointer = path[0]
        await page.mouse.down()
        try:
            for i, point in enumerate(path[1:]):
                if delays:
                    await asyncio.sleep(delays[i % len(delays)] / 1000)
                await page.mouse.move(*point, steps=self._steps(self.pointer, point))
                self.pointer = point
        finally:
            await page.mouse.up()

    # ----------------------------------------------------------------- custom actions

    async def _custom(self, action: CustomAction) -> ActionOutcome:
        return await CUSTOM.run(self, action)

    # One handler per custom action (the table is :data:`CUSTOM`, after the class).

    async def _goto(self, args: dict[str, Any]) -> ActionOutcome:
        page = self.page
        url = args.get("url")
        if not isinstance(url, str) or not url:
            raise ActionError("custom action 'goto' needs args {'url': '<address>'}")
        target = self._allowed(url)
        timeout_ms = self.navigation_timeout * 1000
        return await self._navigate(page, lambda wait_until: page.goto(target, timeout=timeout_ms,
                                                                       wait_until=wait_until))

    async def _back(self, args: dict[str, Any]) -> ActionOutcome:
        return await self._history(self.page.go_back)

    async def _forward(self, args: dict[str, Any]) -> ActionOutcome:
        return await self._history(self.page.go_forward)

    async def _reload(self, args: dict[str, Any]) -> ActionOutcome:
        return await self._history(self.page.reload)

    async def _history(self, move: Callable[..., Awaitable[Response | None]]) -> ActionOutcome:
        """``back``, ``forward`` or ``reload`` of the active tab (``move`` is the page's method)."""
        timeout_ms = self.navigation_timeout * 1000
        return await self._navigate(self.page, lambda wait_until: move(timeout=timeout_ms, wait_until=wait_until))

    async def _new_tab_action(self, args: dict[str, Any]) -> ActionOutcome:
        url = args.get("url")
        if url is not None and not isinstance(url, str):
            raise ActionError("custom action 'new_tab' takes args {'url': '<address>'} (optional)")
        address = self._allowed(url) if url else None
        tab = await self._new_tab()
        self._active = tab
        if address:
            timeout_ms = self.navigation_timeout * 1000
            return await self._navigate(tab, lambda wait_until: tab.goto(address, timeout=timeout_ms,
                                                                         wait_until=wait_until))
        return ActionOutcome()

    async def _switch_tab(self, args: dict[str, Any]) -> ActionOutcome:
        index = self._tab_index(args.get("index"), "switch_tab")
        self._active = self._pages[index]
        await self._active.bring_to_front()
        return ActionOutcome()

    async def _close_tab(self, args: dict[str, Any]) -> ActionOutcome:
        index = self._tab_index(args.get("index", self._pages.index(self.page)), "close_tab")
        page = self._pages[index]
        if len(self._pages) == 1:
            # A browser window never has zero tabs: open a blank one first.
            await self._new_tab()
        await page.close()
        self._on_close(page)
        if self._active is not None:
            await self._active.bring_to_front()
        return ActionOutcome()

    def _tab_index(self, index: Any, name: str) -> int:
        if isinstance(index, bool) or not isinstance(index, int):
            raise ActionError(f"custom action {name!r} needs args {{'index': <int>}}, got {index!r}")
        if not -len(self._pages) <= index < len(self._pages):
            raise ActionError(f"custom action {name!r}: no tab {index} (there are {len(self._pages)})")
        return index % len(self._pages)

    def _allowed(self, url: str) -> str:
        """The URL to open for an agent's ``url``; an :class:`ActionError` when it is refused."""
        try:
            return self.url_policy.check(url)
        except NavigationRefused as exc:
            raise ActionError(str(exc)) from None

    async def _navigate(self, page: Page, navigation: Callable[[WaitUntil], Awaitable[Response | None]]) -> ActionOutcome:
        """Run ``navigation(wait_until)`` of ``page``; a failure (refused connection, timeout,
        aborted) is reported in ``info["navigation_error"]``, never raised: the page shows the
        browser's error page."""
        try:
            response = await self._dialogs.leave(page, self._sessions.get(page), navigation, self.navigation_timeout)
        except PlaywrightError as exc:
            self._check_alive()
            return ActionOutcome(info={"navigation_error": str(exc).splitlines()[0]})
        if response is not None:
            self._responses[page] = response
        return ActionOutcome()

    # ================================================================= observation

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
        info: dict[str, Any] = {}
        failures = 0
        # Wait for a load the last action (or setup) started; a page that keeps loading after
        # that wait timed out, or that was loading before the action, is observed as it is.
        patient = True
        for _attempt in range(6):
            if not self._targets_settled.is_set():
                # The page opened a tab during the action: wait until Playwright has it.
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._targets_settled.wait(), self.navigation_timeout)
            if self._active is None:
                await self._open_blank()
            page = self.page
            self._check_crashes()
            session = await self._session(page)
            if session is None:
                if page.is_closed():
                    continue
                raise ControllerError("could not attach to the active tab")
            others = [p for p in self._pages if p is not page]
            loads_before = session.loads
            # No load started since the action began: a load in progress is an old one.
            wait = patient and self._loads_at_action.get(page) != loads_before

            def navigated() -> bool:
                return session.loads != loads_before or (wait and session.loading)  # noqa: B023

            # The state round trip and the capture go out together; the capture is fresh
            # anyway (a new compositor frame after the action). The round trip's reply comes
            # after any navigation the action started was reported: then the capture (which
            # may never finish on a document being replaced) is dropped, the navigation waited
            # for, and the page observed again.
            state_task = asyncio.ensure_future(session.state(self.elements, self.max_elements))
            shot_task = asyncio.ensure_future(session.screenshot(self.screenshot_format, self.jpeg_quality))
            try:
                state = await asyncio.wait_for(asyncio.shield(state_task), self.navigation_timeout)
                if not navigated() and self._targets_settled.is_set():
                    screenshot = await asyncio.wait_for(asyncio.shield(shot_task), self.navigation_timeout)
                    if not navigated() and self._active is page:
                        titles = await asyncio.gather(*(self._title(p) for p in others))
                        names = {**dict(zip(others, titles, strict=True)), page: state["title"]}
                        return self._frame(page, state, screenshot, info, names)
            except (PlaywrightError, asyncio.TimeoutError) as exc:
                self._check_alive()
                self._check_crashes()
                if not (navigated() or page in self._crashed or page.is_closed() or self._active is not page):
                    failures += 1
                    if failures >= 2:
                        raise ControllerError(
                            f"the page did not render a frame ({type(exc).__name__}: {exc}); a busy or hung renderer?"
                        ) from exc
            finally:
                for task in (state_task, shot_task):
                    if not task.done():
                        task.cancel()
                    elif not task.cancelled():
                        task.exception()  # mark retrieved: a dropped capture may have failed
            if (wait or session.loads != loads_before) and session.loading:
                if not await session.wait_loaded(self.navigation_timeout):
                    info["loading"] = True
                    patient = False
        raise ControllerError("the active tab kept changing while it was observed")

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
        url, title = page.url, state["title"]
        tabs = [
            {"index": i, "url": p.url, "title": titles.get(p, ""), "active": p is page}
            for i, p in enumerate(self._pages)
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
        if self.elements:
            info["elements"] = state["elements"] or []
        if self.capture_region is not None:
            # A view, not a copy: the browser encodes the whole viewport either way (a CDP clip
            # measured slower), but a remote env is sent only these pixels.
            x, y, w, h = self.capture_region
            screenshot = screenshot[y : y + h, x : x + w]
        return Frame(screenshot=screenshot, text=f"URL: {url}\nTitle: {title}", info=info, region=self.capture_region)


ACTIONS: ActionTable[BrowserController, ActionOutcome] = ActionTable(BrowserController.gym, {
    ClickAction: BrowserController._click,
    PressAction: BrowserController._press,
    KeyDownAction: BrowserController._key_down,
    KeyUpAction: BrowserController._key_up,
    TypeAction: BrowserController._type,
    ScrollAction: BrowserController._scroll,
    MoveAction: BrowserController._move,
    DragAction: BrowserController._drag,
    WaitAction: BrowserController._wait,
    PositionFetch: BrowserController._position,
    ScreenshotFetch: BrowserController._screenshot,
    CustomAction: BrowserController._custom,
})
"""What :meth:`BrowserController.step` runs for each CLA type (``ResponseAction`` never reaches a controller)."""

CUSTOM: CustomActions[BrowserController, ActionOutcome] = CustomActions(BrowserController.gym, {
    "goto": BrowserController._goto,
    "back": BrowserController._back,
    "forward": BrowserController._forward,
    "reload": BrowserController._reload,
    "new_tab": BrowserController._new_tab_action,
    "switch_tab": BrowserController._switch_tab,
    "close_tab": BrowserController._close_tab,
})
"""The browser gym's custom actions (``CustomAction(action=name, args={...})``)."""

CUSTOM_ACTIONS: tuple[str, ...] = CUSTOM.names
"""The names of the browser gym's custom actions."""
