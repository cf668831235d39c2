"""CLA actions from the flat action spaces stable-baselines3 supports.

SB3 cannot act in a nested ``Dict`` of mixed spaces. :class:`ActionMapper` gives a hud-gym env a
small vocabulary: a click at the centre of a cell of a ``grid`` over the observation, a press of
one of ``keys``, or typing one of ``texts``; encoded as

- ``"multidiscrete"``: ``MultiDiscrete([kinds, columns, rows, len(keys), len(texts)])`` (PPO, A2C);
- ``"discrete"``: ``Discrete(columns * rows + len(keys) + len(texts))`` (DQN);
- ``"box"``: ``Box(-1, 1, (4,))``: kind, x, y, choice (SAC, TD3).

``kinds`` are click, then press if there are ``keys``, then type if there are ``texts``: with
``keys=()`` and ``texts=()`` the agent only clicks (``MultiDiscrete([1, columns, rows, 1, 1])``,
``Discrete(columns * rows)``).

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
        keys: the keys an agent can press (normalised key names); empty: no key presses.
        texts: the snippets an agent can type; empty: no typing.
    """

    def __init__(
        self,
        observation_size: tuple[int, int],
        mode: Mode = "multidiscrete",
        grid: tuple[int, int] = (16, 16),
        keys: Sequence[str] = DEFAULT_KEYS,
        texts: Sequence[str] = ("",),
    ) -> None:
        if mode not in ("multidiscrete", "discrete", "box"):
            raise ValueError(f"mode must be 'multidiscrete', 'discrete' or 'box', got {mode!r}")
        if grid[0] < 1 or grid[1] < 1:
            raise ValueError(f"the grid needs at least one column and one row, got {grid}")
        self.width, self.height = observation_size
        self.mode = mode
        self.columns, self.rows = grid
        self.keys = tuple(normalize_key(k) for k in keys)
        self.texts = tuple(texts)
        self.kinds: tuple[str, ...] = ("click",) + (("press",) if self.keys else ()) + (("type",) if self.texts else ())
        if mode == "multidiscrete":
            self.space: spaces.Space = spaces.MultiDiscrete(
                [len(self.kinds), self.columns, self.rows, max(len(self.keys), 1), max(len(self.texts), 1)]
            )
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
        """The CLA action for one SB3 action.

        Raises:
            ValueError: the action is not an element of :attr:`space` (box actions are clipped).
        """
        if self.mode == "box":
            values = np.clip(np.asarray(action, dtype=np.float64).reshape(-1), -1.0, 1.0)
            if values.shape != (4,):
                raise ValueError(f"a box action has 4 values (kind, x, y, choice), got {np.asarray(action).tolist()!r}")
            kind = self.kinds[min(int((values[0] + 1) / 2 * len(self.kinds)), len(self.kinds) - 1)]
            column = min(int((values[1] + 1) / 2 * self.columns), self.columns - 1)
            row = min(int((values[2] + 1) / 2 * self.rows), self.rows - 1)
            choice = (values[3] + 1) / 2
            key = min(int(choice * len(self.keys)), max(len(self.keys) - 1, 0))
            text = min(int(choice * len(self.texts)), max(len(self.texts) - 1, 0))
        else:
            values = np.asarray(action).reshape(-1)
            space: Any = self.space
            bounds = space.nvec if self.mode == "multidiscrete" else np.array([space.n])
            if (
                values.shape != bounds.shape
                or np.any(values != np.round(values))
                or np.any((values < 0) | (values >= bounds))
            ):
                raise ValueError(f"action {values.tolist()!r} is not in the SB3 action space {self.space}")
            if self.mode == "multidiscrete":
                kind_index, column, row, key, text = (int(v) for v in values)
                kind = self.kinds[kind_index]
            else:
                index = int(values[0])
                cells = self.columns * self.rows
                kind, column, row, key, text = "click", index % self.columns, index // self.columns, 0, 0
                if index >= cells + len(self.keys):
                    kind, text = "type", index - cells - len(self.keys)
                elif index >= cells:
                    kind, key = "press", index - cells
        if kind == "click":
            return ClickAction(point=self.cell_center(column, row))
        if kind == "press":
            return PressAction(keys=[self.keys[key]])
        return TypeAction(text=self.texts[text])


class SB3ActionWrapper(gymnasium.ActionWrapper):
    """A hud-gym env acting through :class:`ActionMapper`'s flat action space."""

    def __init__(
        self,
        env: gymnasium.Env,
        mode: Mode = "multidiscrete",
        grid: tuple[int, int] = (16, 16),
        keys: Sequence[str] = DEFAULT_KEYS,
        texts: Sequence[str] = ("",),
    ) -> None:
        super().__init__(env)
        self.mapper = ActionMapper(env.unwrapped.observation_size, mode, grid, keys, texts)  # type: ignore[attr-defined]
        self.action_space = self.mapper.space

    def action(self, action: Any) -> CLAAction:
        """The CLA action for an SB3 action."""
        return self.mapper.to_cla(action)
