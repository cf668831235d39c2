"""The Chromium controller of ``hud/Browser-v0``: the owner of one browser session and its collaborators.

One :class:`BrowserController` drives one isolated ``BrowserContext`` (its own cookies, storage,
cache, permissions and download folder) in the process-wide shared Chromium
(:data:`~hud_gym.controllers.browser.chromium.MANAGER`). Actions are real (trusted) input events
sent with Playwright's mouse and keyboard, at screen-pixel coordinates of the viewport.

The controller is composed, not inherited: it owns one :class:`~.state.BrowserState` (the
session: options, lease, context, tabs, dialogs, downloads, parked warm pages) and hands it to
small collaborators, one job each, that it creates once: :attr:`~BrowserController.tabs`
(:mod:`.tabs`: tabs, DevTools sessions, targets, crashes), :attr:`~BrowserController.downloads`
(:mod:`.downloads`), :attr:`~BrowserController.contexts` (:mod:`.contexts`: open and close the
context), :attr:`~BrowserController.lifecycle` (:mod:`.lifecycle`: start, episode reset, health,
close), :attr:`~BrowserController.input` (:mod:`.input`: pointer and keyboard actions),
:attr:`~BrowserController.custom` (:mod:`.custom`: ``goto``, ``new_tab``, ... and the navigation
policy), :attr:`~BrowserController.observation` (:mod:`.observation`: the frame after an action)
and :attr:`~BrowserController.warm` (:mod:`.warm`: the warm pages of tasks that keep their page).
:meth:`BrowserController.step` runs each CLA action through :data:`ACTIONS`, the table from CLA
type to collaborator method.

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
from hud_gym.controllers.base import ActionOutcome, Controller, ControllerError, Frame
from hud_gym.controllers.browser.contexts import BrowserContexts
from hud_gym.controllers.browser.custom import CUSTOM, CUSTOM_ACTIONS, BrowserCustom
from hud_gym.controllers.browser.downloads import BrowserDownloads
from hud_gym.controllers.browser.input import BrowserInput
from hud_gym.controllers.browser.lifecycle import BrowserLifecycle
from hud_gym.controllers.browser.observation import BrowserObservation
from hud_gym.controllers.browser.state import BrowserState
from hud_gym.controllers.browser.tabs import BrowserTabs
from hud_gym.controllers.browser.warm import BrowserWarm
from hud_gym.controllers.dispatch import ActionTable
from hud_gym.envs.browser_options import BrowserOptions
from hud_gym.task import Task

__all__ = ["ACTIONS", "CUSTOM", "CUSTOM_ACTIONS", "BrowserController"]


class BrowserController(Controller):
    """Drives one isolated browser context in the shared Chromium; see the module docstring.

    Args:
        screen_size: viewport ``(width, height)`` in CSS pixels (device scale factor 1).
        options: the env's :class:`~hud_gym.envs.browser_options.BrowserOptions` (default: the
            defaults): ``reset_mode`` (:mod:`.lifecycle`), ``allow_file_urls`` (:mod:`.urls`),
            ``capture`` (:mod:`.headed`, :mod:`.capture`), ``warm_pages`` (:mod:`.warm`),
            ``limits`` (:mod:`.renderers`), ...

    Attributes:
        state: the browser session (:class:`~.state.BrowserState`): ``state.page`` (the active
            tab), ``state.pages``, ``state.context``, ``state.browser``, ``state.lease``,
            ``state.downloads``, ``state.dialogs``, ``state.options``, ``state.capture``, ...
        tabs, downloads, contexts, lifecycle, input, custom, observation, warm: its collaborators
            (module docstring); ``warm.show(url)`` opens a task's warm page,
            ``downloads.wait()`` waits for the downloads in progress.
    """

    gym = "browser"
    supports_capture_region = True

    def __init__(self, screen_size: tuple[int, int] = (1280, 720), options: BrowserOptions | None = None) -> None:
        super().__init__(screen_size)
        self.state = BrowserState(screen_size, options)
        self.downloads = BrowserDownloads(self.state)
        self.tabs = BrowserTabs(self.state, self.downloads)
        self.contexts = BrowserContexts(self.state, self.tabs, self.downloads)
        self.input = BrowserInput(self.state, self.tabs)
        self.lifecycle = BrowserLifecycle(self.state, self.tabs, self.contexts, self.downloads, self.input)
        self.custom = BrowserCustom(self.state, self.tabs)
        self.observation = BrowserObservation(self.state, self.tabs)
        self.warm = BrowserWarm(self.state, self.tabs, self.contexts)

    async def start(self) -> None:
        """Take a lease on the shared Chromium and open a context (:meth:`.BrowserLifecycle.start`)."""
        await self.lifecycle.start()

    async def reset(self, task: Task | None, seed: int | None) -> None:
        """A clean state for a new episode (:meth:`.BrowserLifecycle.reset`)."""
        await self.lifecycle.reset(task, seed)

    async def step(self, action: CLAAction) -> ActionOutcome:
        """Execute one CLA action (coordinates in screen pixels) with its collaborator (:data:`ACTIONS`).

        Raises:
            ActionError: an invalid action (unknown key or custom action, bad arguments).
            ControllerError: the browser is gone.
        """
        state = self.state
        state.check_alive()
        state.check_crashes()
        if state.active is None:
            raise ControllerError("the browser has no open tab")
        await self.observation.begin_action()
        try:
            return await ACTIONS.run(self, action)
        except ActionError:
            raise
        except PlaywrightError as exc:
            state.check_alive()
            state.check_crashes()
            return ActionOutcome(info={"browser_error": str(exc).splitlines()[0]})

    async def observe(self) -> Frame:
        """The active tab after the last action, in :attr:`capture_region` (:mod:`.observation`)."""
        return await self.observation.observe(self.capture_region)

    async def health(self) -> bool:
        """True while the browser is connected, the context open and no tab crashed."""
        return await self.lifecycle.health()

    async def close(self) -> None:
        """Release the context, the download folder and the browser lease; safe to call twice."""
        await self.lifecycle.close()


ACTIONS: ActionTable[BrowserController, ActionOutcome] = ActionTable(
    BrowserController.gym,
    {
        ClickAction: lambda c, action: c.input.click(action),
        PressAction: lambda c, action: c.input.press(action),
        KeyDownAction: lambda c, action: c.input.key_down(action),
        KeyUpAction: lambda c, action: c.input.key_up(action),
        TypeAction: lambda c, action: c.input.type_text(action),
        ScrollAction: lambda c, action: c.input.scroll(action),
        MoveAction: lambda c, action: c.input.move(action),
        DragAction: lambda c, action: c.input.drag(action),
        WaitAction: lambda c, action: c.input.wait(action),
        PositionFetch: lambda c, action: c.input.position(action),
        ScreenshotFetch: lambda c, action: c.input.screenshot(action),
        CustomAction: lambda c, action: c.custom.run(action),
    },
)
"""What :meth:`BrowserController.step` runs for each CLA type, with which collaborator
(``ResponseAction`` never reaches a controller)."""
