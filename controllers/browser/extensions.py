"""What the browser gym's suites add to its controller: custom actions and page probes.

A suite of the browser gym (a :class:`~hud_gym.core.suite.Suite` whose ``gym`` is ``"browser"``)
may name a :class:`BrowserExtension` as its ``controller_hooks``; a browser controller, in this
process or in a controller server, reads those of the registered suites when it is made
(:func:`browser_extension`). This package imports no suite.

- ``custom_actions``: custom action name to ``handler(state, args)``, run as the controller's
  own custom actions (:mod:`.custom`) with its browser session (a
  :class:`~hud_gym.controllers.browser.state.BrowserState`: ``state.page`` is the active tab); a
  suite may not redefine one of the gym's.
- ``page_probes``: :class:`PageProbe`\\ s, read in the same round trip as the page's title and
  elements (an env made with ``elements=True``), each reported in the frame's ``info`` under its key.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from hud_gym.controllers.base import ActionOutcome
from hud_gym.core.gym_type import import_path
from hud_gym.core.suite import suites_of

__all__ = ["BrowserExtension", "CustomHandler", "PageProbe", "browser_extension"]

CustomHandler = Callable[[Any, dict[str, Any]], Awaitable[ActionOutcome]]
"""A custom action's handler: ``handler(state, args)``, ``state`` the controller's browser session."""


@dataclass(frozen=True)
class PageProbe:
    """A value a suite reads from the page with its state.

    Attributes:
        key: the frame ``info`` key it is reported under (``"dom_elements"``).
        expression: a JavaScript expression evaluated in the page; ``null`` reports nothing.
        convert: the ``info`` value of the expression's (JSON) value.
    """

    key: str
    expression: str
    convert: Callable[[Any], Any]


@dataclass(frozen=True)
class BrowserExtension:
    """What one suite (or all of them, merged) adds to the browser controller (module docstring)."""

    custom_actions: Mapping[str, CustomHandler] = field(default_factory=dict)
    page_probes: tuple[PageProbe, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "custom_actions", MappingProxyType(dict(self.custom_actions)))
        object.__setattr__(self, "page_probes", tuple(self.page_probes))

    @property
    def probe_expressions(self) -> tuple[tuple[str, str], ...]:
        """``(key, expression)`` of each probe, for :func:`~.capture.page_state_expression`."""
        return tuple((probe.key, probe.expression) for probe in self.page_probes)

    def probe_info(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The ``info`` entries of the probes' values (a probe whose value is empty adds none)."""
        return {probe.key: probe.convert(values[probe.key]) for probe in self.page_probes if values.get(probe.key)}


def browser_extension(gym: str) -> BrowserExtension:
    """The custom actions and page probes of every registered suite of ``gym``, merged.

    Raises:
        TypeError: a suite's ``controller_hooks`` is not a :class:`BrowserExtension`.
        ValueError: two suites define the same custom action or probe key.
    """
    actions: dict[str, CustomHandler] = {}
    probes: dict[str, PageProbe] = {}
    for suite in suites_of(gym):
        if suite.controller_hooks is None:
            continue
        extension = import_path(suite.controller_hooks)
        if not isinstance(extension, BrowserExtension):
            raise TypeError(f"suite {suite.name!r}: controller_hooks must name a BrowserExtension, got {extension!r}")
        taken = sorted(
            (set(extension.custom_actions) & set(actions)) | (set(probes) & {p.key for p in extension.page_probes})
        )
        if taken:
            raise ValueError(f"suite {suite.name!r}: {', '.join(taken)} already defined by another suite of {gym!r}")
        actions.update(extension.custom_actions)
        probes.update((probe.key, probe) for probe in extension.page_probes)
    return BrowserExtension(custom_actions=actions, page_probes=tuple(probes.values()))
