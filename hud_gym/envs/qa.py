"""``hud/QA-v0``: text question answering with a rendered screenshot of the question."""

from __future__ import annotations

from typing import Any, ClassVar

from hud_gym.controllers.qa import QAController
from hud_gym.core.env import HudEnv

__all__ = ["QAEnv"]


class QAEnv(HudEnv):
    """Question answering. The agent answers with a ``ResponseAction`` (or types its answer and
    presses enter); the task's evaluator grades the answer.

    Deterministic: the same seed and actions give the same observations, so the full
    ``check_env`` passes.

    Example:
        >>> import gymnasium, hud_gym
        >>> from hud_gym import Task, ResponseAction
        >>> env = gymnasium.make("hud/QA-v0", task=Task(prompt="2+2?", target="4"))
        >>> obs, info = env.reset(seed=0)
        >>> env.step(ResponseAction(text="4"))[1]
        1.0
        >>> env.close()
    """

    gym_type: ClassVar[str] = "qa"
    default_max_episode_steps: ClassVar[int | None] = 20

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)

    def _make_controller(self) -> QAController:
        return QAController(self.screen_size)
