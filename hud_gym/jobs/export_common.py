"""What the exporters share: the names of the formats and image modes, the source of an export
(a job or trajectories), screenshot paths and ``data:`` URLs, and captions for actions."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Union

from hud_gym.jobs.rows import INITIAL_OBSERVATION_REF
from hud_gym.trajectory import Trajectory

if TYPE_CHECKING:
    from hud_gym.jobs.job import Job

__all__ = [
    "EXPORT_FORMATS",
    "IMAGE_MODES",
    "VIDEO_FORMATS",
    "ExportFormat",
    "ImageMode",
    "Progress",
    "Source",
    "VideoFormat",
    "describe_action",
    "describe_actions",
    "image_data_url",
]

ImageMode = Literal["path", "base64", "none"]
"""How screenshots appear in an export: absolute file paths, inline ``data:`` URLs, or left out."""
VideoFormat = Literal["mp4", "gif", "webp"]
ExportFormat = Literal["jsonl", "hud", "video"]

IMAGE_MODES: tuple[str, ...] = ("path", "base64", "none")
VIDEO_FORMATS: tuple[str, ...] = ("mp4", "gif", "webp")
EXPORT_FORMATS: tuple[str, ...] = ("jsonl", "hud", "video")

Progress = Callable[[int, int], Any]
"""``on_progress(done, total)``, called after each trajectory."""
Source = Union["Job", Sequence[Trajectory]]
"""A job (its finished trajectories are loaded) or trajectories whose screenshots are files."""

_MIME = {".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".webp": "image/webp", ".gif": "image/gif"}


def _check_choice(name: str, value: str, choices: Sequence[str]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}; got {value!r}")


def _trajectories(source: Source) -> list[Trajectory]:
    if hasattr(source, "load_trajectories"):
        return list(source.load_trajectories())
    trajectories = list(source)
    for item in trajectories:
        if not isinstance(item, Trajectory):
            raise TypeError(f"expected a Job or Trajectory objects, got {type(item).__name__}")
    return trajectories


def _initial_ref(trajectory: Trajectory) -> str | None:
    return trajectory.metadata.get(INITIAL_OBSERVATION_REF)


def _existing(ref: str | None) -> Path | None:
    if not ref:
        return None
    path = Path(ref)
    return path if path.is_file() else None


def image_data_url(path: str | os.PathLike[str]) -> str:
    """The image file at ``path`` as a ``data:image/...;base64,`` URL (bytes as stored, not re-encoded)."""
    path = Path(path)
    mime = _MIME.get(path.suffix.lower(), "application/octet-stream")
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def _image(ref: str | None, images: str) -> str | None:
    path = _existing(ref)
    if path is None or images == "none":
        return None
    return image_data_url(path) if images == "base64" else str(path)


def _safe_name(text: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "-_." else "_" for c in text).strip("._")
    return cleaned[:60] or "task"


# ---------------------------------------------------------------------- human-readable actions


def _point(value: Any) -> str:
    if isinstance(value, dict) and "x" in value and "y" in value:
        return f"({value['x']}, {value['y']})"
    return "the cursor"


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_action(action: dict[str, Any]) -> str:
    """One CLA action (its JSON form) as a short phrase, e.g. ``click left at (30, 142)``.

    Example:
        >>> describe_action({"type": "press", "keys": ["ctrl", "a"]})
        'press ctrl+a'
    """
    kind = action.get("type")
    hold = action.get("hold_keys")
    holding = f" holding {'+'.join(hold)}" if hold else ""
    if kind == "click":
        pattern = action.get("pattern")
        times = f" x{len(pattern) + 1}" if pattern else ""
        return f"click {action.get('button', 'left')}{times} at {_point(action.get('point'))}{holding}"
    if kind in ("press", "keydown", "keyup"):
        return f"{kind} {'+'.join(str(k) for k in action.get('keys') or [])}"
    if kind == "type":
        return f"type {json.dumps(_clip(str(action.get('text', ''))), ensure_ascii=False)}" + (
            " + enter" if action.get("enter_after") else ""
        )
    if kind == "scroll":
        scroll = action.get("scroll") or {}
        return f"scroll ({scroll.get('x', 0)}, {scroll.get('y', 0)}) at {_point(action.get('point'))}{holding}"
    if kind == "move":
        if action.get("offset"):
            return f"move by {_point(action['offset'])}"
        return f"move to {_point(action.get('point'))}"
    if kind == "drag":
        path = action.get("path") or []
        ends = f"{_point(path[0])} → {_point(path[-1])}" if path else "?"
        return f"drag {ends}{holding}"
    if kind == "wait":
        return f"wait {action.get('time', 0)} ms"
    if kind == "response":
        return f"respond {json.dumps(_clip(str(action.get('text', ''))), ensure_ascii=False)}"
    if kind in ("screenshot", "position"):
        return kind
    if kind == "custom":
        args = action.get("args")
        return f"custom {action.get('action', '?')}" + (
            f" {_clip(json.dumps(args, ensure_ascii=False), 40)}" if args else ""
        )
    if "value" in action and len(action) == 1:  # an action the policy returned in no CLA form
        return f"unparsed action {_clip(str(action['value']), 40)}"
    return _clip(json.dumps(action, ensure_ascii=False))


def describe_actions(actions: Sequence[dict[str, Any]]) -> str:
    """A step's actions, ``; ``-separated (``no action`` when empty)."""
    return "; ".join(describe_action(a) for a in actions) if actions else "no action"
