"""From what a controller observed (a :class:`~hud_gym.controllers.base.Frame`) to an env's
observation: the prompt shown to the agent, and the screenshot cropped to the observed region and
scaled to the observation size."""

from __future__ import annotations

import numpy as np

from hud_gym.controllers.base import Frame
from hud_gym.task import Task

__all__ = ["format_prompt", "observed_pixels"]


def format_prompt(task: Task | None) -> str:
    """The prompt shown to the agent: the task's prompt, then its choices lettered A, B, ..."""
    if task is None:
        return ""
    if not task.choices:
        return task.prompt
    letters = [f"{chr(ord('A') + i)}. {c}" for i, c in enumerate(task.choices)]
    return task.prompt + "\n" + "\n".join(letters)


def observed_pixels(
    frame: Frame, crop: tuple[int, int, int, int] | None, size: tuple[int, int], *, copy: bool = True
) -> np.ndarray:
    """``frame``'s screenshot cut to ``crop`` (screen pixels; the frame may already show just a
    region, :attr:`Frame.region`), scaled to ``size`` = ``(width, height)``: a new C-contiguous
    ``(height, width, 3)`` uint8 array (the controller may reuse its buffer); with ``copy=False``,
    possibly a view of the frame's array (the caller copies what it hands out)."""
    screenshot = np.asarray(frame.screenshot)
    if crop is not None and frame.region != crop:
        x, y, w, h = crop
        if frame.region is not None:
            x, y = x - frame.region[0], y - frame.region[1]
        screenshot = screenshot[y : y + h, x : x + w]
    width, height = size
    if screenshot.shape[:2] != (height, width):
        from PIL import Image  # only envs whose observation is scaled need it

        screenshot = np.asarray(Image.fromarray(screenshot).resize((width, height), Image.Resampling.BILINEAR))
    if not copy and screenshot.dtype == np.uint8 and screenshot.shape[2] == 3:
        return screenshot
    return np.array(screenshot[..., :3], dtype=np.uint8, order="C", copy=True)
