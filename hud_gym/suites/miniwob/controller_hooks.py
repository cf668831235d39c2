"""What MiniWoB++ adds to the browser controller (:mod:`hud_gym.controllers.browser.extensions`):
its DOM observation as a page probe (``info["dom_elements"]``, an env made with
``elements=True``) and its element actions as custom actions (:mod:`.dom`), run on the browser
session's active tab (``state.page``). With ``{"node": id}`` (an id of ``info["som"]`` or
``obs["axtree"]``) in place of a ``ref``, ``click_element`` clicks that element with the mouse on
any page (:mod:`hud_gym.controllers.browser.nodes`) and ``type_field`` clicks it, then types the field."""

from __future__ import annotations

from typing import Any

from hud_gym.controllers.base import ActionOutcome
from hud_gym.controllers.browser.extensions import BrowserExtension, PageProbe
from hud_gym.controllers.browser.nodes import click_node, node_id
from hud_gym.suites.miniwob.dom import DOM_INFO_JS, click_element, dom_elements, type_field

__all__ = ["CONTROLLER_HOOKS"]


async def _click_element(state: Any, args: dict[str, Any]) -> ActionOutcome:
    if "node" in args:  # an id of the set-of-marks or the accessibility tree, on any page
        await click_node(state, node_id(args, "click_element"))
        return ActionOutcome()
    return await click_element(state.page, args)


async def _type_field(state: Any, args: dict[str, Any]) -> ActionOutcome:
    if "node" in args:
        await click_node(state, node_id(args, "type_field"))
        return await type_field(state.page, {k: v for k, v in args.items() if k != "node"})
    return await type_field(state.page, args)


CONTROLLER_HOOKS = BrowserExtension(
    custom_actions={"click_element": _click_element, "type_field": _type_field},
    page_probes=(PageProbe(key="dom_elements", expression=DOM_INFO_JS, convert=dom_elements),),
)
"""MiniWoB++'s part of every browser controller."""
