"""End to end with each model agent: real Chromium (MiniWoB ``click-test-2`` and ``enter-text`` in
``hud/Browser-v0``) and a real desktop (``desktop-basic/editor-append-line`` in ``hud/Ubuntu-v0``)
reach reward 1 through model turns replayed by the loopback server. Only the model is scripted:
each turn reads where to click from what the env reported (MiniWoB's elements, the editor
window's geometry) and scales it to the frame of the screenshot the agent sent; our agents,
adapters, SDK clients and envs run for real, and the server checks every request."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import gymnasium
import pytest
from agent_helpers import API
from replay_replies import chat_completion, claude_message, computer_call, output_message, response, text, tool_use
from replay_server import ReplayServer, Request

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym.core.loop import get_loop_thread
from hud_gym.wrappers.rollout.grpo import rollout

pytestmark = pytest.mark.timeout(180)

KINDS = ("claude", "operator", "openai")


class Recorder:
    """An env listener keeping what the env last reported (and, on a desktop, the windows)."""

    def __init__(self) -> None:
        self.info: dict[str, Any] = {}
        self.prompt = ""
        self.size: tuple[int, int] = (0, 0)
        self.windows: list[dict[str, Any]] = []

    async def on_reset(
        self, env: Any, observation: dict[str, Any], info: dict[str, Any], options: dict[str, Any]
    ) -> None:
        self.info, self.prompt = info, info["prompt"]
        self.size = (observation["screenshot"].shape[1], observation["screenshot"].shape[0])
        if env.gym == "ubuntu":
            self.windows = await env.controller.desktop.windows()

    async def on_step(
        self,
        env: Any,
        action: Any,
        observation: dict[str, Any],
        reward: float,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
    ) -> None:
        self.info = info

    async def on_close(self, env: Any) -> None:
        pass

    def to_frame(self, request: Request, x: float, y: float) -> tuple[int, int]:
        """An env position in the frame of the screenshot the agent sent."""
        assert request.frame is not None
        return round(x * request.frame[0] / self.size[0]), round(y * request.frame[1] / self.size[1])

    def element(self, request: Request, tag: str, element_id: str | None = None) -> tuple[int, int]:
        """The centre of the first element ``tag`` (with that id), in the agent's frame."""
        for item in self.info["elements"]:
            if item["tag"] == tag and (element_id is None or item.get("id") == element_id):
                x, y, w, h = item["bbox"]
                return self.to_frame(request, x + w / 2, y + h / 2)
        raise AssertionError(f"no <{tag}> {element_id!r} in {self.info['elements']}")


def click(kind: str, at: Callable[[Request], tuple[int, int]]) -> Callable[[Request], dict[str, Any]]:
    def turn(request: Request) -> dict[str, Any]:
        x, y = at(request)
        if kind == "claude":
            return claude_message(tool_use("left_click", coordinate=[x, y]))
        if kind == "operator":
            return response(computer_call({"type": "click", "x": x, "y": y, "button": "left"}))
        return chat_completion(f"click(x={x}, y={y})")

    return turn


def keys(kind: str, chord: str) -> dict[str, Any]:
    if kind == "claude":
        return claude_message(tool_use("key", text=chord))
    if kind == "operator":
        return response(computer_call({"type": "keypress", "keys": [k.upper() for k in chord.split("+")]}))
    return chat_completion(f"hotkey({', '.join(repr(k) for k in chord.split('+'))})")


def typed(kind: str, value: str) -> dict[str, Any]:
    if kind == "claude":
        return claude_message(tool_use("type", text=value))
    if kind == "operator":
        return response(computer_call({"type": "type", "text": value}))
    return chat_completion(f"write({value!r})")


def done(kind: str) -> dict[str, Any]:
    return {
        "claude": claude_message(text("Done.")),
        "operator": response(output_message("Done.")),
        "openai": chat_completion("answer('done')"),
    }[kind]


# ----------------------------------------------------------------------------- the browser


@pytest.fixture(scope="module")
def browser() -> Iterator[tuple[Any, Recorder]]:
    pytest.importorskip("miniwob")
    from hud_gym.suites.miniwob import MINIWOB_TASK_AREA

    env = gymnasium.make(
        "hud/Browser-v0", elements=True, observation_crop=MINIWOB_TASK_AREA, screen_size=(500, 320), max_steps=12
    )
    recorder = Recorder()
    env.unwrapped.listeners.append(recorder)
    yield env.unwrapped, recorder
    env.close()


