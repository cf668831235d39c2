"""What the replay server checks in every request our agents send; each check returns the
problems it found (empty when the request is right).

- Anthropic Messages: headers (key, version, the beta flag of the tool), roles alternating from
  ``user``, every ``tool_use`` answered by id in the next user turn (and nothing else answered),
  tool results first in their turn, ``toolset_name`` echoed, every image the tool's display size,
  at most N images, and a screenshot in the newest turn for every result that needs one.
- OpenAI Responses: the computer tool and ``truncation``, the first turn's prompt and screenshot,
  then ``previous_response_id`` chaining, a ``computer_call_output`` for every pending call, its
  screenshot at the display size, the pending safety checks acknowledged.
- Chat Completions: roles (system first, user/assistant alternating, ending with user), the
  newest turn's screenshot, every image the expected size, at most N images.
"""

from __future__ import annotations

import base64
import io
from typing import Any

from PIL import Image

BETA_FLAGS = {"computer_20250124": "computer-use-2025-01-24", "computer_20251124": "computer-use-2025-11-24"}


def image_size(data: str) -> tuple[int, int] | str:
    """``(width, height)`` of base64 or ``data:`` URL image data, or a problem."""
    if data.startswith("data:"):
        head, _, data = data.partition(",")
        if ";base64" not in head:
            return f"image data URL is not base64: {head!r}"
    try:
        with Image.open(io.BytesIO(base64.b64decode(data, validate=True))) as image:
            return image.size
    except Exception as exc:
        return f"undecodable image: {exc}"


def _size_problem(data: str, frame: tuple[int, int] | None, where: str) -> list[str]:
    size = image_size(data)
    if isinstance(size, str):
        return [f"{where}: {size}"]
    if frame is not None and tuple(size) != tuple(frame):
        return [f"{where}: image is {size[0]}x{size[1]}, the agent's frame is {frame[0]}x{frame[1]}"]
    return []


# ----------------------------------------------------------------------------- Anthropic


def anthropic_frame(body: dict[str, Any]) -> tuple[int, int] | None:
    tool = (body.get("tools") or [{}])[0]
    if "display_width_px" in tool:
        return tool["display_width_px"], tool["display_height_px"]
    return None


def _anthropic_images(content: Any, skip: frozenset[str] = frozenset()) -> list[str]:
    """The image data of ``content``, but not of the tool results whose id is in ``skip``."""
    out = []
    for block in content if isinstance(content, list) else []:
        if block.get("type") == "image":
            out.append(block["source"]["data"])
        if block.get("type") == "tool_result" and block.get("tool_use_id") not in skip:
            out.extend(_anthropic_images(block.get("content")))
    return out


def check_anthropic(body: dict[str, Any], headers: Any, max_images: int | None) -> list[str]:
    problems = _anthropic_headers(headers)
    tools = body.get("tools") or []
    if len(tools) != 1:
        return problems + [f"expected one computer tool, got {tools!r}"]
    problems += _anthropic_tool(tools[0], headers)
    if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1 or not body.get("model"):
        problems.append("model and max_tokens are required")
    messages = body.get("messages") or []
    if not messages or messages[-1].get("role") != "user":
        return problems + ["messages must end with a user turn"]
    problems += _alternating_roles(messages)
    tool_uses = _anthropic_tool_uses(messages, problems)
    problems += _anthropic_image_problems(body, messages, tool_uses, max_images)
    return problems + _anthropic_last_turn(messages, tool_uses)


def _anthropic_headers(headers: Any) -> list[str]:
    problems = []
    if not headers.get("x-api-key") and not (headers.get("authorization") or "").startswith("Bearer "):
        problems.append("no API key (x-api-key or a bearer token)")
    if not headers.get("anthropic-version"):
        problems.append("no anthropic-version header")
    return problems


def _anthropic_tool(tool: dict[str, Any], headers: Any) -> list[str]:
    kind = tool.get("type")
    problems = []
    if kind in BETA_FLAGS:
        if BETA_FLAGS[kind] not in (headers.get("anthropic-beta") or ""):
            problems.append(f"tool {kind} without the beta flag {BETA_FLAGS[kind]}")
        if tool.get("name") != "computer":
            problems.append("the computer tool must be named 'computer'")
    elif kind != "computer_toolset_20260801":
        problems.append(f"unknown tool type {kind!r}")
    return problems


def _alternating_roles(messages: list[dict[str, Any]]) -> list[str]:
    problems = []
    for index, message in enumerate(messages):
        expected = "user" if index % 2 == 0 else "assistant"
        if message.get("role") != expected:
            problems.append(f"message {index} has role {message.get('role')!r}, expected {expected!r}")
    return problems


