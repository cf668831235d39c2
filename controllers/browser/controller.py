"""The Chromium controller of ``hud/Browser-v0``.

One :class:`BrowserController` drives one isolated ``BrowserContext`` (its own cookies, storage,
cache, permissions and download folder) in the process-wide shared Chromium
(:data:`~hud_gym.controllers.browser.chromium.MANAGER`). Actions are real (trusted) input events
sent with Playwright's mouse and keyboard, at screen-pixel coordinates of the viewport.

The controller is composed of parts, one job each (see the package docstring):
:mod:`.lifecycle` (start, episode reset, close), :mod:`.tabs` (tabs, targets, downloads,
crashes), :mod:`.input` (pointer and keyboard actions), :mod:`.custom` (``goto``, ``new_tab``, ...
and the navigation policy), :mod:`.observation` (the frame after an action), :mod:`.warm` (the
warm pages of tasks that keep their page). This module puts them
together and runs each CLA action through :data:`ACTIONS`.

Faults: a tab whose renderer crashed (killed, out of memory) has lost the episode's page state, so
every later ``step``/``observe`` of the episode raises :class:`ControllerError` (the env reports
``env_error``); the next reset opens a fresh context. Dialogs are answered as they open, without
waiting on the page (:mod:`.dialogs`): the agent's ``goto``/``back``/``forward``/``reload`` away
from a tab that opened dialogs stops its scripts first, and the reset after an episode with dialogs
replaces the context, so a ``setInterval(alert)`` page holds back neither.
"""

from __future__ import annotations

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
    PositionFetch,
    PressAction,
    ScreenshotFetch,
    ScrollAction,
    TypeAction,
    WaitAction,
)
from hud_gym.controllers.base import ActionOutcome, ControllerError
from hud_gym.controllers.browser.custom import CUSTOM, CUSTOM_ACTIONS, BrowserCustom
from hud_gym.controllers.browser.input import BrowserInput
from hud_gym.controllers.browser.observation import BrowserObservation
from hud_gym.controllers.browser.urls import with_scheme
from hud_gym.controllers.browser.warm import BrowserWarm
from hud_gym.controllers.dispatch import ActionTable

__all__ = ["ACTIONS", "CUSTOM", "CUSTOM_ACTIONS", "BrowserController", "with_scheme"]


class BrowserController(BrowserInput, BrowserCustom, BrowserWarm, BrowserObservation):
    """Drives one isolated browser context in the shared Chromium; see the module docstring.

    Args:
        screen_size: viewport ``(width, height)`` in CSS pixels (device scale factor 1).
        options: the env's :class:`~hud_gym.envs.browser_options.BrowserOptions` (default: the
            defaults): ``reset_mode`` (:mod:`.lifecycle`), ``allow_file_urls`` (:mod:`.urls`),
            ``capture`` (:mod:`.headed`, :mod:`.capture`), ``warm_pages`` (:mod:`.warm`),
            ``limits`` (:mod:`.renderers`), ...

    Attributes:
        options: as given.
        capture: the capture path taken (``options.capture`` with ``"auto"`` resolved).
        limits: each renderer's limits (``options.limits`` over :data:`~.renderers.RENDERER_LIMITS`).
        browser: the shared Playwright ``Browser`` (after :meth:`start`).
        context: this env's ``BrowserContext``.
        page: the active tab (a Playwright ``Page``).
        pages: the open tabs, in the order of ``info["tabs"]``.
        downloads: paths of the files downloaded in this episode (in :attr:`download_dir`).
        download_dir: this env's download folder (removed on close).
        pointer: the last pointer position ``(x, y)`` in screen pixels.
        crashes: URLs of the tabs whose renderer crashed in this episode (then every ``step`` and
            ``observe`` raises :class:`ControllerError` until the next reset).
        url_policy: the URLs this env opens (:class:`~.urls.UrlPolicy`).
    """

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
        if self._view is not None:
            await self._view.begin()
        try:
            return await ACTIONS.run(self, action)
        except ActionError:
            raise
        except PlaywrightError as exc:
            self._check_alive()
            self._check_crashes()
            return ActionOutcome(info={"browser_error": str(exc).splitlines()[0]})


ACTIONS: ActionTable[BrowserController, ActionOutcome] = ActionTable(
    BrowserController.gym,
    {
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
    },
)
"""What :meth:`BrowserController.step` runs for each CLA type (``ResponseAction`` never reaches a controller)."""
