"""Flat observation and action spaces for a hud-gym env, for learners that take neither nested
``Dict`` nor ``Text`` spaces (stable-baselines3, RLlib).

:class:`ObservationMapper` gives the screenshot resized (``Box(0, 255, (h, w, 3), uint8)``), alone
(``text="drop"``) or in a single-level ``Dict`` with the text as fixed-length character codes
(``"codes"``) or as a hashed bag of words (``"words"``: what an MLP or a ``MultiInputPolicy`` can
condition on, e.g. a MiniWoB++ instruction). :class:`ActionMapper` gives a small action vocabulary: a click at the centre of a
cell of a ``grid`` over the observation, a press of one of ``keys``, or typing one of ``texts``;
encoded as

- ``"multidiscrete"``: ``MultiDiscrete([kinds, columns, rows, len(keys), len(texts)])`` (PPO, A2C);
- ``"discrete"``: ``Discrete(columns * rows + len(keys) + len(texts))`` (DQN);
- ``"box"``: ``Box(-1, 1, (4,))``: kind, x, y, choice (SAC, TD3).

``kinds`` are click, then press if there are ``keys``, then type if there are ``texts``: with
``keys=()`` and ``texts=()`` the agent only clicks (``MultiDiscrete([1, columns, rows, 1, 1])``,
``Discrete(columns * rows)``).

Example:
    >>> ActionMapper((64, 64), "discrete", grid=(4, 4), keys=(), texts=()).space
    Discrete(16)
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from gymnasium import spaces
from PIL import Image

from hud_gym.actions import CLAAction, ClickAction, Point, PressAction, TypeAction
from hud_gym.keys import normalize_key

__all__ = ["DEFAULT_KEYS", "ActionMapper", "Mode", "ObservationMapper", "TextMode"]

Mode = Literal["multidiscrete", "discrete", "box"]
TextMode = Literal["drop", "codes", "words"]
_WORD = re.compile(r"[^\W_]+")
DEFAULT_KEYS: tuple[str, ...] = ("enter", "tab", "backspace", "space", "up", "down", "esc")


class ObservationMapper:
    """Maps a hud-gym observation to a flat one.

    Args:
        size: ``(width, height)`` of the image (at least 36x36 for SB3's NatureCNN, 42x42 or 84x84 for RLlib's default CNNs).
        text: ``"drop"`` (image only), ``"codes"`` (a Dict with the first ``text_length``
            characters as Unicode code points, 0 = padding, capped at 65535) or ``"words"`` (a Dict
            with the text as a bag of words, see :meth:`words`).
        text_length: number of characters kept with ``"codes"``; number of hash buckets with ``"words"``.
    """

    def __init__(self, size: tuple[int, int] = (84, 84), text: TextMode = "drop", text_length: int = 256) -> None:
        if text not in ("drop", "codes", "words"):
            raise ValueError(f"text must be 'drop', 'codes' or 'words', got {text!r}")
        if text_length < 1:
            raise ValueError(f"text_length must be at least 1, got {text_length}")
        self.size = size
        self.text = text
        self.text_length = text_length
        image = spaces.Box(0, 255, (size[1], size[0], 3), np.uint8)
        if text == "drop":
            self.space: spaces.Space = image
        elif text == "words":
            self.space = spaces.Dict({"image": image, "text": spaces.Box(0.0, 1.0, (text_length,), np.float32)})
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

    def words(self, text: str) -> np.ndarray:
        """``text`` as a multi-hot bag of words: each lowercased word (a run of letters or digits)
        sets bucket ``crc32(word) % text_length`` to 1. The ``URL:`` line a browser env appends to
        its prompt is left out: its server port differs from run to run.

        Example:
            >>> ObservationMapper(text="words", text_length=4).words("Click ONE. click one").tolist()
            [1.0, 1.0, 0.0, 0.0]
        """
        vector = np.zeros(self.text_length, np.float32)
        for line in text.splitlines():
            if line.startswith("URL: "):
                continue
            for word in _WORD.findall(line.lower()):
                vector[zlib.crc32(word.encode()) % self.text_length] = 1.0
        return vector

    def map(self, observation: dict[str, Any]) -> Any:
        """The SB3 observation for one hud-gym observation."""
        image = self.image(observation["screenshot"])
        if self.text == "drop":
            return image
        if self.text == "words":
            return {"image": image, "text": self.words(observation["text"])}
        return {"image": image, "text": self.codes(observation["text"])}


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