@pytest.mark.parametrize("kind", KINDS)
def test_miniwob_click_test_2(
    kind: str, browser: tuple[Any, Recorder], replay: ReplayServer, make_agent: Callable[..., Any]
) -> None:
    env, seen = browser

    def target(request: Request) -> tuple[int, int]:
        return seen.element(request, "button", "subbtn")  # the button the instruction names

    replay.script(API[kind], "button", [click(kind, target)])
    trajectory = get_loop_thread().run(rollout("miniwob/click-test-2", make_agent(kind), env=env, seed=3))
    assert (trajectory.status, trajectory.reward, len(trajectory.steps)) == ("ok", 1.0, 1), trajectory.error


@pytest.mark.parametrize("kind", KINDS)
def test_miniwob_enter_text(
    kind: str, browser: tuple[Any, Recorder], replay: ReplayServer, make_agent: Callable[..., Any]
) -> None:
    env, seen = browser

    def word() -> str:
        return re.match(r'Enter "(.+)" into', seen.prompt).group(1)

    def field(request: Request) -> tuple[int, int]:
        return seen.element(request, "input")

    def submit(request: Request) -> tuple[int, int]:
        return seen.element(request, "button")

    if kind == "claude":  # a key the browser cannot send (an is_error result), then three tool_use blocks in one turn
        turns = [
            keys(kind, "XF86Calculator"),
            lambda r: claude_message(
                tool_use("left_click", coordinate=list(field(r))),
                tool_use("type", text=word()),
                tool_use("left_click", coordinate=list(submit(r))),
            ),
        ]
    elif kind == "operator":  # F13 cannot be sent either: the next turn carries the error
        turns = [keys(kind, "F13"), click(kind, field), lambda r: typed(kind, word()), click(kind, submit)]
    else:
        turns = [
            lambda r: chat_completion(
                "I will fill the form.\n```python\nclick(x={}, y={})\nwrite({!r})\nclick(x={}, y={})\n```".format(
                    *field(r), word(), *submit(r)
                )
            )
        ]
    script = replay.script(API[kind], "into the text field", turns)
    trajectory = get_loop_thread().run(rollout("miniwob/enter-text", make_agent(kind), env=env, seed=5))
    assert (trajectory.status, trajectory.reward) == ("ok", 1.0), (
        trajectory.error,
        [s.actions for s in trajectory.steps],
    )
    if kind == "claude":
        result = script.requests[1].body["messages"][-1]["content"][0]
        assert result["is_error"] is True and "cannot be sent to a browser page" in result["content"][0]["text"]
        assert [s.status for s in trajectory.steps] == ["action_error", "ok", "ok", "ok"]
    if kind == "operator":
        notes = [i for i in script.requests[1].body["input"] if i.get("role") == "user"]
        assert "The last action failed" in notes[0]["content"][0]["text"]


# ----------------------------------------------------------------------------- the desktop


@pytest.fixture(scope="module")
def desktop() -> Iterator[tuple[Any, Recorder]]:
    from hud_gym.controllers.ubuntu.display import DesktopNotAvailableError, require_programs

    try:
        require_programs("openbox")
    except DesktopNotAvailableError as exc:
        pytest.skip(str(exc))
    env = gymnasium.make("hud/Ubuntu-v0", in_container=False, max_steps=12)
    recorder = Recorder()
    env.unwrapped.listeners.append(recorder)
    yield env.unwrapped, recorder
    env.close()


@pytest.mark.parametrize("kind", KINDS)
def test_desktop_editor_append_line(
    kind: str, desktop: tuple[Any, Recorder], replay: ReplayServer, make_agent: Callable[..., Any]
) -> None:
    env, seen = desktop

    def first_line(request: Request) -> tuple[int, int]:
        x, y, _, _ = next(w["geometry"] for w in seen.windows if w["title"].endswith("Editor"))
        return seen.to_frame(request, x + 40, y + 34 + 9)  # 40 px into the editor's first text line

    if kind == "openai":  # the keys in a step after the click's, as the desktop-basic reference policy does: Tk
        # may handle a click after key presses that follow it in the same burst of X events
        turns = [
            click(kind, first_line),
            chat_completion("hotkey('ctrl', 'end')\nwrite('call the plumber')\nhotkey('ctrl', 's')"),
            done(kind),
        ]
    else:
        turns = [
            click(kind, first_line),
            keys(kind, "ctrl+End"),
            typed(kind, "call the plumber"),
            keys(kind, "ctrl+s"),
            done(kind),
        ]
    replay.script(API[kind], "call the plumber", turns)
    trajectory = get_loop_thread().run(rollout("desktop-basic/editor-append-line", make_agent(kind), env=env, seed=0))
    assert (trajectory.status, trajectory.reward) == ("ok", 1.0), (trajectory.error, trajectory.grade)
    assert trajectory.steps[-1].actions[-1]["type"] == "response"
