"""The browser env's opt-in observation keys of its page's elements (``axtree=True``,
``som=True``; read by :mod:`hud_gym.controllers.browser.accessibility`):

- ``obs["axtree"]``: the pruned accessibility tree as JSON text (a list of nodes, each ``id``,
  ``role``, ``name``, ``depth``, ``bbox`` in observation pixels and, when set, ``value``, ``text``
  and states such as ``focused`` / ``checked`` / ``disabled``), at most :data:`AXTREE_CHARS`
  characters (whole nodes; ``info["axtree_truncated"]`` when some were left out).
- ``obs["som"]``: the screenshot with each mark of ``info["som"]`` (``id``, ``tag``, ``text``,
  ``bbox`` in observation pixels) boxed and numbered with its id; ``click_element`` /
  ``type_field`` with ``{"node": id}`` act on it.

Example:
    >>> axtree_text([{"id": 7, "role": "button", "name": "OK"}])[0]
    '[{"id":7,"role":"button","name":"OK"}]'
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from gymnasium import spaces

from hud_gym.core.scaling import ScreenMapping
from hud_gym.spaces import sanitize_text, text_space

__all__ = ["AXTREE_CHARS", "axtree_text", "draw_marks", "map_boxes", "node_spaces"]

AXTREE_CHARS = 1 << 16
"""Characters of ``obs["axtree"]`` (its ``Text`` space's ``max_length``)."""

_COLOURS = ((230, 25, 75), (60, 180, 75), (0, 130, 200), (245, 130, 48), (145, 30, 180), (0, 128, 128))


def node_spaces(axtree: bool, som: bool, width: int, height: int) -> dict[str, spaces.Space[Any]]:
    """The observation keys the options add to the ``Dict`` space."""
    added: dict[str, spaces.Space[Any]] = {}
    if axtree:
        added["axtree"] = text_space(AXTREE_CHARS)
    if som:
        added["som"] = spaces.Box(0, 255, (height, width, 3), np.uint8)
    return added


def map_boxes(items: list[dict[str, Any]], mapping: ScreenMapping, size: tuple[int, int]) -> list[dict[str, Any]]:
    """``items`` with their ``bbox`` mapped from screen to observation pixels, those wholly outside
    the observation (a crop) left out."""
    width, height = size
    visible = []
    for item in items:
        x, y, w, h = mapping.box(*item["bbox"])
        if x + w <= 0 or y + h <= 0 or x >= width or y >= height:
            continue
        item["bbox"] = [round(x, 1), round(y, 1), round(w, 1), round(h, 1)]
        visible.append(item)
    return visible


def axtree_text(nodes: list[dict[str, Any]], limit: int = AXTREE_CHARS) -> tuple[str, bool]:
    """``nodes`` as compact JSON of at most ``limit`` characters of the text space (whole nodes:
    those past the limit left out) and whether some were."""
    parts: list[str] = []
    used = 2
    for node in nodes:
        part = sanitize_text(json.dumps(node, ensure_ascii=False, separators=(",", ":")), limit)
        if used + len(part) + (1 if parts else 0) > limit:
            return "[" + ",".join(parts) + "]", True
        used += len(part) + (1 if parts else 0)
        parts.append(part)
    return "[" + ",".join(parts) + "]", False


def draw_marks(pixels: np.ndarray, marks: list[dict[str, Any]]) -> np.ndarray:
    """A copy of ``pixels`` with each mark's box outlined and its id written at its top left."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.fromarray(np.ascontiguousarray(pixels[..., :3]))
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default()
    for i, mark in enumerate(marks):
        colour = _COLOURS[i % len(_COLOURS)]
        x, y, w, h = mark["bbox"]
        draw.rectangle((x, y, x + max(w, 1) - 1, y + max(h, 1) - 1), outline=colour)
        label = str(mark["id"])
        left, top, right, bottom = draw.textbbox((x, y), label, font=font)
        draw.rectangle((left, top, right, bottom), fill=colour)
        draw.text((x, y), label, fill=(255, 255, 255), font=font)
    return np.asarray(image, dtype=np.uint8).copy()
