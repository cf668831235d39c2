"""The CLA dispatcher every controller shares (:mod:`hud_gym.controllers.dispatch`): each gym's
table covers every CLA type a controller receives, and what a gym does not execute is one
ActionError that names the action and the gym."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

import pytest

from hud_gym.actions import ActionError, ActionType, CLAAction, ClickAction, CustomAction, PressAction
from hud_gym.controllers.browser.controller import ACTIONS as BROWSER_ACTIONS
from hud_gym.controllers.browser.controller import CUSTOM_ACTIONS as BROWSER_CUSTOM
from hud_gym.controllers.dispatch import ActionTable, CustomActions
from hud_gym.controllers.qa.controller import ACTIONS as QA_ACTIONS
from hud_gym.controllers.qa.controller import QAController
from hud_gym.controllers.ubuntu.controller import ACTIONS as UBUNTU_ACTIONS
from hud_gym.controllers.ubuntu.controller import CUSTOM_ACTIONS as UBUNTU_CUSTOM

pytestmark = pytest.mark.timeout(30)


class Recorder:
    def __init__(self) -> None:
        self.seen: list[Any] = []

    async def click(self, action: ClickAction) -> str:
        self.seen.append(action)
        return "clicked"

    async def hello(self, args: dict[str, Any]) -> str:
        args["mutated"] = True  # a handler's args are its own copy
        return f"hello {args.get('name')}"


TABLE: ActionTable[Recorder, str] = ActionTable("demo", {ClickAction: Recorder.click})
CUSTOM: CustomActions[Recorder, str] = CustomActions("demo", {"hello": Recorder.hello})


@pytest.mark.parametrize("table", [BROWSER_ACTIONS, UBUNTU_ACTIONS, QA_ACTIONS], ids=lambda t: t.gym)
def test_every_gym_executes_every_cla_type_a_controller_receives(table: ActionTable[Any, Any]) -> None:
    # ``response`` ends the episode in the env core and never reaches a controller.
    assert sorted(table.names) == sorted(t.value for t in ActionType if t is not ActionType.RESPONSE)


def test_the_custom_action_names_are_the_tables() -> None:
    assert BROWSER_CUSTOM == (
        "goto",
        "back",
        "forward",
        "reload",
        "new_tab",
        "switch_tab",
        "close_tab",
    )  # and a controller's suites' (MiniWoB++: click_element, type_field; tests/test_suites.py)
    assert UBUNTU_CUSTOM == ("launch", "key_sequence", "clipboard_set")


def test_a_table_runs_the_handler_of_the_action_type() -> None:
    recorder = Recorder()
    action = ClickAction(point=(3, 4))
    assert asyncio.run(TABLE.run(recorder, action)) == "clicked"
    assert recorder.seen == [action]


def test_a_subclass_of_a_cla_type_runs_with_its_handler() -> None:
    class TripleClick(ClickAction):
        pattern: list[int] | None = [50, 50]

    recorder = Recorder()
    assert asyncio.run(TABLE.run(recorder, TripleClick())) == "clicked"
    assert TABLE.handler(TripleClick) is TABLE.handler(ClickAction)


def test_an_action_the_gym_does_not_execute_names_the_action_and_the_gym() -> None:
    with pytest.raises(ActionError, match=r"the demo gym cannot execute 'press' actions \(it executes: click\)"):
        TABLE.run(Recorder(), PressAction(keys=["a"]))

    class Teleport(CLAAction):
        type: Literal["teleport"] = "teleport"

    with pytest.raises(ActionError, match="cannot execute 'teleport'"):
        TABLE.run(Recorder(), Teleport())


def test_an_unknown_custom_action_lists_the_gyms() -> None:
    with pytest.raises(ActionError, match=r"unknown custom action 'fly'; the demo gym supports: hello"):
        CUSTOM.run(Recorder(), CustomAction(action="fly"))
    action = CustomAction(action="hello", args={"name": "ada"})
    assert asyncio.run(CUSTOM.run(Recorder(), action)) == "hello ada"
    assert action.args == {"name": "ada"}


def test_the_qa_gym_refuses_an_unknown_custom_action_by_name() -> None:
    with pytest.raises(ActionError, match="the qa gym supports: clear, submit"):
        asyncio.run(QAController().step(CustomAction(action="fly")))
