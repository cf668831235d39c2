"""CLA actions from the flat action spaces stable-baselines3 supports.

SB3 cannot act in a nested ``Dict`` of mixed spaces. :class:`ActionMapper` gives a hud-gym env a
small vocabulary: a click at the centre of a cell of a ``grid`` over the observation, a press of
one of ``keys``, or typing one of ``texts``; encoded as

- ``"multidiscrete"``: ``MultiDiscrete([3, columns, rows, len(keys), len(texts)])`` (PPO, A2C);
- ``"discrete"``: ``Discrete(columns * rows + len(keys) + len(texts))`` (DQN);
- ``"box"``: ``Box(-1, 1, (4,))``: kind, x, y, choice (SAC, TD3).

Example:
    >>> env = SB3ActionWrapper(gymnasium.make("hud/Browser-v0"), mode="discrete", grid=(8, 8))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import gymnasium
import numpy as np
from gymnasium import spaces

from hud_gym.actions import CLAAction, ClickAction, Point, PressAction, TypeAction
from hud_gym.keys import normalize_key

__all__ = ["ActionMapper", "SB3ActionWrapper"]

Mode = Literal["multidiscrete", "discrete", "box"]
DEFAULT_KEYS: tuple[str, ...] = ("enter", "tab", "backspace", "space", "up", "down", "esc")


class ActionMapper:
    """Maps flat SB3 actions to CLA actions; see the module docstring.

    Args:
        observation_size: ``(width, height)`` of the env's observation (clicks are in its pixels).
        mode: ``"multidiscrete"``, ``"discrete"`` or ``"box"``.
        grid: ``(columns, rows)`` of the click grid.
        keys: the keys an agent can press (normalised key names).
        texts: the snippets an agent can type.
    """

    KINDS = ("click", "press", "type")

    def __init__(self, observation_size: tuple[int, int], mode: Mode = "multidiscrete", grid: tuple[int, int] = (16, 16),
                 keys: Sequence[str] = DEFAULT_KEYS, texts: Sequence[str] = ("",)) -> None:
        if mode not in ("multidiscrete", "discrete", "box"):
            raise ValueError(f"mode must be 'multidiscrete', 'discrete' or 'box', got {mode!r}")
        if grid[0] < 1 or grid[1] < 1 or not keys or not texts:
            raise ValueError("the grid, the keys and the texts must not be empty")
        self.width, self.height = observation_size
        self.mode = mode
        self.columns, self.rows = grid
        self.keys = tuple(normalize_key(k) for k in keys)
        self.texts = tuple(texts)
        if mode == "multidiscrete":
            self.space: spaces.Space = spaces.MultiDiscrete([3, self.columns, self.rows, len(self.keys), len(self.texts)])
        elif mode == "discrete":
            self.space = spaces.Discrete(self.columns * self.rows + len(self.keys) + len(self.texts))
        else:
            self.space = spaces.Box(-1.0, 1.0, (4,), np.float32)

    def cell_center(self, column: int, row: int) -> Point:
        """The centre of grid cell ``(column, row)`` in observation pixels."""
        x = (column + 0.5) * self.width / self.columns
        y = (row + 0.5) * self.height / self.rows
        return Point(x=min(int(x), self.width - 1), y=min(int(y), self.height - 1))

    def to_cla(self, action: Any) -> CLAAction:
        """The CLA action for one SB3 action."""
        if self.mode == "multidiscrete":
            kind, column, row, key, text = (int(v) for v in np.asarray(action).reshape(-1)[:5])
        elif self.mode == "discrete":
            index = int(np.asarray(action).reshape(-1)[0])
            cells = self.columns * self.rows
            if index < cells:
                kind, column, row, key, text = 0, index % self.columns, index // self.columns, 0, 0
            elif index < cells + len(self.keys):
                kind, column, row, key, text = 1, 0, 0, index - cells, 0
            else:
                kind, column, row, key, text = 2, 0, 0, 0, index - cells - len(self.keys)
        else:
            values = np.clip(np.asarray(action, dtype=np.float64).reshape(-1)[:4], -1.0, 1.0)
            kind = min(int((values[0] + 1) / 2 * 3), 2)
            column = min(int((values[1] + 1) / 2 * self.columns), self.columns - 1)
            row = min(int((values[2] + 1) / 2 * self.rows), self.rows - 1)
            choice = (values[3] + 1) / 2
            key = min(int(choice * len(self.keys)), len(self.keys) - 1)
            text = min(int(choice * len(self.texts)), len(self.texts) - 1)
        if kind == 0:
            return ClickAction(point=self.cell_center(column, row))
        if kind == 1:
            return PressAction(keys=[self.keys[key]])
        return TypeAction(text=self.texts[text])


class SB3ActionWrapper(gymnasium.ActionWrapper):
    """A hud-gym env acting through :class:`ActionMapper`'s flat action space."""

    def __init__(self, env: gymnasium.Env, mode: Mode = "multidiscrete", grid: tuple[int, int] = (16, 16),
                 keys: Sequence[str] = DEFAULT_KEYS, texts: Sequence[str] = ("",)) -> None:
        super().__init__(env)
        self.mapper = ActionMapper(env.unwrapped.observation_size, mode, grid, keys, texts)
        self.action_space = self.mapper.space

    def action(self, action: Any) -> CLAAction:
        """The CLA action for an SB3 action."""
        return self.mapper.to_cla(action)
