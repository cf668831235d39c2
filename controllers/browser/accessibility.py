"""The opt-in observation keys of the browser's elements by id: the accessibility tree and the
set-of-marks table (``axtree=True``, ``som=True`` of :class:`~hud_gym.envs.browser_options.BrowserOptions`).

Both start from one page scan per observation (:mod:`.page_scan`, :func:`scan`: at most ``limit``
visible elements each),
whose elements the tab's DevTools session names by ``backendNodeId``: the browser's id of a DOM
node, stable for the document's life and not settable by the page. That id is what
:func:`~.nodes.click_node` (``click_element`` / ``type_field`` with ``{"node": id}``) acts on.

- :func:`axtree_of`: each element's node of Chromium's accessibility tree
  (``Accessibility.getFullAXTree``, one query for the document): ``role``, ``name``,
  ``value``, its states (``focused``, ``checked``, ``disabled``, ...), ``text`` (its own text when
  the role takes no name from it, e.g. a paragraph), ``depth`` and ``bbox``; nodes the browser
  ignores and nameless ``generic`` / ``none`` ones are left out. A document of more than
  :data:`AX_ELEMENTS` elements gets the scan's roles and names instead (the engine's cost grows
  with the whole document).
- :func:`marks_of`: the scan's marks (what an agent would click: interactive elements and
  textless boxes or images), each ``{"id", "tag", "text", "bbox"}`` (``role`` when set).

Boxes are ``[x, y, width, height]`` in screen (CSS) pixels of the viewport; every string is cut
to :data:`NODE_CHARS` on this side, whatever the page returned.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from typing import Any

from playwright.async_api import Error as PlaywrightError

from hud_gym.bounds import URL_CHARS, bound, clip_text
from hud_gym.controllers.browser.page_scan import nodes_expression
from hud_gym.controllers.browser.session import PageSession
from hud_gym.envs.browser_options import BrowserOptions

__all__ = [
    "AX_ELEMENTS",
    "NODE_CHARS",
    "Scanned",
    "axtree_of",
    "bounded_elements",
    "marks_of",
    "node_info",
    "scan",
]

NODE_CHARS = 200
"""Characters kept of each string of a node (its role, name, value, text, tag)."""

AX_ELEMENTS = 5000
"""Elements a document may have for its tree to come from Chromium's accessibility engine, which
builds its tree of the whole document (``getFullAXTree`` of 100k elements: 90 s on a loaded
machine, ``getPartialAXTree`` of 100 of them 50 s)."""

_GROUP = "hud-gym-nodes"
_NAMELESS_DROPPED = frozenset({"generic", "none", "presentation", "InlineTextBox", "LineBreak"})
_STATES = ("focused", "checked", "disabled", "expanded", "selected", "pressed", "required", "readonly", "invalid")


Scanned = list[tuple[int, dict[str, Any]]]
"""``(backendNodeId, description)`` of scanned elements."""


async def scan(session: PageSession, limit: int, tree: bool, marks: bool) -> tuple[Scanned, int]:
    """The scanned elements of the tree (the first ``limit``, with ``tree``) and the marks (the
    first ``limit``, with ``marks``), and the number of elements the document says it has."""
    params = {"expression": nodes_expression(limit, tree, marks), "objectGroup": _GROUP, "silent": True}
    try:
        result = (await session.send("Runtime.evaluate", params)).get("result", {})
        if result.get("subtype") != "array" or "objectId" not in result:
            return [], 0
        array = result["objectId"]
        items, properties = await asyncio.gather(
            session.send(
                "Runtime.callFunctionOn",
                {
                    "objectId": array,
                    "functionDeclaration": "function () { return {items: this.items, count: this.count}; }",
                    "returnByValue": True,
                },
            ),
            session.send("Runtime.getProperties", {"objectId": array, "ownProperties": True}),
        )
        handles = sorted(
            (int(p["name"]), p["value"]["objectId"])
            for p in properties.get("result", [])
            if str(p.get("name", "")).isdigit() and "objectId" in p.get("value", {})
        )[: 2 * limit]
        described = await asyncio.gather(
            *(session.send("DOM.describeNode", {"objectId": handle}) for _, handle in handles), return_exceptions=True
        )
    finally:
        with contextlib.suppress(PlaywrightError):
            await session.send("Runtime.releaseObjectGroup", {"objectGroup": _GROUP})
    value = items.get("result", {}).get("value")
    descriptions, count = (value.get("items"), value.get("count")) if isinstance(value, dict) else (None, None)
    if not isinstance(descriptions, list):
        return [], 0
    scanned = []
    for (index, _), node in zip(handles, described, strict=True):
        item = descriptions[index] if index < len(descriptions) else None
        if isinstance(node, dict) and isinstance(item, dict) and _box(item.get("bbox")) is not None:
            scanned.append((int(node["node"]["backendNodeId"]), item))
    return scanned, count if isinstance(count, int) and not isinstance(count, bool) else 0


def _box(value: Any) -> list[float] | None:
    """A scanned ``[x, y, width, height]`` of finite numbers, else ``None``."""
    if not isinstance(value, list) or len(value) != 4:
        return None
    if not all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in value):
        return None
    return [float(v) for v in value]


def _text(value: Any) -> str:
    return clip_text(value[:NODE_CHARS], NODE_CHARS) if isinstance(value, str) else ""


ELEMENT_KEYS = 64
"""Keys kept of each element of ``info["elements"]`` (the scan reports about 15)."""


def bounded_elements(value: Any, limit: int) -> list[dict[str, Any]]:
    """``info["elements"]`` from what the page's scan returned: at most ``limit`` elements with
    a box, each string cut (the scan runs in the page's world, which can undo its own cuts)."""
    if not isinstance(value, list):
        return []
    items = [item for item in value[:limit] if isinstance(item, dict) and _box(item.get("bbox")) is not None]
    # The list is cut to ``limit`` above; ``max_items`` also caps each element's keys (a page's
    # scan may add its own), so it is never below what an element of the scan has.
    bounded: list[dict[str, Any]] = bound(items, max_string=URL_CHARS, max_items=max(limit, ELEMENT_KEYS))[0]
    for item in bounded:
        item["bbox"] = _box(item.get("bbox"))
    return [item for item in bounded if item["bbox"] is not None]


def marks_of(scanned: Scanned) -> list[dict[str, Any]]:
    """The set-of-marks table of the scanned marks (module docstring)."""
    marks = []
    for node_id, item in scanned:
        if item.get("mark") is not True:
            continue
        mark = {
            "id": node_id,
            "tag": _text(item.get("tag")),
            "text": _text(item.get("text")),
            "bbox": _box(item["bbox"]),
        }
        if item.get("role"):
            mark["role"] = _text(item["role"])
        marks.append(mark)
    return marks


def _ax_value(entry: Any) -> Any:
    return entry.get("value") if isinstance(entry, dict) else None


def _states(ax_node: dict[str, Any]) -> dict[str, Any]:
    """The node's true states (``checked`` may be ``"mixed"``)."""
    states: dict[str, Any] = {}
    for prop in ax_node.get("properties") or []:
        name, value = prop.get("name"), _ax_value(prop.get("value"))
        if name in _STATES and value not in (None, False, "false", ""):
            states[name] = value if isinstance(value, bool) or value == "mixed" else True
    return states


def _ax_entry(node_id: int, item: dict[str, Any], ax_node: dict[str, Any] | None) -> dict[str, Any] | None:
    """The tree's entry of one scanned element (``ax_node``: its node of the accessibility tree),
    ``None`` when it is left out."""
    if ax_node is None or ax_node.get("ignored"):
        return None
    role, name = _text(_ax_value(ax_node.get("role"))), _text(_ax_value(ax_node.get("name")))
    if not name and role in _NAMELESS_DROPPED and not item.get("interactive") and not item.get("text"):
        return None
    entry: dict[str, Any] = {"id": node_id, "role": role, "name": name}
    value = _ax_value(ax_node.get("value"))
    if value not in (None, ""):
        entry["value"] = _text(str(value))
    if not name and item.get("text"):
        entry["text"] = _text(item["text"])
    entry.update(_states(ax_node))
    depth = item.get("depth")
    entry["depth"] = depth if isinstance(depth, int) and not isinstance(depth, bool) and 0 <= depth < 10_000 else 0
    entry["bbox"] = _box(item["bbox"])
    return entry


def _scan_entry(node_id: int, item: dict[str, Any]) -> dict[str, Any]:
    """The tree's entry of a scanned element from the scan alone: its ARIA role or tag, its text."""
    role = _text(item.get("role")) or _text(item.get("tag"))
    entry: dict[str, Any] = {"id": node_id, "role": role, "name": _text(item.get("text"))}
    if isinstance(item.get("value"), str) and item["value"]:
        entry["value"] = _text(item["value"])
    if item.get("checked") is True:
        entry["checked"] = True
    if item.get("disabled") is True:
        entry["disabled"] = True
    depth = item.get("depth")
    entry["depth"] = depth if isinstance(depth, int) and not isinstance(depth, bool) and 0 <= depth < 10_000 else 0
    entry["bbox"] = _box(item["bbox"])
    return entry


async def axtree_of(session: PageSession, scanned: Scanned, count: int) -> tuple[list[dict[str, Any]], bool]:
    """The pruned accessibility tree of the scanned tree elements, in document order (module
    docstring), and whether its roles and names are the accessibility engine's: on a document of
    more than :data:`AX_ELEMENTS` elements (``count``) they are the scan's (its ARIA role or tag,
    its text)."""
    scanned = [(node_id, item) for node_id, item in scanned if item.get("tree") is True]
    if count > AX_ELEMENTS:
        return [_scan_entry(node_id, item) for node_id, item in scanned], False
    # One query for the whole (bounded) document: cheaper than one per node.
    tree = await session.send("Accessibility.getFullAXTree")
    by_node = {n.get("backendDOMNodeId"): n for n in tree.get("nodes", ()) if isinstance(n, dict)}
    entries = (_ax_entry(node_id, item, by_node.get(node_id)) for node_id, item in scanned)
    return [entry for entry in entries if entry is not None], True


async def node_info(session: PageSession, options: BrowserOptions) -> dict[str, Any]:
    """The frame ``info`` entries the options ask for: ``axtree`` (and ``axtree_roles: "scan"``
    when its roles are the scan's), ``som``."""
    info: dict[str, Any] = {}
    if not (options.axtree or options.som):
        return info
    scanned, count = await scan(session, options.max_nodes, options.axtree, options.som)
    if options.axtree:
        info["axtree"], engine = await axtree_of(session, scanned, count)
        if not engine:
            info["axtree_roles"] = "scan"
    if options.som:
        info["som"] = marks_of(scanned)
    return info
