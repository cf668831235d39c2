"""JavaScript dialogs of a browser context: answered as they open, and never a reason to wait.

An ``alert``, ``confirm``, ``prompt`` or ``beforeunload`` dialog blocks its tab's renderer until
it is answered. :meth:`Dialogs.answer` answers each one at once (alerts and ``beforeunload``
accepted, ``confirm`` and ``prompt`` dismissed) in a task that nothing cancels, not even a reset.

A navigation away from a document that keeps opening dialogs (``setInterval(alert)``) is another
matter: a dialog opened while the navigation commits cannot be answered any more (its document
is going), and it holds the renderer, so the new document never loads. :meth:`Dialogs.leave`
therefore stops the tab's scripts first (``Emulation.setScriptExecutionDisabled``), waits until
the dialogs already open are answered, navigates until the new document commits, turns scripts
back on, and reloads that document so that its own scripts run from the start.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from playwright.async_api import Dialog, Page, Response
from playwright.async_api import Error as PlaywrightError

from hud_gym.controllers.browser.session import PageSession

__all__ = ["Dialogs", "WaitUntil", "retrieve"]

WaitUntil = Literal["commit", "load"]
Navigation = Callable[[WaitUntil], Awaitable[Response | None]]


def retrieve(task: asyncio.Future[Any]) -> None:
    """Done callback of a task nobody awaits: take its exception (a tab closed under it)."""
    if not task.cancelled():
        task.exception()


class Dialogs:
    """The dialogs of one context: a record of each, and the tabs that opened some.

    Attributes:
        records: the dialogs of this episode, as dicts ``{type, message, default_value, url,
            handled}``.
    """

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self._answers: dict[Page, set[asyncio.Future[Any]]] = {}
        self._last = 0.0

    @property
    def opened(self) -> bool:
        """Whether a tab opened a dialog since it was last navigated by :meth:`leave`."""
        return bool(self._answers)

    def answer(self, dialog: Dialog) -> None:
        """Record ``dialog`` and answer it now."""
        accept = dialog.type in ("alert", "beforeunload")
        self.records.append(
            {
                "type": dialog.type,
                "message": dialog.message,
                "default_value": dialog.default_value,
                "url": dialog.page.url if dialog.page else None,
                "handled": "accepted" if accept else "dismissed",
            }
        )
        reply = asyncio.ensure_future(dialog.accept() if accept else dialog.dismiss())
        reply.add_done_callback(retrieve)  # the tab may be gone before the answer arrives
        self._last = asyncio.get_running_loop().time()
        if dialog.page is not None:
            answers = self._answers.setdefault(dialog.page, set())
            answers.add(reply)
            reply.add_done_callback(answers.discard)

    def forget(self, page: Page | None = None) -> None:
        """Forget ``page`` (closed), or every tab (a new context)."""
        if page is None:
            self._answers.clear()
        else:
            self._answers.pop(page, None)

    async def leave(
        self, page: Page, session: PageSession | None, navigation: Navigation, timeout: float
    ) -> Response | None:
        """Run ``navigation(wait_until)`` away from ``page``'s document; see the module docstring.
        ``timeout``: seconds the reload of the new document may take."""
        if session is None or page not in self._answers:
            return await navigation("load")
        before = page.url
        await session.send("Emulation.setScriptExecutionDisabled", {"value": True})
        try:
            await self._settled(page)
            response = await navigation("commit")
        finally:
            with contextlib.suppress(PlaywrightError):
                await session.send("Emulation.setScriptExecutionDisabled", {"value": False})
        if page.url != "about:blank" and (response is not None or page.url != before):
            response = await page.reload(timeout=timeout * 1000)
        return response

    async def _settled(self, page: Page, quiet: float = 0.1, limit: float = 2.0) -> None:
        """Wait (up to ``limit`` s) until ``page``'s dialogs are answered and none opened for
        ``quiet`` s: with its scripts stopped, only a script running already can open more."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        while (now := loop.time()) < deadline:
            pending = [a for a in self._answers.get(page, ()) if not a.done()]
            if pending:
                await asyncio.wait(pending, timeout=deadline - now)
            elif now - self._last < quiet:
                await asyncio.sleep(quiet - (now - self._last))
            else:
                break
        self._answers.pop(page, None)
