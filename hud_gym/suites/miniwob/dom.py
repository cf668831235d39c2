"""MiniWoB++'s own DOM observation and element actions, for MiniWoB pages in ``hud/Browser-v0``.

- ``info["dom_elements"]`` (an env made with ``elements=True``, on a MiniWoB task page): the
  official env's ``dom_elements``, from the page's own ``core.getDOMInfo()`` in the same round
  trip as the title and elements, flattened by the ``miniwob`` package's ``DOMElement``: ``ref``,
  ``parent`` (0 for the root), ``left``, ``top``, ``width``, ``height`` (observation pixels),
  ``tag``, ``text``, ``value``, ``id``, ``classes``, ``bg_color``, ``fg_color`` (RGBA as
  ``DOMElement`` parses them: 0-1 floats) and
  ``flags`` (``[focused, tampered, targeted, is_leaf]``), JSON-ready (lists, not arrays).
- Custom actions, MiniWoB's element-level action types: ``click_element`` (``{"ref": int}``:
  MiniWoB's ``CLICK_ELEMENT``, ``core.elementClick``) and ``type_field`` (``{"field": int}``
  and optionally ``{"ref": int}``: MiniWoB's ``TYPE_FIELD``, or ``FOCUS_ELEMENT_AND_TYPE_FIELD``
  with a ref: type the value of the instance's ``fields[field]``, clicking the element first).
  Refs are those of ``dom_elements``: stable through an episode.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import Page

from hud_gym.actions import ActionError
from hud_gym.controllers.base import ActionOutcome
from hud_gym.suites.miniwob.tasks import extract_fields

__all__ = ["DOM_INFO_JS", "click_element", "dom_elements", "type_field"]

DOM_INFO_JS = (
    "((typeof core === 'object' && core && typeof core.getDOMInfo === 'function' && "
    "typeof WOB_EPISODE_ID !== 'undefined') ? (() => { try { return core.getDOMInfo(); } "
    "catch (e) { return null; } })() : null)"
)
"""The page's ``core.getDOMInfo()`` tree on a MiniWoB page, else ``null`` (an expression)."""

_CLICK_JS = """(ref) => {
  core.getDOMInfo();  // refresh the ref table: refs are stable within an episode
  if (!(ref in core.previousDOMInfo)) return "no element with ref " + ref + " on the page";
  const result = core.elementClick(ref);
  return result === true ? null : String(result);
}"""

_UTTERANCE_JS = """() => { const u = core.getUtterance(); const s = !!u && typeof u === "object";
  return {utterance: s ? u.utterance : u, fields: s ? (u.fields || null) : null}; }"""


def dom_elements(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """The official ``dom_elements`` of a ``core.getDOMInfo()`` tree (see the module docstring)."""
    from miniwob.dom import DOMElement

    elements = []
    for element in DOMElement(raw).subtree_elements:
        elements.append(
            {
                "ref": element.ref,
                "parent": element.parent.ref if element.parent else 0,
                "left": float(element.left),
                "top": float(element.top),
                "width": float(element.width),
                "height": float(element.height),
                "tag": element.tag,
                "text": element.text or "",
                "value": str(element.value or ""),
                "id": element.id,
                "classes": element.classes,
                "bg_color": [float(c) for c in element.bg_color],
                "fg_color": [float(c) for c in element.fg_color],
                "flags": [int(element.focused), int(element.tampered), int(element.targeted), int(element.is_leaf)],
            }
        )
    return elements


def _ref(args: dict[str, Any], action: str) -> int:
    ref = args.get("ref")
    if isinstance(ref, bool) or not isinstance(ref, int):
        raise ActionError(f"custom action {action!r} needs args {{'ref': <int>}} (a ref of info['dom_elements'])")
    return ref


async def _is_miniwob(page: Page, action: str) -> None:
    if not await page.evaluate("() => typeof core === 'object' && typeof core.elementClick === 'function'"):
        raise ActionError(f"custom action {action!r} works on MiniWoB++ task pages only")


async def click_element(page: Page, args: dict[str, Any]) -> ActionOutcome:
    """MiniWoB's ``CLICK_ELEMENT``: click the element ``args["ref"]`` (``core.elementClick``)."""
    ref = _ref(args, "click_element")
    await _is_miniwob(page, "click_element")
    failure = await page.evaluate(_CLICK_JS, ref)
    if failure:
        raise ActionError(f"click_element {ref}: {failure}")
    return ActionOutcome()


async def type_field(page: Page, args: dict[str, Any]) -> ActionOutcome:
    """MiniWoB's ``TYPE_FIELD`` (``FOCUS_ELEMENT_AND_TYPE_FIELD`` with a ``ref``): type the value
    of field ``args["field"]`` of the instance (an index past the fields types nothing, as MiniWoB)."""
    index = args.get("field")
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise ActionError("custom action 'type_field' needs args {'field': <int >= 0>} and optionally {'ref': <int>}")
    await _is_miniwob(page, "type_field")
    if "ref" in args:
        await click_element(page, {"ref": _ref(args, "type_field")})
    task = PurePosixPath(urlsplit(page.url).path).stem  # .../miniwob/<task>.html
    utterance = await page.evaluate(_UTTERANCE_JS)
    fields = extract_fields(task, utterance["utterance"], utterance["fields"])
    text = fields[index][1] if index < len(fields) else ""
    if text:
        await page.keyboard.type(text)
    return ActionOutcome(info={"typed_field": text})
