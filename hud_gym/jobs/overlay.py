"""A step's actions drawn on the frame the agent saw: where a click landed (and with which button),
a drag's path, a scroll's direction, a move's target. Typed text and keys have no place on the
frame; the caption says them (:func:`~hud_gym.jobs.export_common.describe_actions`).

Coordinates are the actions' own: observation pixels, the stored frame's pixels. Two renderings
with one look: :func:`overlay_svg` (an SVG layer over an ``<img>``, for the HTML report) and
:func:`draw_overlay` (drawn into the pixels with Pillow, for the video exports). The app
(``hud_gym/ui/static/app.js``) draws the same marks on a canvas.

Example:
    >>> overlay_svg([{"type": "click", "point": {"x": 10, "y": 20}}], 160, 210)[:60]
    '<svg class="overlay" viewBox="0 0 160 210" preserveAspectRat'
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["BUTTON_COLOURS", "draw_overlay", "overlay_svg"]

BUTTON_COLOURS = {"left": "#ff0000", "right": "#0057ff", "middle": "#ff9800"}
DRAG, SCROLL = "#ff00ff", "#00a040"


def _xy(point: Any) -> tuple[float, float] | None:
    if (
        isinstance(point, dict)
        and isinstance(point.get("x"), (int, float))
        and isinstance(point.get("y"), (int, float))
    ):
        return float(point["x"]), float(point["y"])
    return None


def _marks(actions: Sequence[dict[str, Any]], width: int, height: int) -> list[tuple[str, Any, str]]:
    """``(kind, geometry, colour)`` per mark: ``dot`` (x, y), ``ring`` (x, y), ``path`` [(x, y), ...],
    ``arrow`` ((x0, y0), (x1, y1))."""
    marks: list[tuple[str, Any, str]] = []
    for action in actions:
        kind = action.get("type")
        if kind == "click" and (p := _xy(action.get("point"))):
            marks.append(("dot", p, BUTTON_COLOURS.get(str(action.get("button", "left")), "#ff0000")))
        elif kind == "drag":
            path = [q for q in (_xy(p) for p in action.get("path") or []) if q]
            if path:
                marks.append(("path", path, DRAG))
                marks.append(("dot", path[0], DRAG))
                if len(path) > 1:
                    marks.append(("arrow", (path[-2], path[-1]), DRAG))
        elif kind == "scroll":
            p = _xy(action.get("point")) or (width / 2, height / 2)
            scroll = action.get("scroll") or {}
            dx, dy = float(scroll.get("x", 0) or 0), float(scroll.get("y", 0) or 0)
            length = math.hypot(dx, dy)
            if length:
                reach = min(width, height) / 5
                marks.append(("arrow", (p, (p[0] + dx / length * reach, p[1] + dy / length * reach)), SCROLL))
        elif kind == "move" and (p := _xy(action.get("point"))):
            marks.append(("ring", p, "#ff0000"))
    return marks


def _radius(width: int, height: int) -> float:
    return max(3.0, min(width, height) / 60)


def _head(start: tuple[float, float], end: tuple[float, float], size: float) -> list[tuple[float, float]]:
    angle = math.atan2(end[1] - start[1], end[0] - start[0])
    return [
        end,
        (end[0] - size * math.cos(angle - 0.4), end[1] - size * math.sin(angle - 0.4)),
        (end[0] - size * math.cos(angle + 0.4), end[1] - size * math.sin(angle + 0.4)),
    ]


def overlay_svg(actions: Sequence[dict[str, Any]], width: int, height: int) -> str:
    """An SVG layer (``viewBox`` = the frame's pixels) with the actions' marks; ``""`` when no
    action has a place on the frame. Only numbers and fixed colours reach the markup."""
    marks = _marks(actions, width, height)
    if not marks:
        return ""
    r = _radius(width, height)
    stroke = max(1.0, r / 3)
    parts = []
    for kind, geometry, colour in marks:
        if kind == "dot":
            x, y = geometry
            parts.append(
                f'<circle cx="{x:g}" cy="{y:g}" r="{r:.1f}" fill="{colour}" stroke="#fff" stroke-width="{stroke:.1f}"/>'
            )
        elif kind == "ring":
            x, y = geometry
            parts.append(
                f'<circle cx="{x:g}" cy="{y:g}" r="{r:.1f}" fill="none" stroke="{colour}" stroke-width="{stroke:.1f}"/>'
            )
        elif kind == "path":
            points = " ".join(f"{x:g},{y:g}" for x, y in geometry)
            parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="{stroke:.1f}"/>')
        else:
            (x0, y0), (x1, y1) = geometry
            head = " ".join(f"{x:.1f},{y:.1f}" for x, y in _head((x0, y0), (x1, y1), 2 * r))
            parts.append(
                f'<line x1="{x0:g}" y1="{y0:g}" x2="{x1:.1f}" y2="{y1:.1f}" stroke="{colour}" stroke-width="{stroke:.1f}"/>'
                f'<polygon points="{head}" fill="{colour}"/>'
            )
    return (
        f'<svg class="overlay" viewBox="0 0 {width} {height}" preserveAspectRatio="none" aria-hidden="true">'
        + "".join(parts)
        + "</svg>"
    )


def draw_overlay(frame: np.ndarray, actions: Sequence[dict[str, Any]]) -> np.ndarray:
    """A copy of ``frame`` (H x W x 3 uint8, the frame the actions were taken on) with their marks."""
    from PIL import Image, ImageDraw

    height, width = frame.shape[:2]
    marks = _marks(actions, width, height)
    if not marks:
        return frame
    image = Image.fromarray(np.ascontiguousarray(frame[..., :3]))
    draw = ImageDraw.Draw(image)
    r = _radius(width, height)
    stroke = max(1, round(r / 3))
    for kind, geometry, colour in marks:
        if kind in ("dot", "ring"):
            x, y = geometry
            box = (x - r, y - r, x + r, y + r)
            if kind == "dot":
                draw.ellipse(box, fill=colour, outline="#ffffff", width=stroke)
            else:
                draw.ellipse(box, outline=colour, width=stroke)
        elif kind == "path":
            draw.line(geometry, fill=colour, width=stroke)
        else:
            start, end = geometry
            draw.line([start, end], fill=colour, width=stroke)
            draw.polygon(_head(start, end, 2 * r), fill=colour)
    return np.asarray(image)
