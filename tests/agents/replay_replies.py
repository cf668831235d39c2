"""Reply bodies of the replay server, as the three provider APIs send them (and as the official
SDKs parse them): Anthropic Messages, OpenAI Responses, OpenAI Chat Completions; and their error
bodies."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any

_ids = itertools.count(1)


def new_id(prefix: str) -> str:
    return f"{prefix}_{next(_ids):06d}"


# ----------------------------------------------------------------------------- Anthropic


def tool_use(action: str, toolset: bool = False, **fields: Any) -> dict[str, Any]:
    """A ``tool_use`` block of the computer tool (or, ``toolset``, of a toolset member)."""
    if toolset:
        return {
            "type": "tool_use",
            "id": new_id("toolu"),
            "name": action,
            "toolset_name": "computer",
            "input": fields,
            "caller": {"type": "direct"},
        }
    return {"type": "tool_use", "id": new_id("toolu"), "name": "computer", "input": {"action": action, **fields}}


def claude_message(*blocks: dict[str, Any], model: str = "claude-test") -> dict[str, Any]:
    content = [b if b.get("type") else {"type": "text", "text": b["text"]} for b in blocks]
    stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
    return {
        "id": new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 20},
    }


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


# ----------------------------------------------------------------------------- OpenAI Responses


def computer_call(
    *actions: dict[str, Any], safety: list[dict[str, Any]] | None = None, batched: bool = False
) -> dict[str, Any]:
    """A ``computer_call`` item: one ``action``, or the GA tool's batched ``actions``."""
    item: dict[str, Any] = {
        "type": "computer_call",
        "id": new_id("cu"),
        "call_id": new_id("call"),
        "pending_safety_checks": safety or [],
        "status": "completed",
    }
    if batched:
        item["actions"] = list(actions)
    else:
        (item["action"],) = actions
    return item


def output_message(value: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": new_id("msg"),
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": value, "annotations": []}],
    }


def response(*items: dict[str, Any], model: str = "computer-use-test") -> dict[str, Any]:
    return {
        "id": new_id("resp"),
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": model,
        "output": list(items),
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 100,
            "output_tokens": 20,
            "total_tokens": 120,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


# ----------------------------------------------------------------------------- Chat Completions


def chat_completion(content: str, model: str = "vlm-test", **extra: Any) -> dict[str, Any]:
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": content},
        "finish_reason": "stop",
        "logprobs": None,
    }
    choice.update(extra.pop("choice", {}))
    return {
        "id": new_id("chatcmpl"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
        "usage": {"prompt_tokens": 200, "completion_tokens": 12, "total_tokens": 212},
        **extra,
    }


# ----------------------------------------------------------------------------- errors


@dataclass
class Fail:
    """An HTTP error reply with the provider's error body."""

    status: int
    message: str = "scripted failure"
    headers: dict[str, str] = field(default_factory=dict)

    def body(self, api: str) -> dict[str, Any]:
        if api == "anthropic":
            kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(self.status, "api_error")
            return {"type": "error", "error": {"type": kind, "message": self.message}}
        return {
            "error": {
                "message": self.message,
                "type": "server_error" if self.status >= 500 else "rate_limit",
                "code": None,
                "param": None,
            }
        }


def chat_tool_call(name: str, arguments: dict[str, Any], model: str = "vlm-test") -> dict[str, Any]:
    """A Chat Completions reply calling one function tool (as an MCP-tool agent such as HUD's gets)."""
    import json

    call = {"id": new_id("call"), "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return chat_completion("", model=model, choice={"message": message, "finish_reason": "tool_calls"})
