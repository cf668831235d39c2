"""The page elements kept with a recorded frame, so the UI can draw them on it.

An env made with ``elements=True`` reports ``info["elements"]`` (``tag``, ``text``, ``id``,
``bbox`` = ``[x, y, width, height]`` in observation pixels, ...). The recorder keeps a bounded,
compact copy with each step (``info["elements"]``: the elements of the frame after the step) and
with the reset (the run's ``metadata["initial_elements"]``): at most :data:`MAX_ELEMENTS`, each
with its box, tag, id and the start of its text (page text is page-controlled: bounded here,
shown as text by the UI).

Example:
    >>> compact_elements([{"tag": "button", "text": "Submit", "bbox": [10, 20, 40, 12.34], "value": ""}])
    [{'bbox': [10.0, 20.0, 40.0, 12.3], 'tag': 'button', 'text': 'Submit'}]
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["MAX_ELEMENTS", "MAX_ELEMENT_TEXT", "compact_elements"]

MAX_ELEMENTS = 100
MAX_ELEMENT_TEXT = 40
_KEPT_STRINGS = (("tag", 24), ("text", MAX_ELEMENT_TEXT), ("id", 64), ("role", 24))
_KEPT_NUMBERS = ("ref", "mark")


def _box(value: Any) -> list[float] | None:
    if not isinstance(value, (list, tuple)) or len(value) != 4:
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value):
        return None
    return [round(float(v), 1) for v in value]


def compact_elements(elements: Any) -> list[dict[str, Any]] | None:
    """The first :data:`MAX_ELEMENTS` elements of ``elements`` that have a box, each cut to its
    box, tag, text, id, role and ref / mark number (strings bounded); ``None`` when
    ``elements`` is not a list."""
    if not isinstance(elements, (list, tuple)):
        return None
    kept: list[dict[str, Any]] = []
    for element in elements:
        if len(kept) >= MAX_ELEMENTS:
            break
        if not isinstance(element, dict):
            continue
        box = _box(element.get("bbox"))
        if box is None:
            continue
        item: dict[str, Any] = {"bbox": box}
        for key, limit in _KEPT_STRINGS:
            value = element.get(key)
            if isinstance(value, str) and value:
                item[key] = " ".join(value[: limit * 4].split())[:limit]
        for key in _KEPT_NUMBERS:
            value = element.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                item[key] = value
        kept.append(item)
    return kept
