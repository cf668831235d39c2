"""The way back: what each provider expects after our env ran the model's action.

- Anthropic: a ``tool_result`` block per ``tool_use`` (same id): the screenshot at the agent's
  frame as a base64 ``image`` block, text (``X=..,Y=..`` for ``cursor_position``), or, for an
  action the env refused (``info["action_error"]``), ``is_error`` with the message (as
  Anthropic's reference implementation does, an error carries text only).
- OpenAI Responses: a ``computer_call_output`` per ``computer_call`` (same ``call_id``) holding
  the screenshot as a ``computer_screenshot`` data URL and the pending safety checks it
  acknowledges; an action error follows as a user message, since the output has no error field.
- Chat Completions (any OpenAI-compatible server): a user message with text and an
  ``image_url`` part.

Example:
    >>> claude_tool_result("toolu_1", text="X=10,Y=20")["content"]
    [{'type': 'text', 'text': 'X=10,Y=20'}]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hud_gym.adapters.images import EncodedImage

__all__ = [
    "chat_user_message",
    "claude_image_block",
    "claude_tool_result",
    "cursor_position_text",
    "operator_call_output",
    "operator_error_message",
]


def cursor_position_text(x: int, y: int) -> str:
    """The text of a ``cursor_position`` result (Anthropic's reference format), agent frame."""
    return f"X={int(x)},Y={int(y)}"


def claude_image_block(image: EncodedImage) -> dict[str, Any]:
    """An Anthropic ``image`` content block with base64 data."""
    return {"type": "image", "source": {"type": "base64", "media_type": image.media_type, "data": image.data}}


def claude_tool_result(
    tool_use_id: str,
    *,
    image: EncodedImage | None = None,
    text: str | None = None,
    error: str | None = None,
    toolset_name: str | None = None,
) -> dict[str, Any]:
    """The ``tool_result`` block answering ``tool_use_id``.

    Args:
        image: the screenshot after the action (at the agent's frame).
        text: text output (e.g. :func:`cursor_position_text`).
        error: the env refused the action: an ``is_error`` result with this text (and nothing else).
        toolset_name: the ``toolset_name`` of the paired ``tool_use`` (computer toolset members).
    """
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id}
    if error is not None:
        block["content"] = [{"type": "text", "text": error or "the action failed"}]
        block["is_error"] = True
    else:
        content: list[dict[str, Any]] = []
        if text:
            content.append({"type": "text", "text": text})
        if image is not None:
            content.append(claude_image_block(image))
        block["content"] = content
    if toolset_name:
        block["toolset_name"] = toolset_name
    return block


def operator_call_output(
    call_id: str, image: EncodedImage, acknowledged_safety_checks: Iterable[Any] = ()
) -> dict[str, Any]:
    """The ``computer_call_output`` input item answering ``call_id``: the screenshot as a data
    URL and the safety checks acknowledged (SDK objects or dicts with ``id``, ``code``, ``message``)."""
    item: dict[str, Any] = {
        "type": "computer_call_output",
        "call_id": call_id,
        "output": {"type": "computer_screenshot", "image_url": image.data_url},
    }
    checks = [_check(c) for c in acknowledged_safety_checks]
    if checks:
        item["acknowledged_safety_checks"] = checks
    return item


def _check(check: Any) -> dict[str, Any]:
    if not isinstance(check, dict):
        check = {"id": check.id, "code": getattr(check, "code", None), "message": getattr(check, "message", None)}
    return {k: v for k, v in check.items() if k in ("id", "code", "message") and v is not None}


def operator_error_message(error: str) -> dict[str, Any]:
    """A user message telling the model that its last action failed (after the call output)."""
    return {"role": "user", "content": [{"type": "input_text", "text": f"The last action failed: {error}"}]}


def chat_user_message(text: str | None, image: EncodedImage | None) -> dict[str, Any]:
    """A Chat Completions user message with ``text`` and the screenshot as an ``image_url`` part."""
    content: list[dict[str, Any]] = []
    if text:
        content.append({"type": "text", "text": text})
    if image is not None:
        content.append({"type": "image_url", "image_url": {"url": image.data_url}})
    return {"role": "user", "content": content}
