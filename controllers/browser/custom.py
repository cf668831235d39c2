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
from hud_gym.controllers.browser.lifecycle import BrowserLifecycle
from hud_gym.controllers.browser.urls import NavigationRefused
from hud_gym.controllers.dispatch import CustomActions

__all__ = ["CUSTOM", "CUSTOM_ACTIONS", "BrowserCustom"]


class BrowserCustom(BrowserLifecycle):
    """The handlers of the custom actions (a part of :class:`~.controller.BrowserController`)."""

    async def _custom(self, action: CustomAction) -> ActionOutcome:
        if self._custom_actions is None:
            self._custom_actions = CUSTOM.extended(self.extension.custom_actions)
        return await self._custom_actions.run(self, action)

    # One handler per custom action (the table is :data:`CUSTOM`, after the class).

    async def _goto(self, args: dict[str, Any]) -> ActionOutcome:
        page = self.page
        url = args.get("url")
        if not isinstance(url, str) or not url:
            raise ActionError("custom action 'goto' needs args {'url': '<address>'}")
        target = self._allowed(url)
        timeout_ms = self.options.navigation_timeout * 1000
        return await self._navigate(
            page, lambda wait_until: page.goto(target, timeout=timeout_ms, wait_until=wait_until)
        )

    async def _back(self, args: dict[str, Any]) -> ActionOutcome:
        return await self._history(self.page.go_back)

    async def _forward(self, args: dict[str, Any]) -> ActionOutcome:
        return await self._history(self.page.go_forward)

    async def _reload(self, args: dict[str, Any]) -> ActionOutcome:
        return await self._history(self.page.reload)

    async def _history(self, move: Callable[..., Awaitable[Response | None]]) -> ActionOutcome:
        """``back``, ``forward`` or ``reload`` of the active tab (``move`` is the page's method)."""
        timeout_ms = self.options.navigation_timeout * 1000
        return await self._navigate(self.page, lambda wait_until: move(timeout=timeout_ms, wait_until=wait_until))

    async def _new_tab_action(self, args: dict[str, Any]) -> ActionOutcome:
        url = args.get("url")
        if url is not None and not isinstance(url, str):
            raise ActionError("custom action 'new_tab' takes args {'url': '<address>'} (optional)")
        address = self._allowed(url) if url else None
        tab = await self._new_tab()
        self._active = tab
        if address:
            timeout_ms = self.options.navigation_timeout * 1000
            return await self._navigate(
                tab, lambda wait_until: tab.goto(address, timeout=timeout_ms, wait_until=wait_until)
            )
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

    async def _navigate(
        self, page: Page, navigation: Callable[[WaitUntil], Awaitable[Response | None]]
    ) -> ActionOutcome:
        """Run ``navigation(wait_until)`` of ``page``; a failure (refused connection, timeout,
        aborted) is reported in ``info["navigation_error"]``, never raised: the page shows the
        browser's error page."""
        try:
            await self._dialogs.leave(page, self._sessions.get(page), navigation, self.options.navigation_timeout)
        except PlaywrightError as exc:
            self._check_alive()
            return ActionOutcome(info={"navigation_error": str(exc).splitlines()[0]})
        return ActionOutcome()


CUSTOM: CustomActions[BrowserCustom, ActionOutcome] = CustomActions(
    BrowserCustom.gym,
    {
        "goto": BrowserCustom._goto,
        "back": BrowserCustom._back,
        "forward": BrowserCustom._forward,
        "reload": BrowserCustom._reload,
        "new_tab": BrowserCustom._new_tab_action,
        "switch_tab": BrowserCustom._switch_tab,
        "close_tab": BrowserCustom._close_tab,
    },
)
"""The browser gym's own custom actions (``CustomAction(action=name, args={...})``); a controller
runs them and its suites' (:attr:`~.state.BrowserState.extension`)."""

CUSTOM_ACTIONS: tuple[str, ...] = CUSTOM.names
"""The names of the browser gym's own custom actions."""
