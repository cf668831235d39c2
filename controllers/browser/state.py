"""The browser session: the one state object every collaborator of the browser controller works on.

A :class:`~hud_gym.controllers.browser.controller.BrowserController` owns one :class:`BrowserState`
and hands it to its collaborators (:mod:`.tabs`, :mod:`.lifecycle`, :mod:`.input`, :mod:`.custom`,
:mod:`.observation`, :mod:`.warm`), which keep no browser state of their own beyond a lock or a
table. It holds the options (:class:`~hud_gym.envs.browser_options.BrowserOptions`) with what
they resolve to (``capture``, ``limits``, ``url_policy``, ``extension``) and the live session:

- the shared Chromium's ``lease``, the ``browser``, this env's ``context``, its ``download_dir``
  and ``clipboard`` (set by :mod:`.lifecycle`);
- the tabs (``pages``, the ``active`` one, :attr:`BrowserState.page`), their DevTools ``sessions``,
  the ``crashed`` tabs and ``crashes``, the ``origins`` loaded, the page targets being opened,
  ``downloads``, the ``dialogs`` (kept by :mod:`.tabs`);
- the ``pointer`` (:mod:`.input`); what the last observation reported and the loads counted when
  the last action began (:mod:`.observation`); the headed ``view`` (:mod:`.headed`);
- the warm pages' ``parked`` contexts (:mod:`.warm`).

The gym's functions reach it as ``ctx.controller.state`` (``ctx.controller.state.page``, the
active tab).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from playwright.async_api import Browser, BrowserContext, CDPSession, Page

from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.browser.chromium import BrowserLease
from hud_gym.controllers.browser.clipboard import EnvClipboard
from hud_gym.controllers.browser.dialogs import Dialogs
from hud_gym.controllers.browser.extensions import browser_extension
from hud_gym.controllers.browser.headed import HeadedView, xvfb_available
from hud_gym.controllers.browser.renderers import RENDERER_LIMITS
from hud_gym.controllers.browser.session import PageSession
from hud_gym.controllers.browser.urls import UrlPolicy
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


class BrowserState:
    """The options and the live session of one browser controller; see the module docstring.

    Args:
        screen_size: viewport ``(width, height)`` in CSS pixels.
        options: the env's browser options (default: the defaults).
    """

    def __init__(self, screen_size: tuple[int, int], options: BrowserOptions | None = None) -> None:
        self.screen_size = screen_size
        self.options = options if options is not None else BrowserOptions()
        self.limits = parse_limits(self.options.limits, RENDERER_LIMITS)
        """Each renderer's limits (``options.limits`` over :data:`~.renderers.RENDERER_LIMITS`)."""
        self.capture: Literal["headed", "cdp"] = resolve_capture(
            self.options.capture, screen_size, self.options.headless
        )
        """The capture path taken (``options.capture`` with ``"auto"`` resolved)."""
        self.url_policy = UrlPolicy(self.options.allow_file_urls)
        self.extension = browser_extension("browser")
        """What the gym's suites add: custom actions, page probes (:mod:`.extensions`)."""

        self.lease: BrowserLease | None = None
        self.browser: Browser | None = None
        self.context: BrowserContext | None = None
        self.clipboard = EnvClipboard()
        """The env's own clipboard (:mod:`.clipboard`), emptied at every reset."""
        self.download_dir: Path | None = None
        self.closed = False
        self.view: HeadedView | None = None
        """The headed capture path's view of this env's tile (``None``: CDP capture)."""

        self.pages: list[Page] = []
        """The open tabs, in the order of ``info["tabs"]``."""
        self.active: Page | None = None
        self.sessions: dict[Page, PageSession] = {}
        self.session_tasks: dict[Page, asyncio.Task[PageSession | None]] = {}
        self.crashed: set[Page] = set()
        self.crashes: list[str] = []
        """URLs of the tabs whose renderer crashed in this episode (every ``step`` and ``observe``
        then raises :class:`ControllerError` until the next reset)."""
        self.dialogs = Dialogs()
        """The dialogs of this episode (``dialogs.records``) and how they are answered."""
        self.downloads: list[str] = []
        """Paths of the files downloaded in this episode (in :attr:`download_dir`)."""
        self.origins: set[str] = set()
        self.http_cache_used = False
        """Whether an HTTP(S) response may have filled the HTTP cache since it was last cleared."""
        self.background: set[asyncio.Task[Any]] = set()
        self.browser_cdp: CDPSession | None = None
        self.context_id: str | None = None
        self.pending_targets: set[str] = set()
        self.targets_settled = asyncio.Event()
        self.targets_settled.set()
        self.shown: Page | None = None
        """The tab this env's tile shows (headed)."""
        self.replace_window = False

        self.pointer: tuple[int, int] = (0, 0)
        """The last pointer position ``(x, y)`` in screen pixels."""
        self.reported_dialogs = 0
        self.reported_downloads = 0
        self.loads_at_action: dict[Page, int] = {}

        self.warm_url: str | None = None
        """The URL the context's only tab was opened on by ``warm.show`` (:mod:`.warm`)."""
        self.parked: OrderedDict[str, Parked] = OrderedDict()
        """The parked contexts by URL, least recently used first."""

    @property
    def page(self) -> Page:
        """The active tab.

        Raises:
            ControllerError: there is none (the browser has no open tab).
        """
        if self.active is None:
            raise ControllerError("the browser has no open tab")
        return self.active

    def check_alive(self) -> None:
        """Raise unless the browser is started and connected."""
        if self.browser is None or self.context is None:
            raise ControllerError("the browser controller is not started")
        if not self.browser.is_connected():
            raise ControllerError("Chromium disconnected (the browser process died)")

    def check_crashes(self) -> None:
        """Raise once a tab of this episode crashed: the episode's page state is lost with it."""
        if self.crashes:
            raise ControllerError(
                f"the renderer of the tab at {self.crashes[0]} crashed (killed, or out of memory): "
                "this episode's page state is lost"
            )

    def forget_context(self) -> None:
        """Forget the current context and its tabs without closing them (parked, or being closed)."""
        self.context = None
        self.browser_cdp = None
        self.context_id = None
        self.pages = []
        self.active = None
        self.shown = None
        self.warm_url = None
        self.pending_targets.clear()
        self.targets_settled.set()
