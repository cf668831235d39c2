"""Conversation bookkeeping shared by the agents: keep only the last N screenshots in a message
history, and a copy of the history for the step's trace with every image replaced by a small
placeholder (the screenshot itself is the step's observation in the trajectory).

Images are Anthropic ``image`` blocks (also inside ``tool_result`` content) and Chat Completions
``image_url`` parts. Each image the agent adds is registered with its screenshot number (0 = the
reset observation, k = the observation after step k), which is what the placeholders show.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ImageHistory"]

OMITTED = "(an earlier screenshot, omitted)"
IMAGE_TYPES = ("image", "image_url")


def _parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The content parts of a message, with the parts nested in ``tool_result`` blocks."""
    content = message.get("content")
    if not isinstance(content, list):
        return []
    parts: list[dict[str, Any]] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        parts.append(part)
        if part.get("type") == "tool_result" and isinstance(part.get("content"), list):
            parts.extend(p for p in part["content"] if isinstance(p, dict))
    return parts


class ImageHistory:
    """The screenshot numbers of the image parts of one conversation."""

    def __init__(self) -> None:
        # By id: a registered part stays referenced by its message until prune() replaces it
        # (and forgets it here), so no id is reused while it is in this table.
        self._numbers: dict[int, int] = {}

    def register(self, part: dict[str, Any], number: int) -> dict[str, Any]:
        """Remember that ``part`` (an image block or part) shows screenshot ``number``; returns it."""
        self._numbers[id(part)] = number
        return part

    def prune(self, messages: list[dict[str, Any]], keep: int | None) -> int:
        """Replace all but the ``keep`` newest images of ``messages`` with a text part (in place);
        returns how many images remain. ``None`` keeps them all."""
        seen = 0
        for message in reversed(messages):
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for holder in [content] + [
                p["content"]
                for p in content
                if isinstance(p, dict) and p.get("type") == "tool_result" and isinstance(p.get("content"), list)
            ]:
                for index in range(len(holder) - 1, -1, -1):
                    part = holder[index]
                    if isinstance(part, dict) and part.get("type") in IMAGE_TYPES:
                        seen += 1
                        if keep is not None and seen > keep:
                            self._numbers.pop(id(part), None)
                            holder[index] = {"type": "text", "text": OMITTED}
        return min(seen, keep) if keep is not None else seen

    def redacted(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A copy of ``messages`` with each image as ``{"type": "image", "screenshot": k}``."""
        return [self._copy(message) for message in messages]

    def _copy(self, value: Any) -> Any:
        if isinstance(value, dict):
            if value.get("type") in IMAGE_TYPES:
                return {"type": "image", "screenshot": self._numbers.get(id(value))}
            return {key: self._copy(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._copy(item) for item in value]
        return value

    @staticmethod
    def count(messages: list[dict[str, Any]]) -> int:
        """The images in ``messages``."""
        return sum(1 for message in messages for part in _parts(message) if part.get("type") in IMAGE_TYPES)
