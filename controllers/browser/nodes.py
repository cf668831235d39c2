"""Acting on an element by its node id: the ``id`` of the set-of-marks table and of the
accessibility tree (:mod:`.accessibility`), the browser's ``backendNodeId``.

:func:`click_node` scrolls the element into view and clicks the middle of its first visible box
with the real mouse (a trusted click, as a ``click`` CLA there), so the page sees what a user's
click would do; ``click_element`` / ``type_field`` with ``{"node": id}`` call it.
"""

from __future__ import annotations

from typing import Any

from playwright.async_api import Error as PlaywrightError

from hud_gym.actions import ActionError

__all__ = ["click_node", "node_id"]


def node_id(args: dict[str, Any], action: str) -> int:
    """``args["node"]``, checked: a positive integer.

    Raises:
        ActionError: it is not one.
    """
    node = args.get("node")
    if isinstance(node, bool) or not isinstance(node, int) or node <= 0:
        raise ActionError(
            f"custom action {action!r}: 'node' must be an id of info['som'] or obs['axtree'], got {node!r}"
        )
    return node


async def click_node(state: Any, node: int) -> tuple[int, int]:
    """Click the middle of element ``node`` of the active tab (see the module docstring); the
    point clicked, in screen pixels.

    Raises:
        ActionError: no such element in the document, or it shows no box in the viewport.
    """
    page = state.page
    session = state.sessions.get(page)
    if session is None:
        raise ActionError("the active tab has no DevTools session yet")
    try:
        await session.send("DOM.scrollIntoViewIfNeeded", {"backendNodeId": node})
        quads = (await session.send("DOM.getContentQuads", {"backendNodeId": node})).get("quads") or []
    except PlaywrightError as exc:
        raise ActionError(f"no element with node id {node} in the page (a node of an earlier document?)") from exc
    width, height = state.screen_size
    for quad in quads:
        xs, ys = quad[0::2], quad[1::2]
        x, y = sum(xs) / len(xs), sum(ys) / len(ys)
        if 0 <= x < width and 0 <= y < height:
            point = (int(x), int(y))
            await page.mouse.click(*point)
            state.pointer = point
            return point
    raise ActionError(f"element {node} shows no box in the viewport")
