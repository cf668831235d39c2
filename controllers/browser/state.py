"""The options and the state every part of the browser controller shares, set up once.

:class:`BrowserState` keeps the options of a
:class:`~hud_gym.controllers.browser.controller.BrowserController`
(:class:`~hud_gym.envs.browser_options.BrowserOptions`, ``self.options``) with what they resolve to
(``capture``, ``limits``, ``url_policy``) and creates the state its parts work on, each part
owning its own:

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
from hud_gym.controllers.browser.chromium import BrowserLease
from hud_gym.controllers.browser.clipboard import EnvClipboard
from hud_gym.controllers.browser.dialogs import Dialogs
from hud_gym.controllers.browser.extensions import browser_extension
from hud_gym.controllers.browser.headed import HeadedView, xvfb_available
from hud_gym.controllers.browser.renderers import RENDERER_LIMITS
from hud_gym.controllers.browser.session import PageSession
from hud_gym.controllers.browser.urls import UrlPolicy
from hud_gym.controllers.dispatch import CustomActions
from hud_gym.controllers.sandbox.limits import parse_limits
from hud_gym.envs.browser_options import BrowserOptions, Capture

__all__ = ["AUTO_HEADED_MIN_PIXELS", "BrowserState", "Parked", "resolve_capture"]


AUTO_HEADED_MIN_PIXELS = 0
"""``capture="auto"`` takes the headed path for viewports of at least this many pixels (where Xvfb
is installed and the browser is headless); smaller ones use CDP. The headed path wins on CPU at
every size measured (``benchmarks/README.md``), hence 0."""


def resolve_capture(capture: Capture, screen_size: tuple[int, int], headless: bool) -> Literal["headed", "cdp"]:
    """The capture path an env with these options takes (``"auto"`` resolved; see
    :attr:`~hud_gym.envs.browser_options.BrowserOptions.capture`, which checks the value)."""
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

    def __init__(self, screen_size: tuple[int, int] = (1280, 720), options: BrowserOptions | None = None) -> None:
        super().__init__(screen_size)
        self.options = options if options is not None else BrowserOptions()
        self.limits = parse_limits(self.options.limits, RENDERER_LIMITS)
        self.capture: Literal["headed", "cdp"] = resolve_capture(
            self.options.capture, screen_size, self.options.headless
        )
        self.url_policy = UrlPolicy(self.options.allow_file_urls)
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
