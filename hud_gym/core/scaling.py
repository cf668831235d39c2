"""Mapping action coordinates from observation pixels to screen pixels, and the geometry (crop,
size, mapping) of an env's observation."""

from __future__ import annotations

from dataclasses import dataclass

from hud_gym.actions import CLAAction, ClickAction, DragAction, MoveAction, Point, ScrollAction

__all__ = ["ScreenMapping", "screen_geometry"]


@dataclass(frozen=True)
class ScreenMapping:
    """Observation pixels to screen pixels: ``screen = origin + observation * scale``.

    The origin is the top-left corner of the observed region (a crop), the scale its size over
    the observation's size. Positions get the origin and the scale; vectors (move offsets,
    scroll amounts) only the scale.
    """

    scale_x: float = 1.0
    scale_y: float = 1.0
    origin_x: int = 0
    origin_y: int = 0

    @property
    def identity(self) -> bool:
        """True when observation and screen pixels coincide."""
        return self.scale_x == 1 and self.scale_y == 1 and self.origin_x == 0 and self.origin_y == 0

    def position(self, point: Point | None) -> Point | None:
        """A position in screen pixels."""
        if point is None:
            return None
        return Point(x=self.origin_x + round(point.x * self.scale_x), y=self.origin_y + round(point.y * self.scale_y))

    def vector(self, point: Point | None) -> Point | None:
        """A displacement in screen pixels."""
        if point is None:
            return None
        return Point(x=round(point.x * self.scale_x), y=round(point.y * self.scale_y))

    def point_to_observation(self, x: float, y: float) -> tuple[int, int]:
        """A screen-pixel position in observation pixels."""
        return round((x - self.origin_x) / self.scale_x), round((y - self.origin_y) / self.scale_y)

    def box(self, x: float, y: float, width: float, height: float) -> tuple[float, float, float, float]:
        """A screen-pixel box ``(x, y, width, height)`` in observation pixels."""
        return (
            (x - self.origin_x) / self.scale_x,
            (y - self.origin_y) / self.scale_y,
            width / self.scale_x,
            height / self.scale_y,
        )

    def as_info(self, screen_size: tuple[int, int], observation_size: tuple[int, int]) -> dict[str, object]:
        """The mapping as ``info["screen_mapping"]``: ``screen = offset + observation * scale``,
        with the screen's and the observation's ``[width, height]`` (JSON-ready)."""
        return {
            "scale_x": self.scale_x,
            "scale_y": self.scale_y,
            "offset_x": self.origin_x,
            "offset_y": self.origin_y,
            "screen_size": [int(screen_size[0]), int(screen_size[1])],
            "observation_size": [int(observation_size[0]), int(observation_size[1])],
        }

    def to_screen(self, action: CLAAction) -> CLAAction:
        """``action`` with its coordinates in screen pixels (the same object for the identity)."""
        if self.identity:
            return action
        if isinstance(action, ClickAction):
            return action.model_copy(update={"point": self.position(action.point)})
        if isinstance(action, ScrollAction):
            return action.model_copy(
                update={"point": self.position(action.point), "scroll": self.vector(action.scroll)}
            )
        if isinstance(action, MoveAction):
            return action.model_copy(
                update={"point": self.position(action.point), "offset": self.vector(action.offset)}
            )
        if isinstance(action, DragAction):
            return action.model_copy(update={"path": [self.position(p) for p in action.path]})
        return action


def screen_geometry(
    screen_size: tuple[int, int],
    observation_size: tuple[int, int] | None,
    observation_crop: tuple[int, int, int, int] | None,
) -> tuple[tuple[int, int, int, int] | None, tuple[int, int], ScreenMapping]:
    """An env's observed region (``observation_crop`` checked, or ``None`` for the whole screen),
    its observation size (default: the region's size) and the mapping from observation to screen
    pixels.

    Raises:
        ValueError: the crop is not inside the screen.
    """
    crop: tuple[int, int, int, int] | None = None
    if observation_crop is not None:
        x, y, w, h = (int(v) for v in observation_crop)
        if w < 1 or h < 1 or x < 0 or y < 0 or x + w > screen_size[0] or y + h > screen_size[1]:
            raise ValueError(f"observation_crop {observation_crop} is not inside the {screen_size} screen")
        crop = (x, y, w, h)
    region = crop[2:] if crop else screen_size
    size = (
        (int(observation_size[0]), int(observation_size[1])) if observation_size else (int(region[0]), int(region[1]))
    )
    mapping = ScreenMapping(
        scale_x=region[0] / size[0],
        scale_y=region[1] / size[1],
        origin_x=crop[0] if crop else 0,
        origin_y=crop[1] if crop else 0,
    )
    return crop, size, mapping
