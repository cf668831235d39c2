"""The web apps' oracle: a plan of page operations played as CLA actions on the elements the env reports.

A family's oracle turns the task's parameters into a plan (:class:`Op` list): click the element
showing a text, fill a named field, press a key. :class:`PlanOracle` plays it one CLA action a
step, finding each element in ``info["elements"]`` (the env is made with ``elements=True``) and
clicking the middle of its box; an element not in view is scrolled to (at most
:data:`SCROLLS` times). Nothing reaches into the page: clicks, keys and typing only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hud_gym.actions import CLAAction, ClickAction, Point, PressAction, ResponseAction, ScrollAction, TypeAction
from hud_gym.task import Task

__all__ = ["SCROLLS", "Op", "PlanOracle", "append", "click", "fill", "plan_of", "plan_oracle", "press"]

SCROLLS = 4
"""Scrolls down (then up) the oracle tries before giving up on an element."""


@dataclass(frozen=True)
class Op:
    """One operation: ``click`` the element whose text is ``target``, ``fill`` the field named
    ``target`` with ``text`` (or ``append`` it), or ``press`` the keys in ``target`` (``+``-joined)."""

    kind: str
    target: str
    text: str = ""
    tag: str | None = None


def click(text: str, tag: str | None = None) -> Op:
    """Click the element showing ``text`` (exactly, whitespace collapsed), of ``tag`` if given."""
    return Op("click", text, tag=tag)


def fill(name: str, text: str) -> Op:
    """Replace the text of the field named ``name`` with ``text``."""
    return Op("fill", name, text)


def append(name: str, text: str) -> Op:
    """Type ``text`` at the end of the field named ``name`` (what it holds is kept)."""
    return Op("append", name, text)


def press(keys: str) -> Op:
    """Press ``keys`` (``"enter"``, ``"ctrl+a"``)."""
    return Op("press", keys)


def _find(elements: Sequence[dict[str, Any]], op: Op) -> dict[str, Any] | None:
    for element in elements:
        if op.tag is not None and element.get("tag") != op.tag:
            continue
        if (
            op.kind in ("fill", "append")
            and element.get("name") == op.target
            and element.get("tag") in ("input", "textarea")
        ):
            return element
        if (
            op.kind == "click"
            and element.get("interactive")
            and " ".join(str(element.get("text")).split()) == op.target
        ):
            return element
    return None


def _middle(element: dict[str, Any]) -> Point:
    x, y, w, h = element["bbox"]
    return Point(x=int(x + w / 2), y=int(y + h / 2))


class PlanOracle:
    """Plays a plan of :class:`Op` (see the module docstring); ``None`` once it is played."""

    def __init__(self, plan: Sequence[Op]) -> None:
        self.plan = list(plan)
        self._index = 0
        self._pending: list[CLAAction] = []
        self._scrolls = 0

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> CLAAction | None:
        """The next action of the plan, given the page's elements."""
        if self._pending:
            return self._pending.pop(0)
        if self._index >= len(self.plan):
            return None
        op = self.plan[self._index]
        if op.kind == "press":
            self._index += 1
            return PressAction(keys=op.target.split("+"))
        element = _find(info.get("elements") or [], op)
        if element is None:
            self._scrolls += 1
            if self._scrolls > 2 * SCROLLS:
                return ResponseAction(text=f"could not find {op.target!r}")
            return ScrollAction(scroll=Point(x=0, y=300 if self._scrolls <= SCROLLS else -300))
        self._scrolls = 0
        self._index += 1
        if op.kind in ("fill", "append"):
            keys = ["ctrl", "a"] if op.kind == "fill" else ["end"]
            self._pending = [PressAction(keys=keys), TypeAction(text=op.text)]
        return ClickAction(point=_middle(element))


def plan_of(task: Task) -> list[Op]:
    """The plan a family's generator stored in the task (``metadata["plan"]``)."""
    raw = (task.metadata or {}).get("plan")
    if not isinstance(raw, list):
        raise ValueError(f"task {task.id!r} has no oracle plan in its metadata")
    return [Op(*item) for item in raw]


def plan_oracle(task: Task) -> PlanOracle:
    """The oracle of a web-app family's task (every family's ``oracle`` import path)."""
    return PlanOracle(plan_of(task))
