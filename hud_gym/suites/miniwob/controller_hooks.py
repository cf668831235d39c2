"""What MiniWoB++ adds to the browser controller (:mod:`hud_gym.controllers.browser.extensions`):
its DOM observation as a page probe (``info["dom_elements"]``, an env made with
``elements=True``) and its element actions as custom actions (:mod:`.dom`), run on the browser
session's active tab (``state.page``)."""

from __future__ import annotations

from typing import Any

from hud_gym.controllers.base import ActionOutcome
from hud_gym.controllers.browser.extensions import BrowserExtension, PageProbe
from hud_gym.suites.miniwob.dom import DOM_INFO_JS, click_element, dom_elements, type_field

__all__ = ["CONTROLLER_HOOKS"]


async def _click_element(state: Any, args: dict[str, Any]) -> ActionOutcome:
    return await click_element(state.page, args)


async def _type_field(state: Any, args: dict[str, Any]) -> ActionOutcome:
    return await type_field(state.page, args)


CONTROLLER_HOOKS = BrowserExtension(
    custom_actions={"click_element": _click_element, "type_field": _type_field},
    page_probes=(PageProbe(key="dom_elements", expression=DOM_INFO_JS, convert=dom_elements),),
)
"""MiniWoB++'s part of every browser controller."""
