"""The browser gym's custom actions: ``goto``, ``back``, ``forward``, ``reload``, ``new_tab``,
``switch_tab``, ``close_tab`` (``CustomAction(action=name, args={...})``), and those its suites
add (:mod:`.extensions`).

Navigation policy (:mod:`.urls`): ``file:`` URLs (unless ``allow_file_urls`` names a directory),
``view-source:``, ``chrome:``, ``devtools:``, ``javascript:`` ... are refused: an agent's ``goto``
or ``new_tab`` to one is an :class:`~hud_gym.actions.ActionError`, and pages cannot reach them.
A navigation that fails (refused connection, timeout, aborted) is reported in
``info["navigation_error"]``, never raised: the page shows the browser's error page. The agent's
``goto``/``back``/``forward``/``reload`` away from a tab that opened dialogs stops its scripts
first (:mod:`.dialogs`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, Response

from hud_gym.actions import ActionError, CustomAction
from hud_gym.controllers.base import ActionOutcome
from hud_gym.controllers.browser.dialogs import WaitUntil
from hud_gym.controllers.browser.extensions import CustomHandler
from hud_gym.controllers.browser.state import BrowserState
from hud_gym.controllers.browser.tabs import BrowserTabs
from hud_gym.controllers.browser.urls import NavigationRefused
from hud_gym.controllers.dispatch import CustomActions

__all__ = ["CUSTOM", "CUSTOM_ACTIONS", "BrowserCustom"]


class BrowserCustom:
    """The handlers of the custom actions on ``state``'s tabs (``tabs`` opens and closes them):
    the gym's own (:data:`CUSTOM`) and its suites' (``state.extension``, run with the state)."""

    def __init__(self, state: BrowserState, tabs: BrowserTabs) -> None:
        self.state = state
        self.tabs = tabs
        suites = {name: _on_state(handler) for name, handler in state.extension.custom_actions.items()}
        self.table = CUSTOM.extended(suites)
        """The custom actions this controller runs: :data:`CUSTOM` and its suites'."""

    async def run(self, action: CustomAction) -> ActionOutcome:
        """Run a custom action (``CustomAction(action=name, args={...})``).

        Raises:
            ActionError: not one of :attr:`table`'s, or bad arguments.
        """
        return await self.table.run(self, action)

    # One handler per custom action (the table is :data:`CUSTOM`, after the class).

    async def goto(self, args: dict[str, Any]) -> ActionOutcome:
        page = self.state.page
        url = args.get("url")
        if not isinstance(url, str) or not url:
            raise ActionError("custom action 'goto' needs args {'url': '<address>'}")
        target = self._allowed(url)
        timeout_ms = self.state.options.navigation_timeout * 1000
        return await self._navigate(
            page, lambda wait_until: page.goto(target, timeout=timeout_ms, wait_until=wait_until)
        )

    async def back(self, args: dict[str, Any]) -> ActionOutcome:
        return await self._history(self.state.page.go_back)

    async def forward(self, args: dict[str, Any]) -> ActionOutcome:
        return await self._history(self.state.page.go_forward)

    async def reload(self, args: dict[str, Any]) -> ActionOutcome:
        return await self._history(self.state.page.reload)

    async def _history(self, move: Callable[..., Awaitable[Response | None]]) -> ActionOutcome:
        """``back``, ``forward`` or ``reload`` of the active tab (``move`` is the page's method)."""
        timeout_ms = self.state.options.navigation_timeout * 1000
        return await self._navigate(self.state.page, lambda wait_until: move(timeout=timeout_ms, wait_until=wait_until))

    async def new_tab(self, args: dict[str, Any]) -> ActionOutcome:
        url = args.get("url")
        if url is not None and not isinstance(url, str):
            raise ActionError("custom action 'new_tab' takes args {'url': '<address>'} (optional)")
        address = self._allowed(url) if url else None
        tab = await self.tabs.new_tab()
        self.state.active = tab
        if address:
            timeout_ms = self.state.options.navigation_timeout * 1000
            return await self._navigate(
                tab, lambda wait_until: tab.goto(address, timeout=timeout_ms, wait_until=wait_until)
            )
        return ActionOutcome()

    async def switch_tab(self, args: dict[str, Any]) -> ActionOutcome:
        index = self._tab_index(args.get("index"), "switch_tab")
        self.state.active = self.state.pages[index]
        await self.state.active.bring_to_front()
        return ActionOutcome()

    async def close_tab(self, args: dict[str, Any]) -> ActionOutcome:
        index = self._tab_index(args.get("index", self.state.pages.index(self.state.page)), "close_tab")
        page = self.state.pages[index]
        if len(self.state.pages) == 1:
            # A browser window never has zero tabs: open a blank one first.
            await self.tabs.new_tab()
        await page.close()
        self.tabs.on_close(page)
        if self.state.active is not None:
            await self.state.active.bring_to_front()
        return ActionOutcome()

    def _tab_index(self, index: Any, name: str) -> int:
        if isinstance(index, bool) or not isinstance(index, int):
            raise ActionError(f"custom action {name!r} needs args {{'index': <int>}}, got {index!r}")
        if not -len(self.state.pages) <= index < len(self.state.pages):
            raise ActionError(f"custom action {name!r}: no tab {index} (there are {len(self.state.pages)})")
        return index % len(self.state.pages)

    def _allowed(self, url: str) -> str:
        """The URL to open for an agent's ``url``; an :class:`ActionError` when it is refused."""
        try:
            return self.state.url_policy.check(url)
        except NavigationRefused as exc:
            raise ActionError(str(exc)) from None

    async def _navigate(
        self, page: Page, navigation: Callable[[WaitUntil], Awaitable[Response | None]]
    ) -> ActionOutcome:
        """Run ``navigation(wait_until)`` of ``page``; a failure (refused connection, timeout,
        aborted) is reported in ``info["navigation_error"]``, never raised: the page shows the
        browser's error page."""
        try:
            await self.state.dialogs.leave(
                page, self.state.sessions.get(page), navigation, self.state.options.navigation_timeout
            )
        except PlaywrightError as exc:
            self.state.check_alive()
            return ActionOutcome(info={"navigation_error": str(exc).splitlines()[0]})
        return ActionOutcome()


CUSTOM: CustomActions[BrowserCustom, ActionOutcome] = CustomActions(
    "browser",
    {
        "goto": BrowserCustom.goto,
        "back": BrowserCustom.back,
        "forward": BrowserCustom.forward,
        "reload": BrowserCustom.reload,
        "new_tab": BrowserCustom.new_tab,
        "switch_tab": BrowserCustom.switch_tab,
        "close_tab": BrowserCustom.close_tab,
    },
)
"""The browser gym's own custom actions (``CustomAction(action=name, args={...})``); a controller
runs them and its suites' (:attr:`~.state.BrowserState.extension`)."""


def _on_state(handler: CustomHandler) -> Callable[[BrowserCustom, dict[str, Any]], Awaitable[ActionOutcome]]:
    """A suite's custom action handler (``handler(state, args)``) as a handler of the table."""

    async def run(custom: BrowserCustom, args: dict[str, Any]) -> ActionOutcome:
        return await handler(custom.state, args)

    return run


CUSTOM_ACTIONS: tuple[str, ...] = CUSTOM.names
"""The names of the browser gym's own custom actions."""
