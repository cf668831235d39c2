"""A tiny suite defined outside hud-gym, the example of ``docs/adding-a-suite.md``: "countdown"
extends the counter gym (``counter_gym``) with a task set, an evaluate function, an env option, a
reset option and an extension, all registered by the descriptor alone (the last line).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import counter_gym  # noqa: F401  (registers the counter gym, which the suite extends)

import hud_gym
from hud_gym import FunctionConfig, FunctionContext, Suite, Task, TaskSet
from hud_gym.core.suite import SuiteExtension

__all__ = ["SUITE", "CountdownExtension", "count_below", "countdown_taskset"]


def countdown_taskset() -> TaskSet:
    """Two tasks: press ``down`` until the counter is below a target."""
    return TaskSet(
        id="countdown",
        tasks=[
            Task(
                id=f"below-{target}",
                prompt=f"Count down below {target}.",
                gym="counter",
                setup=[("start_at", 3)],  # type: ignore[list-item]
                evaluate=[("count_below", target)],  # type: ignore[list-item]
                metadata={"benchmark": "countdown"},
            )
            for target in (2, 1)
        ],
    )


@hud_gym.evaluate_function("counter")
def count_below(ctx: FunctionContext, target: int) -> float:
    """1 when the counter is below ``target``, else 0."""
    return float(ctx.controller.count < target)


class CountdownExtension(SuiteExtension):
    """Scales the reward by ``reward_scale``; ``reset(options={"start": n})`` starts at ``n``."""

    def __init__(self, suite: Suite, options: Mapping[str, Any]) -> None:
        super().__init__(suite, options)
        if not isinstance(options["reward_scale"], (int, float)) or options["reward_scale"] <= 0:
            raise ValueError(f"reward_scale must be a positive number, got {options['reward_scale']!r}")

    def pick_task(self, task: Task | None, options: Mapping[str, Any]) -> Task | None:
        if "start" in options and self.suite.claims(task):
            assert task is not None
            return task.model_copy(update={"setup": [FunctionConfig(function="start_at", args=[options["start"]])]})
        return task

    def finish_step(
        self, env: Any, observation: dict[str, Any], reward: float | None, terminated: bool, info: dict[str, Any]
    ) -> tuple[dict[str, Any], float | None]:
        return observation, None if reward is None else reward * self.options["reward_scale"]

    def frame_info(self, env: Any, info: dict[str, Any]) -> None:
        info["countdown"] = True


SUITE = Suite(
    name="countdown",
    gym="tally",  # an alias: the descriptor is normalised to the gym's name
    tasksets={"countdown": f"{__name__}:countdown_taskset"},
    function_modules=(__name__,),
    options={"reward_scale": 1.0},
    reset_options=frozenset({"start"}),
    extension=f"{__name__}:CountdownExtension",
    observation_crop=(0, 0, 32, 32),
    description="count down with the counter (the test suite of docs/adding-a-suite.md)",
)

hud_gym.register_suite(SUITE)
