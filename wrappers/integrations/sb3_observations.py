"""SB3-friendly observations: the screenshot resized, the text dropped or encoded.

SB3 refuses nested or ``Text`` spaces. :class:`ObservationMapper` gives either the image alone
(``Box(0, 255, (h, w, 3), uint8)``, for ``CnnPolicy``) or a single-level ``Dict`` with the image and
the text as fixed-length character codes (``"codes"``) or as a hashed bag of words (``"words"``), for
``MultiInputPolicy``.

Example:
    >>> env = SB3ObservationWrapper(gymnasium.make("hud/QA-v0"), size=(84, 84))  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import gymnasium

from hud_gym.wrappers.vector.flat_spaces import ObservationMapper, TextMode

__all__ = ["ObservationMapper", "SB3ObservationWrapper", "TextMode"]


class SB3ObservationWrapper(gymnasium.ObservationWrapper):
    """A hud-gym env observed through :class:`ObservationMapper`."""

    def __init__(
        self, env: gymnasium.Env, size: tuple[int, int] = (84, 84), text: TextMode = "drop", text_length: int = 256
    ) -> None:
        super().__init__(env)
        self.mapper = ObservationMapper(size, text, text_length)
        self.observation_space = self.mapper.space

    def observation(self, observation: dict[str, Any]) -> Any:
        """The SB3 observation."""
        return self.mapper.map(observation)
