"""The tools of a hud-gym MCP server, over one :class:`~hud_gym.protocols.session.ServedEnv`.

==================  =====================================================================
tool                what it does
==================  =====================================================================
``setup``           start an episode on a task (HUD's ``setup``): its prompt and screenshot
``reset``           start an episode on the served task (or a draw from the served task set)
``computer``        one action in Anthropic's computer-use shape (``action``, ``coordinate``, ...)
``openai_computer`` one action in OpenAI's computer-use shape (``type``, ``x``, ``y``, ...)
``act``             CLA actions as JSON (one dict or a list), as ``env.step`` takes them
``custom``          a gym's custom action by name (``goto``, ``click_element``, ...)
``response``        the final answer (a CLA ``response``): the episode ends and is graded
``screenshot``      the current screen (no step)
``evaluate``        grade the current state now (HUD's ``evaluate``)
==================  =====================================================================

Every tool that steps or resets answers with the step's report as JSON text and as structured
content (:class:`~hud_gym.protocols.session.StepReport`: ``reward`` is ``null`` when the step was
not graded or grading failed, ``status`` says why) and the screenshot as PNG image content. A
malformed action, an unknown task or a step before ``setup`` is a tool error (``isError``) whose
text names the problem. Points are in the screenshot's pixels.
"""

from __future__ import annotations

import base64
import json
from typing import Annotated, Any, Literal

from gymnasium.error import ResetNeeded
from pydantic import Field

from hud_gym.actions import ActionError, CustomAction, ResponseAction, ScreenshotFetch
from hud_gym.adapters.claude import CLAUDE_ACTIONS, ClaudeAdapter
from hud_gym.adapters.operator import OPERATOR_ACTIONS, OperatorAdapter
from hud_gym.bounds import STRING_CHARS, clip_text
from hud_gym.errors import HudGymError
from hud_gym.protocols.session import TASK_REFERENCE_CHARS, ServedEnv, StepReport, encode_png

__all__ = ["TOOL_NAMES", "add_tools", "tool_result"]

TOOL_NAMES = (
    "setup",
    "reset",
    "computer",
    "openai_computer",
    "act",
    "custom",
    "response",
    "screenshot",
    "evaluate",
)
"""Every tool a hud-gym MCP server lists."""

Text = Annotated[str, Field(max_length=STRING_CHARS)]
Name = Annotated[str, Field(max_length=256)]
Pair = Annotated[list[int], Field(min_length=2, max_length=2)]
ClaudeName = Literal[CLAUDE_ACTIONS]  # type: ignore[valid-type]
OpenAIName = Literal[OPERATOR_ACTIONS]  # type: ignore[valid-type]
TaskReference = Annotated[str, Field(max_length=TASK_REFERENCE_CHARS)]
Seed = Annotated[int, Field(ge=0, lt=2**31)]


def tool_result(report: StepReport | None, screenshot: Any = None, *, error: str | None = None) -> Any:
    """A ``CallToolResult``: the report as JSON text and structured content, the screenshot as PNG."""
    from mcp.types import CallToolResult, ImageContent, TextContent

    if error is not None:
        return CallToolResult(content=[TextContent(type="text", text=clip_text(error, 4096))], is_error=True)
    content: list[Any] = []
    data = report.model_dump(mode="json") if report is not None else None
    if data is not None:
        content.append(TextContent(type="text", text=json.dumps(data, ensure_ascii=False)))
    if screenshot is not None:
        png = base64.b64encode(encode_png(screenshot)).decode("ascii")
        content.append(ImageContent(type="image", data=png, mime_type="image/png"))
    return CallToolResult(content=content, structured_content=data)


async def _guarded(served: ServedEnv, run: Any) -> Any:
    try:
        report = await run()
    except (ActionError, ValueError, ResetNeeded, HudGymError) as exc:
        return tool_result(None, error=f"{type(exc).__name__}: {exc}")
    return tool_result(report, served.screenshot)


