"""Per-tab DevTools sessions: screenshots, page state, and whether the main frame is loading.

Each open page gets one :class:`PageSession` (a CDP session of its own, next to Playwright's).
It follows ``Page.frameStartedLoading`` / ``Page.frameStoppedLoading`` of the main frame. These
events travel on the same session as our ``Runtime.evaluate`` replies, but the browser sends them,
not the renderer: a navigation a script started just before a round trip (``location = ...``
from a ``setTimeout(0)``) can be reported after its reply. The round trip therefore also says
whether the document began to leave (:data:`~.capture.LEAVING_JS`), and
:meth:`PageSession.wait_started` / :meth:`PageSession.wait_loaded` wait for the load to start and
to finish.

With ``refuse_files`` the session also pauses every ``file:`` request of the tab (its frames in
the same process included) and fails it, whoever started it (:mod:`.urls`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

from playwright.async_api import BrowserContext, CDPSession, Page

from hud_gym.controllers.browser.capture import ImageFormat, capture, page_state_expression
from hud_gym.controllers.browser.headed import frame_state_expression
from hud_gym.controllers.browser.urls import FILE_REQUESTS

__all__ = ["PageSession"]


class PageSession:
    """The CDP session of one page; create with :meth:`open`."""

    def __init__(self, page: Page, cdp: CDPSession, target_id: str, main_frame_id: str) -> None:
        self.page = page
        self.cdp = cdp
        self.target_id = target_id
        self.main_frame_id = main_frame_id
        self.loading = False
        self.loads = 0
        """Main-frame loads started so far (a navigation during an observation shows as a change)."""
        self.refused: list[str] = []
        """``file:`` URLs this tab requested and was refused (with ``refuse_files``)."""
        self._stopped = asyncio.Event()
        self._stopped.set()
        self._started = asyncio.Event()
        cdp.on("Page.frameStartedLoading", self._on_started)
        cdp.on("Page.frameStoppedLoading", self._on_stopped)
        cdp.on("Fetch.requestPaused", self._on_file_request)

    @classmethod
    async def open(cls, context: BrowserContext, page: Page, *, refuse_files: bool = True) -> PageSession:
        """Attach a CDP session to ``page`` and start following its main frame (and refusing its
        ``file:`` requests, with ``refuse_files``)."""
        cdp = await context.new_cdp_session(page)
        calls = [cdp.send("Target.getTargetInfo"), cdp.send("Page.getFrameTree"), cdp.send("Page.enable")]
        if refuse_files:
            calls.append(cdp.send("Fetch.enable", FILE_REQUESTS))
        info, tree, *_ = await asyncio.gather(*calls)
        return cls(page, cdp, info["targetInfo"]["targetId"], tree["frameTree"]["frame"]["id"])

    def _on_file_request(self, event: dict[str, Any]) -> None:
        self.refused.append(event.get("request", {}).get("url", ""))
        reply = asyncio.ensure_future(
            self.cdp.send("Fetch.failRequest", {"requestId": event["requestId"], "errorReason": "AccessDenied"})
        )
        reply.add_done_callback(lambda task: task.cancelled() or task.exception())  # the tab may be gone

    def _on_started(self, event: dict[str, Any]) -> None:
        if event.get("frameId") == self.main_frame_id:
            self.loading = True
            self.loads += 1
            self._stopped.clear()
            self._started.set()

    def _on_stopped(self, event: dict[str, Any]) -> None:
        if event.get("frameId") == self.main_frame_id:
            self.loading = False
            self._stopped.set()

    async def wait_loaded(self, timeout: float) -> bool:
        """Wait until the main frame stops loading; False if it still loads after ``timeout`` s."""
        if not self.loading:
            return True
        try:
            await asyncio.wait_for(self._stopped.wait(), timeout)
        except asyncio.TimeoutError:
            return False
        return True

    async def wait_started(self, loads: int, timeout: float) -> bool:
        """Wait until a main-frame load after the first ``loads`` has started; False after ``timeout`` s."""
        while self.loads == loads:
            self._started.clear()
            try:
                await asyncio.wait_for(self._started.wait(), timeout)
            except asyncio.TimeoutError:
                return False
        return True

    async def state(
        self,
        elements: bool = False,
        limit: int = 500,
        *,
        marker: int | None = None,
        probes: Sequence[tuple[str, str]] = (),
    ) -> dict[str, Any]:
        """``{"title": str, "elements": list | None, "probes": dict, "leaving": bool, "marked":
        bool}`` of the current document (one round trip; ``probes``: the value of each
        ``(key, expression)`` of ``probes`` under its key, with ``elements``; ``leaving``:
        :data:`~.capture.LEAVING_JS`);
        with ``marker`` (the headed path), read in the page's second animation frame from now,
        which also sets the frame marker to ``marker`` (``marked``: the page shows it; :mod:`.headed`)."""
        expression = page_state_expression(elements, limit, probes)
        params: dict[str, Any] = {"expression": expression, "returnByValue": True, "silent": True}
        if marker is not None:
            params["expression"] = frame_state_expression(expression, marker)
            params["awaitPromise"] = True
        result = await self.cdp.send("Runtime.evaluate", params)
        if "exceptionDetails" in result:
            return {"title": "", "elements": [] if elements else None, "probes": {}, "leaving": False, "marked": False}
        value = result.get("result", {}).get("value") or {}
        return {
            "title": value.get("title") or "",
            "elements": value.get("elements"),
            "probes": value.get("probes") or {},
            "leaving": bool(value.get("leaving")),
            "marked": bool(value.get("marked")),
        }

    async def screenshot(self, image_format: ImageFormat = "jpeg", quality: int = 85) -> Any:
        """A fresh viewport screenshot (``(H, W, 3)`` uint8)."""
        return await capture(self.cdp, image_format, quality)

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a raw CDP command on this page's session."""
        return await self.cdp.send(method, params or {})

    async def detach(self) -> None:
        """Detach the session (errors ignored: the page may be gone)."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.cdp.detach(), 2)
