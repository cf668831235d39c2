"""An agent that samples the env's action space (a baseline)."""

from __future__ import annotations

from typing import Any

from gymnasium import spaces

from hud_gym.actions import CLAAction
from hud_gym.spaces import ActionSpaceConfig, decode

__all__ = ["RandomAgent"]


class RandomAgent:
    """Samples ``action_space`` and decodes the sample to a CLA action.

    Its actions are as long as the space allows (waits, click patterns, drags, text): give the env
    a compact :class:`~hud_gym.spaces.ActionSpaceConfig` for a quick baseline.

    Example:
        >>> agent = RandomAgent(env.action_space, env.unwrapped.action_space_config, seed=0)  # doctest: +SKIP
    """

    def __init__(self, action_space: spaces.Dict, config: ActionSpaceConfig, seed: int | None = None) -> None:
        self.action_space = action_space
        self.config = config
        self.action_space.seed(seed)

    def reset(self) -> None:
        """Nothing to forget."""

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> list[CLAAction]:
        """One random action."""
        return [decode(self.action_space.sample(), self.config)]
