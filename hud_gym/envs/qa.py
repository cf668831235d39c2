"""``hud/QA-v0``: text question answering with a rendered screenshot of the question; its
env class and its descriptor (:data:`GYM`)."""

from __future__ import annotations

from hud_gym.core.env import HudEnv
from hud_gym.core.gym_type import GymType
from hud_gym.envs.qa_options import QAOptions

__all__ = ["GYM", "QAEnv", "QAOptions"]


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


GYM = GymType(
    name="qa",
    id="hud/QA-v0",
    env=QAEnv,
    controller="hud_gym.controllers.qa:QAController",
    options=QAOptions,
    aliases=("question-answer",),
    function_modules=("hud_gym.controllers.qa.functions",),
    deterministic=True,
    max_episode_steps=20,
    description="question answering: a rendered question, answered with a ResponseAction",
)
"""The QA gym."""
