"""CLA actions from the flat action spaces stable-baselines3 supports.

SB3 cannot act in a nested ``Dict`` of mixed spaces. :class:`ActionMapper` (from
:mod:`hud_gym.wrappers.vector.flat_spaces`) gives a hud-gym env a
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
from typing import Any

import gymnasium

from hud_gym.actions import CLAAction
from hud_gym.wrappers.vector.flat_spaces import DEFAULT_KEYS, ActionMapper, Mode

__all__ = ["DEFAULT_KEYS", "ActionMapper", "Mode", "SB3ActionWrapper"]


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
