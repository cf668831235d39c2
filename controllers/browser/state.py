"""The options and the state every part of the browser controller shares, set up once.

:class:`BrowserState` checks and keeps the options of a
:class:`~hud_gym.controllers.browser.controller.BrowserController` (documented there) and creates
the state its parts work on, each part owning its own:

- :mod:`.lifecycle`: ``browser``, ``context``, ``download_dir``, the lease, the episode count;
- :mod:`.tabs`: the tabs (``_pages``, ``_active``), their DevTools sessions, responses, crashes,
  origins, the targets being opened, ``downloads``, the dialogs;
- :mod:`.input`: ``pointer`` and the held keys;
- :mod:`.observation`: what was already reported, the loads counted when the last action began.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from playwright.async_api import Browser, BrowserContext, CDPSession, Page

from hud_gym.controllers.base import Controller
from hud_gym.controllers.browser.capture import ImageFormat
from hud_gym.controllers.browser.chromium import BrowserLease
from hud_gym.controllers.browser.clipboard import EnvClipboard
from hud_gym.controllers.browser.dialogs import Dialogs
from hud_gym.controllers.browser.extensions import browser_extension
from hud_gym.controllers.browser.headed import HeadedView, xvfb_available
from hud_gym.controllers.browser.session import PageSession
from hud_gym.controllers.browser.urls import UrlPolicy
from hud_gym.controllers.dispatch import CustomActions

__all__ = ["AUTO_HEADED_MIN_PIXELS", "BrowserState", "Capture", "Parked", "ResetMode", "resolve_capture"]

ResetMode = Literal["clear", "fresh"]
Capture = Literal["auto", "headed", "cdp"]

AUTO_HEADED_MIN_PIXELS = 0
"""``capture="auto"`` takes the headed path for viewports of at least this many pixels (where Xvfb
is installed and the browser is headless); smaller ones use CDP. The headed path wins on CPU at
every size measured (``benchmarks/README.md``), hence 0."""


def resolve_capture(capture: str, screen_size: tuple[int, int], headless: bool) -> Literal["headed", "cdp"]:
    """The capture path an env with these options takes (``"auto"`` resolved; see :data:`Capture`).

    Raises:
        ValueError: an unknown ``capture``, or ``"headed"`` with ``headless=False`` (a window on
            the user's display is captured through CDP).
    """
    if capture not in ("auto", "headed", "cdp"):
        raise ValueError(f"capture must be 'auto', 'headed' or 'cdp', got {capture!r}")
    if capture == "headed" and not headless:
        raise ValueError("capture='headed' draws on a private display: it needs headless=True")
    if capture == "auto":
        big = screen_size[0] * screen_size[1] >= AUTO_HEADED_MIN_PIXELS
        return "headed" if headless and big and xvfb_available() else "cdp"
    return "headed" if capture == "headed" else "cdp"


@dataclass
class Parked:
    """A warm page's browser context, set aside with its scripts paused (:mod:`.warm`)."""

    url: str
    context: BrowserContext
    page: Page
    context_id: str | None
    watcher: CDPSession | None
    pausing: asyncio.Future[Any] | None = None
    """The pause of its tab's scripts, sent in the background when it was parked."""


class BrowserState(Controller):
    """The browser controller's options and state (the parts are its subclasses)."""

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
        capture: Capture = "cdp",
        warm_pages: int = 4,
    ) -> None:
        super().__init__(screen_size)
        if reset_mode not in ("clear", "fresh"):
            raise ValueError(f"reset_mode must be 'clear' or 'fresh', got {reset_mode!r}")
        if screenshot_format not in ("jpeg", "png"):
            raise ValueError(f"screenshot_format must be 'jpeg' or 'png', got {screenshot_format!r}")
        if not 1 <= jpeg_quality <= 100:
            raise ValueError(f"jpeg_quality must be in 1..100, got {jpeg_quality}")
        if isinstance(warm_pages, bool) or not isinstance(warm_pages, int) or not 0 <= warm_pages <= 32:
            raise ValueError(f"warm_pages must be a whole number from 0 to 32, got {warm_pages!r}")
        self.headless = headless
        self.capture_option: Capture = capture
        self.capture: Literal["headed", "cdp"] = resolve_capture(capture, screen_size, headless)
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
        self.warm_pages = warm_pages
        self.extension = browser_extension(self.gym)
        """What the gym's suites add: custom actions, page probes (:mod:`.extensions`)."""
        self._custom_actions: CustomActions[Any, Any] | None = None

        self.browser: Browser | None = None
        self.context: BrowserContext | None = None
        self.clipboard = EnvClipboard()
        """The env's own clipboard (:mod:`.clipboard`), emptied at every reset."""
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
        self._view: HeadedView | None = None
        self._shown: Page | None = None
        # The URL the context's only tab was opened on by ``show_warm`` (:mod:`.warm`), and the
        # parked contexts by URL, least recently used first.
        self._warm_url: str | None = None
        self._parked: OrderedDict[str, Parked] = OrderedDict()
        self._replace_window = False
        self._placing = asyncio.Lock()
