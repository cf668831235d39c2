"""JavaScript dialogs of a browser context: answered as they open, and never a reason to wait.

An ``alert``, ``confirm``, ``prompt`` or ``beforeunload`` dialog blocks its tab's renderer until
it is answered. :meth:`Dialogs.answer` answers each one at once (alerts and ``beforeunload``
accepted, ``confirm`` and ``prompt`` dismissed) in a task that nothing cancels, not even a reset.

A navigation away from a document that keeps opening dialogs (``setInterval(alert)``) is another
matter: a dialog opened while the navigation commits cannot be answered any more (its document
is going: ``Page.handleJavaScriptDialog`` fails with "Not attached to an active page"), and it
holds the renderer, so the new document never commits. :meth:`Dialogs.leave` therefore first
silences the document (its timers cleared, its ``alert``/``confirm``/``prompt``/``print``
replaced by no-ops: :data:`SILENCE_JS`) and stops the tab's scripts
(``Emulation.setScriptExecutionDisabled``; alone it was not enough: Chromium let a timer of the
old document run once more as the navigation began, about 1 leave in 30 on the headed path), waits
until the dialogs already open are answered, navigates until the new document commits, turns
scripts back on, and reloads that document so that its own scripts run from the start (a
navigation that commits nothing, e.g. ``back`` without history, leaves the silenced document).

Every DevTools call of :meth:`Dialogs.leave` is bounded (:data:`CALL_LIMIT`), and none is awaited
while the step is being cancelled: turning scripts back on after a cancelled navigation is left to
a background task, so a wedged renderer cannot hold the step past its timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from playwright.async_api import Dialog, Page, Response
from playwright.async_api import Error as PlaywrightError

from hud_gym.controllers.browser.session import PageSession

__all__ = ["CALL_LIMIT", "SILENCE_JS", "Dialogs", "WaitUntil", "retrieve"]

WaitUntil = Literal["commit", "load"]
Navigation = Callable[[WaitUntil], Awaitable[Response | None]]

CALL_LIMIT = 2.0
"""Seconds one DevTools call of :meth:`Dialogs.leave` may take (a renderer held by a dialog that
cannot be answered never replies)."""

SILENCE_JS = """(() => {
  const quiet = () => undefined;
  for (const name of ["alert", "confirm", "prompt", "print"]) {
    try { window[name] = quiet; } catch (e) {}
  }
  window.onbeforeunload = null;
  const last = setTimeout(quiet, 0);
  for (let id = 0; id <= last; id++) { clearTimeout(id); clearInterval(id); }
})()"""
"""Evaluated in a dialog storm's document before it is left: no timer of it runs again, and a
script still running opens no dialog."""


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
        with contextlib.suppress(PlaywrightError, asyncio.TimeoutError):
            silence = {"expression": SILENCE_JS, "silent": True}
            await asyncio.wait_for(session.send("Runtime.evaluate", silence), CALL_LIMIT)
        with contextlib.suppress(PlaywrightError, asyncio.TimeoutError):
            await asyncio.wait_for(session.send("Emulation.setScriptExecutionDisabled", {"value": True}), CALL_LIMIT)
        try:
            await self._settled(page)
            response = await navigation("commit")
        finally:
            # Never awaited unbounded, nor during a cancellation (a wedged renderer never replies).
            scripts_on = asyncio.ensure_future(session.send("Emulation.setScriptExecutionDisabled", {"value": False}))
            scripts_on.add_done_callback(retrieve)
        with contextlib.suppress(PlaywrightError, asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(scripts_on), CALL_LIMIT)
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
