"""A scripted agent for common MiniWoB++ instructions that sees what an element-aware agent sees.

It reads the instruction (``info["prompt"]``) and the visible elements (``info["elements"]``, from
an env made with ``elements=True``) and answers with CLA actions only: clicks at element centres
and typing. Instructions it does not know get a click on the first button, so it also serves as a
baseline that fails visibly.
"""

from __future__ import annotations

import re
from typing import Any

from hud_gym.actions import CLAAction, ClickAction, Point, TypeAction
from hud_gym.agents.needs import AgentNeeds

__all__ = ["MiniWoBScriptedAgent"]

Element = dict[str, Any]


def _center(element: Element) -> Point:
    x, y, w, h = element["bbox"]
    return Point(x=round(x + w / 2), y=round(y + h / 2))


class MiniWoBScriptedAgent:
    """Solves click, link, text-entry, login and checkbox instructions from the element list.

    MiniWoB++ tasks only: it needs ``elements=True`` and knows MiniWoB++'s instructions
    (:attr:`env_needs`, applied by ``run_job`` and ``hud-gym run``, which refuse other tasks).
    """

    env_needs = AgentNeeds(
        env_kwargs={"elements": True},
        benchmarks=("miniwob",),
        reason="it reads the page's elements and knows MiniWoB++ instructions",
    )

    def reset(self) -> None:
        """Nothing to forget: each episode is solved in one step."""

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> list[CLAAction]:
        """The whole plan for the instruction, executed as one step."""
        prompt = info.get("prompt") or ""
        elements: list[Element] = info.get("elements") or []
        for rule in (self._click_named, self._enter_text, self._password, self._login, self._checkboxes, self._focus):
            actions = rule(prompt, elements)
            if actions:
                return actions
        buttons = self._find(elements, tag="button")
        return [ClickAction(point=_center(buttons[0]))] if buttons else [ClickAction(point=Point(x=80, y=105))]

    @staticmethod
    def _find(
        elements: list[Element], *, tag: str | None = None, text: str | None = None, input_type: str | None = None
    ) -> list[Element]:
        return [
            e
            for e in elements
            if (tag is None or e["tag"] == tag)
            and (text is None or (e.get("text") or "").strip() == text)
            and (input_type is None or e.get("type") == input_type)
        ]

    def _submit(self, elements: list[Element]) -> list[CLAAction]:
        buttons = self._find(elements, tag="button")
        return [ClickAction(point=_center(buttons[-1]))] if buttons else []

    def _click_named(self, prompt: str, elements: list[Element]) -> list[CLAAction]:
        match = (
            re.match(r'Click (?:on )?(?:the )?(?:button|link) "?([^".]+)"?\.?$', prompt)
            or re.match(r'Click on the "(.+)" button\.', prompt)
            or re.match(r'Click on the link "(.+)"\.', prompt)
        )
        if prompt.startswith("Click the button"):
            target = self._find(elements, tag="button")
        elif match:
            target = [
                e
                for e in self._find(elements, text=match.group(1))
                if e.get("interactive") or e["tag"] in ("a", "span")
            ]
        else:
            return []
        return [ClickAction(point=_center(target[0]))] if target else []

    def _enter_text(self, prompt: str, elements: list[Element]) -> list[CLAAction]:
        match = re.match(r'Enter "(.+)" into the text field and press Submit\.', prompt)
        inputs = self._find(elements, tag="input", input_type="text")
        if not match or not inputs:
            return []
        return [ClickAction(point=_center(inputs[0])), TypeAction(text=match.group(1)), *self._submit(elements)]

    def _password(self, prompt: str, elements: list[Element]) -> list[CLAAction]:
        match = re.match(r'Enter the password "(.+)" into both text fields', prompt)
        fields = self._find(elements, tag="input", input_type="password")
        if not match or len(fields) < 2:
            return []
        text = match.group(1)
        return [
            ClickAction(point=_center(fields[0])),
            TypeAction(text=text),
            ClickAction(point=_center(fields[1])),
            TypeAction(text=text),
            *self._submit(elements),
        ]

    def _login(self, prompt: str, elements: list[Element]) -> list[CLAAction]:
        match = re.match(r'Enter the username "(.+)" and the password "(.+)" into the text fields', prompt)
        user = self._find(elements, tag="input", input_type="text")
        password = self._find(elements, tag="input", input_type="password")
        if not match or not user or not password:
            return []
        return [
            ClickAction(point=_center(user[0])),
            TypeAction(text=match.group(1)),
            ClickAction(point=_center(password[0])),
            TypeAction(text=match.group(2)),
            *self._submit(elements),
        ]

    def _checkboxes(self, prompt: str, elements: list[Element]) -> list[CLAAction]:
        match = re.match(r"Select (.*) and click Submit\.", prompt)
        if not match:
            return []
        names = [] if match.group(1) == "nothing" else [n.strip() for n in match.group(1).split(",")]
        actions: list[CLAAction] = []
        for name in names:
            labels = self._find(elements, tag="label", text=name)
            if not labels:
                return []
            actions.append(ClickAction(point=_center(labels[0])))
        return actions + self._submit(elements)

    def _focus(self, prompt: str, elements: list[Element]) -> list[CLAAction]:
        if not prompt.startswith("Focus into the"):
            return []
        inputs = [e for e in elements if e["tag"] in ("input", "textarea")]
        return [ClickAction(point=_center(inputs[0]))] if inputs else []
