"""SB3-friendly observations: the screenshot resized, the text dropped or encoded.

SB3 refuses nested or ``Text`` spaces. :class:`ObservationMapper` gives either the image alone
(``Box(0, 255, (h, w, 3), uint8)``, for ``CnnPolicy``) or a single-level ``Dict`` with the image and
the text as fixed-length character codes (``"codes"``, for ``MultiInputPolicy``).

Example:
    >>> env = SB3ObservationWrapper(gymnasium.make("hud/QA-v0"), size=(84, 84))  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any, Literal

import gymnasium
import numpy as np
from gymnasium import spaces
from PIL import Image

__all__ = ["ObservationMapper", "SB3ObservationWrapper"]

TextMode = Literal["drop", "codes"]


class ObservationMapper:
    """Maps a hud-gym observation to an SB3-friendly one.

    Args:
        size: ``(width, height)`` of the image (at least 36x36 for SB3's NatureCNN).
        text: ``"drop"`` (image only) or ``"codes"`` (a Dict with the first ``text_length``
            characters as Unicode code points, 0 = padding, capped at 65535).
        text_length: number of characters kept with ``"codes"``.
    """

    def __init__(self, size: tuple[int, int] = (84, 84), text: TextMode = "drop", text_length: int = 256) -> None:
        if text not in ("drop", "codes"):
            raise ValueError(f"text must be 'drop' or 'codes', got {text!r}")
        self.size = size
        self.text = text
        self.text_length = text_length
        image = spaces.Box(0, 255, (size[1], size[0], 3), np.uint8)
        if text == "drop":
            self.space: spaces.Space = image
        else:
            self.space = spaces.Dict({"image": image, "text": spaces.Box(0, 65535, (text_length,), np.int32)})

    def image(self, screenshot: np.ndarray) -> np.ndarray:
        """The screenshot resized to ``size``."""
        if screenshot.shape[1] == self.size[0] and screenshot.shape[0] == self.size[1]:
            return np.array(screenshot, dtype=np.uint8, copy=True)
        return np.array(Image.fromarray(screenshot).resize(self.size, Image.Resampling.BILINEAR), dtype=np.uint8)

    def codes(self, text: str) -> np.ndarray:
        """The first ``text_length`` code points of ``text`` (0-padded)."""
        codes = np.zeros(self.text_length, np.int32)
        values = [min(ord(c), 65535) for c in text[: self.text_length]]
        codes[: len(values)] = values
        return codes

    def map(self, observation: dict[str, Any]) -> Any:
        """The SB3 observation for one hud-gym observation."""
        image = self.image(observation["screenshot"])
        if self.text == "drop":
            return image
        return {"image": image, "text": self.codes(observation["text"])}


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
