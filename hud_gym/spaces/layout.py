"""The shapes of hud-gym's spaces: :class:`ActionSpaceConfig` (the limits), the action ``Dict``
and the observation ``Dict`` (see :mod:`hud_gym.spaces` for the table of keys)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import get_args

import numpy as np
from gymnasium import spaces

from hud_gym.actions import ActionType, Button
from hud_gym.keys import KEYS
from hud_gym.spaces.text import text_space

__all__ = ["BUTTONS", "ActionSpaceConfig", "make_action_space", "make_observation_space"]

BUTTONS: tuple[Button, ...] = get_args(Button)
"""The mouse buttons, in the index order of the action ``Dict``'s ``button``."""


@dataclass(frozen=True)
class ActionSpaceConfig:
    """Limits that fix the shapes of the action ``Dict``.

    Attributes:
        width: screen (or observation) width in pixels; points lie in ``[0, width - 1]``.
        height: screen (or observation) height in pixels.
        action_types: the action types the space can express, in index order.
        max_text_length: longest ``type``/``response`` text and custom action name.
        max_keys: most keys in one ``press``/``keydown``/``keyup``.
        max_hold_keys: most ``hold_keys``.
        max_pattern: longest click/drag ``pattern``.
        max_delay_ms: largest delay in a ``pattern``.
        max_drag_points: most points in a drag ``path`` (at least 2).
        max_scroll: largest scroll amount per axis, in pixels.
        max_wait_ms: longest ``wait``.
        max_args_length: longest JSON encoding of ``CustomAction.args``.
    """

    width: int = 1280
    height: int = 720
    action_types: tuple[ActionType, ...] = field(default_factory=lambda: tuple(ActionType))
    max_text_length: int = 512
    max_keys: int = 4
    max_hold_keys: int = 3
    max_pattern: int = 3
    max_delay_ms: int = 2000
    max_drag_points: int = 16
    max_scroll: int = 5000
    max_wait_ms: int = 60_000
    max_args_length: int = 1024

    def __post_init__(self) -> None:
        if self.width < 1 or self.height < 1:
            raise ValueError(f"screen size must be positive, got {self.width}x{self.height}")
        if self.max_drag_points < 2:
            raise ValueError("max_drag_points must be at least 2")
        if not self.action_types:
            raise ValueError("action_types must not be empty")
        object.__setattr__(self, "action_types", tuple(ActionType(t) for t in self.action_types))

    def bounded_by(self, step_timeout: float) -> ActionSpaceConfig:
        """This config with its waits and click delays cut to what one step may take, so that a
        sampled action never outlives ``step_timeout``: a ``wait`` of at most half of it, and a
        click's or drag's whole ``pattern`` at most as long (the rest of the step is left to the
        browser or desktop acting, and to the observation)."""
        budget_ms = max(0, int(step_timeout * 500))
        return dataclasses.replace(
            self,
            max_wait_ms=min(self.max_wait_ms, budget_ms),
            max_delay_ms=min(self.max_delay_ms, budget_ms // max(1, self.max_pattern)),
        )

    @property
    def screen_max(self) -> np.ndarray:
        """The largest point, ``[width - 1, height - 1]``."""
        return np.array([self.width - 1, self.height - 1], dtype=np.int32)


def make_action_space(config: ActionSpaceConfig, seed: int | None = None) -> spaces.Dict:
    """Build the action ``Dict`` described in this module's docstring."""
    n_keys = len(KEYS)
    top = config.screen_max
    return spaces.Dict(
        {
            "action_type": spaces.Discrete(len(config.action_types)),
            "point": spaces.Box(np.zeros(2, np.int32), top, (2,), np.int32),
            "has_point": spaces.Discrete(2),
            "offset": spaces.Box(-top, top, (2,), np.int32),
            "has_offset": spaces.Discrete(2),
            "scroll": spaces.Box(-config.max_scroll, config.max_scroll, (2,), np.int32),
            "has_scroll": spaces.Discrete(2),
            "button": spaces.Discrete(len(BUTTONS)),
            "pattern": spaces.Box(0, config.max_delay_ms, (config.max_pattern,), np.int32),
            "pattern_len": spaces.Discrete(config.max_pattern + 1),
            "keys": spaces.MultiDiscrete([n_keys] * config.max_keys),
            "keys_len": spaces.Discrete(config.max_keys),
            "hold_keys": spaces.MultiDiscrete([n_keys] * config.max_hold_keys),
            "hold_keys_len": spaces.Discrete(config.max_hold_keys + 1),
            "text": text_space(config.max_text_length),
            "enter_after": spaces.Discrete(2),
            "time": spaces.Box(0, config.max_wait_ms, (1,), np.int32),
            "path": spaces.Box(
                np.zeros((config.max_drag_points, 2), np.int32),
                np.tile(top, (config.max_drag_points, 1)),
                (config.max_drag_points, 2),
                np.int32,
            ),
            "path_len": spaces.Discrete(config.max_drag_points - 1),
            "args": text_space(config.max_args_length),
        },
        seed=seed,
    )


def make_observation_space(width: int, height: int, max_text_length: int) -> spaces.Dict:
    """The observation ``Dict`` shared by every gym type: an RGB screenshot and a text."""
    return spaces.Dict(
        {
            "screenshot": spaces.Box(0, 255, (height, width, 3), np.uint8),
            "text": text_space(max_text_length),
        }
    )


# ----------------------------------------------------------------------------- encoding