def _anthropic_tool_uses(messages: list[dict[str, Any]], problems: list[str]) -> dict[str, dict[str, Any]]:
    """Every ``tool_use`` by id; the problems of their answers are added to ``problems``."""
    tool_uses: dict[str, dict[str, Any]] = {}
    for index, message in enumerate(messages):
        content = message.get("content") if isinstance(message.get("content"), list) else []
        if message["role"] != "assistant":
            continue
        asked = [b for b in content if b.get("type") == "tool_use"]
        tool_uses.update({b["id"]: b for b in asked})
        answer = messages[index + 1]["content"] if index + 1 < len(messages) else []
        problems += _anthropic_answer_problems(index, asked, answer)
    return tool_uses


def _anthropic_answer_problems(index: int, asked: list[dict[str, Any]], answer: list[dict[str, Any]]) -> list[str]:
    problems = []
    results = [b for b in answer if b.get("type") == "tool_result"]
    if sorted(b["tool_use_id"] for b in results) != sorted(b["id"] for b in asked):
        problems.append(
            f"message {index + 1} answers {[b['tool_use_id'] for b in results]}, "
            f"message {index} asked {[b['id'] for b in asked]}"
        )
    if results and any(b.get("type") != "tool_result" for b in answer[: len(results)]):
        problems.append(f"message {index + 1}: tool results must come first")
    for result in results:
        use = next((b for b in asked if b["id"] == result["tool_use_id"]), None)
        if use is not None and use.get("toolset_name") and result.get("toolset_name") != use["toolset_name"]:
            problems.append(f"tool_result {result['tool_use_id']} lacks toolset_name {use['toolset_name']!r}")
    return problems


def _anthropic_image_problems(
    body: dict[str, Any],
    messages: list[dict[str, Any]],
    tool_uses: dict[str, dict[str, Any]],
    max_images: int | None,
) -> list[str]:
    problems = []
    frame = anthropic_frame(body)
    zooms = frozenset(
        i for i, use in tool_uses.items() if (use.get("input", {}).get("action") or use.get("name")) == "zoom"
    )
    images = [
        data for message in messages for data in _anthropic_images(message.get("content"), zooms)
    ]  # zooms: any size
    sizes = {image_size(d) for d in images if not isinstance(image_size(d), str)}
    for data in images:
        problems += _size_problem(data, frame, "image")
    if frame is None and len(sizes) > 1:
        problems.append(f"images of several sizes: {sorted(sizes)}")
    if max_images is not None and len(images) > max_images:
        problems.append(f"{len(images)} images in the history, at most {max_images} expected")
    return problems


def _anthropic_last_turn(messages: list[dict[str, Any]], tool_uses: dict[str, dict[str, Any]]) -> list[str]:
    problems = []
    last = messages[-1]["content"]
    if len(messages) == 1 and not (
        any(b.get("type") == "text" and b["text"].strip() for b in last) and _anthropic_images(last)
    ):
        problems.append("the first user turn needs the task text and a screenshot")
    for result in (b for b in last if b.get("type") == "tool_result"):
        use = tool_uses.get(result["tool_use_id"], {})
        action = use.get("input", {}).get("action") or use.get("name")
        if result.get("is_error"):
            continue
        texts = [b.get("text", "") for b in result.get("content") or [] if b.get("type") == "text"]
        if action == "cursor_position":
            if not any(t.startswith("X=") for t in texts):
                problems.append(f"cursor_position result {result['tool_use_id']} has no 'X=..,Y=..' text")
        elif len(_anthropic_images(result.get("content"))) != 1:
            problems.append(f"tool_result {result['tool_use_id']} ({action}) has no screenshot")
    return problems


# ----------------------------------------------------------------------------- Responses


def responses_frame(body: dict[str, Any]) -> tuple[int, int] | None:
    tool = (body.get("tools") or [{}])[0]
    return (tool["display_width"], tool["display_height"]) if "display_width" in tool else None


def check_responses(body: dict[str, Any], headers: Any, conversation: dict[str, Any] | None) -> list[str]:
    problems: list[str] = []
    if not (headers.get("authorization") or "").startswith("Bearer "):
        problems.append("no bearer token")
    tools = body.get("tools") or []
    if len(tools) != 1 or tools[0].get("type") not in ("computer_use_preview", "computer"):
        return problems + [f"expected one computer tool, got {tools!r}"]
    if tools[0]["type"] == "computer_use_preview":
        if tools[0].get("environment") not in ("browser", "linux", "ubuntu", "windows", "mac"):
            problems.append(f"bad environment {tools[0].get('environment')!r}")
        if body.get("truncation") != "auto":
            problems.append("computer_use_preview needs truncation='auto'")
    frame = responses_frame(body)
    items = body.get("input") or []
    if conversation is None:
        if body.get("previous_response_id"):
            return problems + [f"unknown previous_response_id {body['previous_response_id']!r}"]
        return problems + _responses_first_turn(items, frame)
    if body.get("previous_response_id") != conversation["last_id"]:
        problems.append(
            f"previous_response_id {body.get('previous_response_id')!r}, expected {conversation['last_id']!r}"
        )
    outputs = [i for i in items if i.get("type") == "computer_call_output"]
    if sorted(o["call_id"] for o in outputs) != sorted(conversation["pending"]):
        problems.append(f"outputs for {[o['call_id'] for o in outputs]}, pending calls {conversation['pending']}")
    for output in outputs:
        problems += _responses_output_problems(output, frame, conversation)
    return problems


