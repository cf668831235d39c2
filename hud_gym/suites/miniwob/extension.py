"""MiniWoB++'s part of a ``hud/Browser-v0`` env (:class:`MiniWoBExtension`): what makes its
tasks behave as in the official ``miniwob`` env (:mod:`.env`).

Example:
    >>> import hud_gym
    >>> env = hud_gym.make("miniwob/click-test", reward_processor="binary")  # doctest: +SKIP
    >>> env.suites["miniwob"].set_data_mode("test")                          # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hud_gym.core.suite import Suite, SuiteExtension
from hud_gym.suites.miniwob import env as miniwob_env
from hud_gym.task import Task

__all__ = ["MiniWoBExtension"]


class MiniWoBExtension(SuiteExtension):
    """The reward processor, the terminal frame, the data mode and the DOM observation's boxes
    of one env's MiniWoB++ tasks.

    Raises:
        ValueError: an unknown reward processor or terminal frame, or a threshold outside [-1, 1].
    """

    def __init__(self, suite: Suite, options: Mapping[str, Any]) -> None:
        super().__init__(suite, options)
        miniwob_env.check_options(options["reward_processor"], options["reward_threshold"], options["terminal_frame"])
        self.reward_processor: str = options["reward_processor"]
        self.reward_threshold = float(options["reward_threshold"])
        self.terminal_frame: str = options["terminal_frame"]
        self.data_mode: str | None = None  # set by reset(options={"data_mode": ...})

    def set_data_mode(self, mode: str) -> None:
        """MiniWoB's data mode (``"train"``, ``"test"``, ...) from the next episode on, as the
        official env's ``set_data_mode`` (or ``reset(options={"data_mode": mode})``)."""
        if not isinstance(mode, str) or not mode:
            raise ValueError(f"a data mode is a non-empty string such as 'test', got {mode!r}")
        self.data_mode = mode

    def pick_task(self, task: Task | None, options: Mapping[str, Any]) -> Task | None:
        """``options["data_mode"]`` sets the data mode of this episode and the next ones (as the
        official env's ``set_data_mode``)."""
        if "data_mode" in options:
            if not miniwob_env.is_miniwob(task):
                raise ValueError(
                    f"reset option 'data_mode' applies to MiniWoB++ tasks, not {task.id if task else None!r}"
                )
            assert task is not None
            task = miniwob_env.with_data_mode(task, options["data_mode"])
            self.data_mode = options["data_mode"]
        elif self.data_mode is not None and miniwob_env.is_miniwob(task):
            assert task is not None
            task = miniwob_env.with_data_mode(task, self.data_mode)
        return task

    def finish_step(
        self, env: Any, observation: dict[str, Any], reward: float | None, terminated: bool, info: dict[str, Any]
    ) -> tuple[dict[str, Any], float | None]:
        """The reward processor and the terminal frame."""
        grade = info.get("grade")
        if reward is not None and grade is not None and self.reward_processor != "raw":
            reward = miniwob_env.process_reward(self.reward_processor, grade, self.reward_threshold)
        if grade is not None and grade.done and terminated and info.get("observed") == "after":
            info["observed"] = "cover"  # MiniWoB++'s done cover (or the black frame), not the page acted on
            if self.terminal_frame == "black":
                observation = {**observation, "screenshot": np.zeros_like(observation["screenshot"])}
                env._last_screenshot = observation["screenshot"].copy()
        return observation, reward

    def frame_info(self, env: Any, info: dict[str, Any]) -> None:
        """MiniWoB's own DOM observation in observation pixels (every element kept, as the official env)."""
        dom = info.get("dom_elements")
        mapping = env.screen_mapping
        if dom and not mapping.identity:
            for element in dom:
                box = mapping.box(element["left"], element["top"], element["width"], element["height"])
                element["left"], element["top"], element["width"], element["height"] = (round(v, 1) for v in box)
