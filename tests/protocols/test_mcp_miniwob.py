"""MiniWoB++'s click-test in real Chromium, solved to reward 1 through a hud-gym MCP server with
the ``mcp`` SDK's client: Anthropic's computer tool over stdio, OpenAI's over streamable HTTP,
and a custom element action (``click_element``), each clicking the button the page's elements
(``elements=true``) place."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp_support import http_client, http_server, report, stdio_client

pytestmark = pytest.mark.timeout(300)

SERVE = ("browser", "--task", "miniwob/click-test", "--option", "elements=true")


def button_center(start: dict[str, Any]) -> tuple[int, int]:
    """The centre of the page's button, in screenshot pixels (``info["elements"]``)."""
    buttons = [e for e in start["info"]["elements"] if e.get("tag") == "button"]
    assert buttons, start["info"]["elements"]
    x, y, w, h = buttons[0]["bbox"]
    return round(x + w / 2), round(y + h / 2)


def button_ref(start: dict[str, Any]) -> int:
    """The ref of the page's button in ``info["dom_elements"]`` (for ``click_element``)."""
    return next(e["ref"] for e in start["info"]["dom_elements"] if e["tag"] == "button")


def test_click_test_over_stdio_with_claude_shape_and_custom_action() -> None:
    async def main() -> list[dict[str, Any]]:
        async with stdio_client(*SERVE) as client:
            start = report(await client.call_tool("reset", {"seed": 3}))
            assert start["prompt"] == "Click the button."
            x, y = button_center(start)
            by_claude = report(await client.call_tool("computer", {"action": "left_click", "coordinate": [x, y]}))
            start = report(await client.call_tool("reset", {"seed": 4}))
            by_ref = report(
                await client.call_tool("custom", {"action": "click_element", "args": {"ref": button_ref(start)}})
            )
            return [by_claude, by_ref]

    by_claude, by_ref = asyncio.run(main())
    assert (by_claude["reward"], by_claude["status"], by_claude["terminated"]) == (1.0, "ok", True)
    assert by_claude["actions"][0]["type"] == "click"
    assert (by_ref["reward"], by_ref["status"]) == (1.0, "ok")
    assert by_ref["actions"] == [
        {"type": "custom", "action": "click_element", "args": {"ref": by_ref["actions"][0]["args"]["ref"]}}
    ]


def test_click_test_over_http_with_openai_shape(tmp_path: Path) -> None:
    with http_server(tmp_path, *SERVE) as url:

        async def main() -> tuple[dict[str, Any], dict[str, Any]]:
            async with http_client(url) as client:
                start = report(await client.call_tool("setup", {"task": "click-test", "seed": 5}))
                x, y = button_center(start)
                return start, report(await client.call_tool("openai_computer", {"type": "click", "x": x, "y": y}))

        start, done = asyncio.run(main())
    assert start["task_id"] == "click-test"
    assert (done["reward"], done["status"]) == (1.0, "ok")
    assert done["actions"][0]["point"] == dict(zip(("x", "y"), button_center(start), strict=True))