def _responses_first_turn(items: list[dict[str, Any]], frame: tuple[int, int] | None) -> list[str]:
    problems = []
    user = [i for i in items if i.get("role") == "user"]
    parts = user[0]["content"] if user else []
    if not any(p.get("type") == "input_text" and p["text"].strip() for p in parts):
        problems.append("the first turn needs the task text")
    shots = [p for p in parts if p.get("type") == "input_image"]
    if len(shots) != 1:
        problems.append("the first turn needs one screenshot")
    for shot in shots:
        problems += _size_problem(shot["image_url"], frame, "first screenshot")
    return problems


def _responses_output_problems(
    output: dict[str, Any], frame: tuple[int, int] | None, conversation: dict[str, Any]
) -> list[str]:
    shot = output.get("output") or {}
    if shot.get("type") != "computer_screenshot" or not shot.get("image_url"):
        return [f"output {output['call_id']} has no computer_screenshot"]
    problems = _size_problem(shot["image_url"], frame, f"output {output['call_id']}")
    expected = sorted(c["id"] for c in conversation["checks"].get(output["call_id"], []))
    acknowledged = sorted(c["id"] for c in output.get("acknowledged_safety_checks") or [])
    if acknowledged != expected:
        problems.append(f"output {output['call_id']} acknowledges {acknowledged}, pending checks {expected}")
    return problems


# ----------------------------------------------------------------------------- Chat Completions


def check_chat(body: dict[str, Any], headers: Any, frame: tuple[int, int] | None, max_images: int | None) -> list[str]:
    problems: list[str] = []
    if not (headers.get("authorization") or "").startswith("Bearer "):
        problems.append("no bearer token")
    messages = list(body.get("messages") or [])
    if messages and messages[0].get("role") == "system":
        messages = messages[1:]
    for index, message in enumerate(messages):
        expected = "user" if index % 2 == 0 else "assistant"
        if message.get("role") != expected:
            problems.append(f"message {index} has role {message.get('role')!r}, expected {expected!r}")
    if not messages or messages[-1].get("role") != "user":
        return problems + ["messages must end with a user turn"]
    images = [
        p["image_url"]["url"]
        for m in messages
        if isinstance(m.get("content"), list)
        for p in m["content"]
        if p.get("type") == "image_url"
    ]
    last = messages[-1]["content"]
    if not any(p.get("type") == "image_url" for p in last):
        problems.append("the newest user turn has no screenshot")
    for url in images:
        problems += _size_problem(url, frame, "image")
    sizes = {image_size(u) for u in images if not isinstance(image_size(u), str)}
    if len(sizes) > 1:
        problems.append(f"images of several sizes: {sorted(sizes)}")
    if max_images is not None and len(images) > max_images:
        problems.append(f"{len(images)} images in the chat, at most {max_images} expected")
    return problems


def check_chat_tools(body: dict[str, Any], headers: Any, tools: set[str]) -> list[str]:
    """The rules of a Chat Completions conversation driven through function tools (HUD's
    ``OpenAIChatAgent`` over MCP tools): a bearer token, the offered ``tools``, the first turn the
    user's, and every tool call of an assistant turn answered by a ``tool`` message with its id
    before the next assistant turn."""
    problems: list[str] = []
    if not (headers.get("authorization") or "").startswith("Bearer "):
        problems.append("no bearer token")
    offered = {t.get("function", {}).get("name") for t in body.get("tools") or []}
    if not tools <= offered:
        problems.append(f"tools {sorted(tools - offered)} not offered (offered: {sorted(map(str, offered))})")
    messages = [m for m in body.get("messages") or [] if m.get("role") != "system"]
    if not messages or messages[0].get("role") != "user":
        problems.append("the conversation must open with a user turn")
    pending: set[str] = set()
    for index, message in enumerate(messages):
        if message.get("role") == "assistant":
            if pending:
                problems.append(f"message {index}: tool calls {sorted(pending)} were never answered")
            pending = {c["id"] for c in message.get("tool_calls") or []}
        elif message.get("role") == "tool":
            if message.get("tool_call_id") not in pending:
                problems.append(f"message {index}: a tool result for an unknown call {message.get('tool_call_id')!r}")
            pending.discard(message.get("tool_call_id"))
    if pending:
        problems.append(f"tool calls {sorted(pending)} were never answered")
    return problems
