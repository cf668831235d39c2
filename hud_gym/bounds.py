"""Caps on every string an agent or a task controls, before it is read, stored or shown.

A window title, a clipboard, a page title, URL or element text, a prompt, a task id, an
evaluator's content and info, an agent's reply: each is written by an agent or a task, so each is
cut to a documented cap before hud-gym keeps it (in ``info``, the job store, the UI or the API).
A cut string ends with :data:`MARK` and the number of characters it had; a cut value says so with
a ``truncated`` flag (:class:`Clipped`, or :data:`TRUNCATED_KEY` in a dict). Lone surrogates
(``"\\ud800"``: not text, and refused by every encoder) become U+FFFD.

Caps (characters unless said otherwise):

========================  =========  ==========================================================
:data:`TITLE_CHARS`       1,024      a window title, a page or tab title
:data:`URL_CHARS`         8,192      a URL in ``info``
:data:`TASK_ID_CHARS`     256        a task id (longer ones are refused when the task is made)
:data:`PROMPT_CHARS`      1,048,576  a task prompt (longer ones are refused)
:data:`STRING_CHARS`      65,536     any other string in ``info``, a grade, a stored step
:data:`CLIPBOARD_BYTES`   1 MiB      a clipboard read (at most this + 1 bytes are read)
:data:`LIST_ITEMS`        1,000      items of one list (or keys of one dict) in ``info``
:data:`VALUE_CHARS`       1,048,576  everything one value (a step's ``info``) may hold
:data:`SHOWN_CHARS`       16,384     one string the UI / API shows
========================  =========  ==========================================================

Example:
    >>> clip("x" * 2000, 10).truncated
    True
    >>> bound({"title": "t" * 5000}, max_string=8)[0]["title"]
    'tttttttt… [cut from 5,000 characters]'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CLIPBOARD_BYTES",
    "CUT_MARK",
    "LIST_ITEMS",
    "MARK",
    "PROMPT_CHARS",
    "SHOWN_CHARS",
    "STRING_CHARS",
    "TASK_ID_CHARS",
    "TITLE_CHARS",
    "TRUNCATED_KEY",
    "URL_CHARS",
    "VALUE_CHARS",
    "Clipped",
    "bound",
    "bound_info",
    "clip",
    "clip_bytes",
    "clip_text",
    "sanitize",
    "sanitize_value",
]

TITLE_CHARS = 1024
"""Longest window, page or tab title kept."""
URL_CHARS = 8192
"""Longest URL kept in ``info``."""
TASK_ID_CHARS = 256
"""Longest task id (a longer one is refused)."""
PROMPT_CHARS = 1 << 20
"""Longest task prompt (a longer one is refused)."""
STRING_CHARS = 1 << 16
"""Longest other string kept in ``info``, a grade or a stored step."""
CLIPBOARD_BYTES = 1 << 20
"""Most bytes of a clipboard read (one more is read, to know it was longer)."""
LIST_ITEMS = 1000
"""Most items of one list (or keys of one dict) kept."""
VALUE_CHARS = 1 << 20
"""Most characters of strings one bounded value (a step's ``info``, a grade) holds in all."""
SHOWN_CHARS = 1 << 14
"""Longest string the UI and its API show."""

MARK = "… [cut from {:,} characters]"
"""What ends a cut string (with the length it had)."""
CUT_MARK = "… [cut]"
"""What ends a string read only in part from its source (its length unknown)."""
TRUNCATED_KEY = "truncated_fields"
"""The key of a bounded dict that lists the fields that were cut (absent when none was)."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_DEPTH = 32


@dataclass(frozen=True)
class Clipped:
    """A string cut to its cap: ``text``, whether it was cut, and the length it had."""

    text: str
    truncated: bool
    length: int


def sanitize(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (a valid surrogate pair cannot occur
    in a Python ``str``, so every surrogate code point is a lone one)."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def sanitize_value(value: Any) -> Any:
    """``value`` with :func:`sanitize` applied to every string in it (dict keys too), depth first."""
    if isinstance(value, str):
        return sanitize(value)
    if isinstance(value, dict):
        return {sanitize_value(k): sanitize_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [sanitize_value(v) for v in value]
    if isinstance(value, tuple):
        return tuple(sanitize_value(v) for v in value)
    return value


def clip(text: str, limit: int) -> Clipped:
    """``text`` sanitized and cut to ``limit`` characters (then :data:`MARK`)."""
    if len(text) <= limit:
        return Clipped(sanitize(text), False, len(text))
    return Clipped(sanitize(text[:limit]) + MARK.format(len(text)), True, len(text))


def clip_text(text: str, limit: int = STRING_CHARS) -> str:
    """The text of :func:`clip`."""
    return clip(text, limit).text


def clip_bytes(data: bytes, limit: int, encoding: str = "utf-8") -> Clipped:
    """``data`` (read as at most ``limit + 1`` bytes of a longer source) decoded with
    ``errors="replace"`` and cut to ``limit`` bytes; ``truncated`` when it had more."""
    truncated = len(data) > limit
    text = data[:limit].decode(encoding, "replace")
    if truncated:
        return Clipped(text + f"… [cut at {limit:,} bytes]", True, len(data))
    return Clipped(text, False, len(data))


@dataclass
class _Budget:
    left: int
    cut: list[str]

    def note(self, path: str) -> None:
        if len(self.cut) < 20:
            self.cut.append(path or "(value)")


def bound(
    value: Any, *, max_string: int = STRING_CHARS, max_items: int = LIST_ITEMS, max_total: int = VALUE_CHARS
) -> tuple[Any, list[str]]:
    """``value`` (JSON-like: dicts, lists, strings, numbers) with every string cut to
    ``max_string``, every list and dict to ``max_items`` entries, nesting to 32 levels and all
    strings together to ``max_total`` characters; lone surrogates replaced. Returns the bounded
    copy and the paths of what was cut (empty when nothing was). Other objects are kept as they are."""
    budget = _Budget(max_total, [])
    return _bound(value, "", 0, max_string, max_items, budget), budget.cut


def bound_info(info: dict[str, Any], **caps: int) -> dict[str, Any]:
    """``info`` through :func:`bound`; the cut fields are listed under :data:`TRUNCATED_KEY`."""
    bounded, cut = bound(info, **caps)
    if cut:
        earlier = info.get(TRUNCATED_KEY)
        bounded[TRUNCATED_KEY] = (list(earlier)[:20] if isinstance(earlier, list) else []) + cut
    return bounded


def _bound(value: Any, path: str, depth: int, max_string: int, max_items: int, budget: _Budget) -> Any:
    if isinstance(value, str):
        limit = max(0, min(max_string, budget.left))
        clipped = clip(value, limit)
        budget.left -= max(1, min(len(value), limit))
        if clipped.truncated:
            budget.note(path)
        return clipped.text
    budget.left -= 1
    if depth >= _MAX_DEPTH and isinstance(value, (dict, list, tuple)):
        budget.note(path)
        return None
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for i, (key, item) in enumerate(value.items()):
            if i >= max_items or budget.left <= 0:
                budget.note(f"{path}{{{len(value) - i} more keys}}")
                break
            name = clip_text(key, 256) if isinstance(key, str) else key
            out[name] = _bound(item, f"{path}.{name}" if path else str(name), depth + 1, max_string, max_items, budget)
        return out
    if isinstance(value, (list, tuple)):
        items: list[Any] = []
        for item in value:
            if len(items) >= max_items or budget.left <= 0:
                budget.note(f"{path}[{len(items)}:{len(value)}]")
                break
            items.append(_bound(item, f"{path}[{len(items)}]", depth + 1, max_string, max_items, budget))
        return items if isinstance(value, list) else tuple(items)
    return value
