"""A random baseline that acts where the task can be solved: the floor of a task set.

:class:`RandomAgent` takes one action per step, drawn from what a task can use: a left click
anywhere in the observation (its pixels, which the env maps to the screen; see
``info["screen_mapping"]``), a short text (words of the prompt, or letters from a small alphabet),
a common key, or a scroll. It sends no custom actions, no waits, no drags and no random key names.

It is seeded and stateless across runs: the action of a step is a function of the agent's seed,
the episode's seed and task id (read from the reset's ``info``), and the step number, so the same
seeds give the same actions however many runs share the agent at once.

Example:
    >>> import numpy as np
    >>> agent = RandomAgent(seed=0)
    >>> observation = {"screenshot": np.zeros((210, 160, 3), np.uint8)}
    >>> first = agent.act(observation, {"step": 0, "seed": 3, "task_id": "t", "prompt": "Click the button"})
    >>> first == agent.act(observation, {"step": 0, "seed": 3, "task_id": "t", "prompt": "Click the button"})
    True
"""

from __future__ import annotations

import hashlib
import re
import string
from typing import Any

import numpy as np

from hud_gym.actions import CLAAction, ClickAction, Point, PressAction, ScrollAction, TypeAction

__all__ = ["DEFAULT_ACTION_WEIGHTS", "DEFAULT_KEYS", "RandomAgent"]

DEFAULT_ACTION_WEIGHTS: dict[str, float] = {"click": 0.6, "type": 0.2, "press": 0.12, "scroll": 0.08}
"""How often each action type is drawn (normalised)."""

DEFAULT_KEYS: tuple[str, ...] = ("enter", "tab", "backspace", "space", "escape", "up", "down", "left", "right")
"""The keys :class:`RandomAgent` presses."""

_ALPHABET = string.ascii_lowercase + string.digits
_MAX_PROMPT_CHARS = 2000
_MAX_REMEMBERED = 4096


class RandomAgent:
    """One random action per step inside the observation; see the module docstring.

    Args:
        seed: the agent's seed (random when ``None``); with the episode's seed it fixes every action.
        weights: action type -> relative frequency, over ``click``, ``type``, ``press``, ``scroll``.
        keys: the keys it presses.
        max_text_length: the longest text it types (at least 1).
        max_scroll: the largest scroll, in observation pixels.
    """

    def __init__(
        self,
        seed: int | None = None,
        *,
        weights: dict[str, float] | None = None,
        keys: tuple[str, ...] = DEFAULT_KEYS,
        max_text_length: int = 8,
        max_scroll: int = 200,
    ) -> None:
        weights = dict(DEFAULT_ACTION_WEIGHTS if weights is None else weights)
        unknown = sorted(set(weights) - set(DEFAULT_ACTION_WEIGHTS))
        if unknown or not weights or any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
            raise ValueError(
                f"weights must give non-negative frequencies to some of {sorted(DEFAULT_ACTION_WEIGHTS)}, got {weights}"
            )
        if not keys or max_text_length < 1 or max_scroll < 1:
            raise ValueError("RandomAgent needs at least one key, max_text_length >= 1 and max_scroll >= 1")
        self.seed = int(seed) if seed is not None else int(np.random.default_rng().integers(2**63))
        total = sum(weights.values())
        self._types = list(weights)
        self._probabilities = [w / total for w in weights.values()]
        self.keys = tuple(PressAction(keys=[k]).keys[0] for k in keys)
        self.max_text_length = max_text_length
        self.max_scroll = max_scroll
        self._episodes: dict[str, tuple[int, tuple[str, ...]]] = {}

    def reset(self) -> None:
        """Nothing to forget: each episode is told apart by its reset ``info``."""

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> list[CLAAction]:
        """The step's one random action, in observation pixels."""
        width, height = _observation_size(observation, info)
        task = str(info.get("task_id"))[:256]
        if info.get("step") == 0 or task not in self._episodes:
            if len(self._episodes) >= _MAX_REMEMBERED:
                self._episodes.clear()
            seed = info.get("seed")
            self._episodes[task] = (int(seed) if isinstance(seed, int) else 0, _words(info.get("prompt")))
        episode_seed, words = self._episodes[task]
        rng = np.random.default_rng([self.seed, episode_seed, _stable_hash(task), int(info.get("step") or 0)])
        kind = self._types[int(rng.choice(len(self._types), p=self._probabilities))]
        point = Point(x=int(rng.integers(0, width)), y=int(rng.integers(0, height)))
        if kind == "click":
            return [ClickAction(point=point)]
        if kind == "type":
            return [TypeAction(text=self._text(rng, words))]
        if kind == "press":
            return [PressAction(keys=[self.keys[int(rng.integers(len(self.keys)))]])]
        amount = int(rng.integers(1, self.max_scroll + 1)) * (1 if rng.random() < 0.5 else -1)
        return [ScrollAction(point=point, scroll=Point(x=0, y=amount))]

    def _text(self, rng: np.random.Generator, words: tuple[str, ...]) -> str:
        if words and rng.random() < 0.7:
            return words[int(rng.integers(len(words)))][: self.max_text_length]
        length = int(rng.integers(1, self.max_text_length + 1))
        return "".join(_ALPHABET[int(i)] for i in rng.integers(0, len(_ALPHABET), length))


def _observation_size(observation: Any, info: dict[str, Any]) -> tuple[int, int]:
    """``(width, height)`` of the observation: its screenshot's, else the info's mapping's."""
    screenshot = observation.get("screenshot") if isinstance(observation, dict) else observation
    shape = getattr(screenshot, "shape", None)
    if shape is not None and len(shape) >= 2 and shape[0] > 0 and shape[1] > 0:
        return int(shape[1]), int(shape[0])
    mapping = info.get("screen_mapping")
    size = mapping.get("observation_size") if isinstance(mapping, dict) else None
    if isinstance(size, (list, tuple)) and len(size) == 2 and all(isinstance(v, int) and v > 0 for v in size):
        return int(size[0]), int(size[1])
    raise ValueError("RandomAgent needs a screenshot observation or info['screen_mapping'] to know where to click")


def _words(prompt: Any) -> tuple[str, ...]:
    """The prompt's words (letters and digits), at most the first 2000 characters read."""
    if not isinstance(prompt, str):
        return ()
    return tuple(dict.fromkeys(re.findall(r"\w+", prompt[:_MAX_PROMPT_CHARS])))


def _stable_hash(text: str) -> int:
    """A hash that is the same in every process (``hash`` of a str is not)."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