def add_tools(server: Any, served: ServedEnv) -> None:
    """Register the tools of the module docstring on ``server`` (an ``mcp`` ``MCPServer``)."""

    def tool(description: str) -> Any:
        return server.tool(description=description, structured_output=False)

    claude = ClaudeAdapter(follow_env=True)
    operator = OperatorAdapter(follow_env=True)

    def adapted(adapter: Any, data: dict[str, Any]) -> list[Any]:
        converted = adapter.adapt({k: v for k, v in data.items() if v is not None})
        adapter.memory.clear()  # the adapter's history is the env's to keep, not the server's
        return converted if isinstance(converted, list) else [converted]

    @tool(description="Start an episode on a task: an id of the served task set, or '<task set>/<id>'.")
    async def setup(task: TaskReference, seed: Seed | None = None) -> Any:
        return await _guarded(served, lambda: served.reset(task, seed))

    @tool(description="Start an episode on the served task (or a draw from the served task set).")
    async def reset(seed: Seed | None = None) -> Any:
        return await _guarded(served, lambda: served.reset(None, seed))

    @tool(description="One action in Anthropic's computer-use shape; points in screenshot pixels.")
    async def computer(
        action: ClaudeName,
        coordinate: Pair | None = None,
        start_coordinate: Pair | None = None,
        text: Text | None = None,
        scroll_direction: Literal["up", "down", "left", "right"] | None = None,
        scroll_amount: Annotated[int, Field(ge=0, le=1000)] | None = None,
        duration: Annotated[float, Field(ge=0, le=300)] | None = None,
        region: Annotated[list[int], Field(min_length=4, max_length=4)] | None = None,
    ) -> Any:
        data = {
            "action": action,
            "coordinate": coordinate,
            "start_coordinate": start_coordinate,
            "text": text,
            "scroll_direction": scroll_direction,
            "scroll_amount": scroll_amount,
            "duration": duration,
            "region": region,
        }
        return await _guarded(served, lambda: served.step(adapted(claude, data)))

    @tool(description="One action in OpenAI's computer-use shape (a computer_call action's fields).")
    async def openai_computer(
        type: OpenAIName,  # noqa: A002  (OpenAI's field name)
        x: int | None = None,
        y: int | None = None,
        button: Literal["left", "right", "wheel", "back", "forward"] | None = None,
        keys: Annotated[list[Name], Field(max_length=32)] | None = None,
        text: Text | None = None,
        scroll_x: int | None = None,
        scroll_y: int | None = None,
        path: Annotated[list[dict[str, int]], Field(max_length=1000)] | None = None,
        ms: Annotated[int, Field(ge=0, le=300_000)] | None = None,
    ) -> Any:
        data = {"type": type, "x": x, "y": y, "button": button, "keys": keys, "text": text}
        data |= {"scroll_x": scroll_x, "scroll_y": scroll_y, "path": path, "ms": ms}
        return await _guarded(served, lambda: served.step(adapted(operator, data)))

    @tool(description="CLA actions as JSON: one action dict ({'type': 'click', 'point': {...}}) or a list.")
    async def act(actions: dict[str, Any] | Annotated[list[dict[str, Any]], Field(max_length=100)]) -> Any:
        return await _guarded(served, lambda: served.step(actions))

    @tool(description="A gym's custom action by name, with its arguments (e.g. goto {'url': ...}).")
    async def custom(action: Name, args: dict[str, Any] | None = None) -> Any:
        return await _guarded(served, lambda: served.step(CustomAction(action=action, args=args)))

    @tool(description="The final answer: the episode ends and the task's evaluator grades it.")
    async def response(text: Text) -> Any:
        return await _guarded(served, lambda: served.step(ResponseAction(text=text)))

    @tool(description="The current screen as an image (a screenshot step when an episode is open).")
    async def screenshot() -> Any:
        if served.started and not (served.last.terminated or served.last.truncated):
            return await _guarded(served, lambda: served.step(ScreenshotFetch()))
        if served.screenshot is None:
            return tool_result(None, error="no screen yet: call setup or reset first")
        return tool_result(served.last, served.screenshot)

    @tool(description="Grade the current state now; reward null with status eval_error when grading failed.")
    async def evaluate() -> Any:
        return await _guarded(served, served.evaluate)
