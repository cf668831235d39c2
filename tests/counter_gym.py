"""A tiny gym defined outside hud-gym, the example of ``docs/adding-a-gym.md``: a counter that a
click increments and ``press down`` decrements, shown as a bar of ``count`` white columns.

Everything a gym type is lives in this one module: its options, the controller, the env class, one
setup and one evaluate function, and the descriptor; the last line registers it. Tests import it as
``counter_gym`` (``tests/`` is on ``sys.path``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field

import hud_gym
from hud_gym import ActionError, CLAAction, ClickAction, Controller, FunctionContext, HudEnv, PressAction, Task
from hud_gym.controllers.base import ActionOutcome, Frame

__all__ = ["GYM", "CounterController", "CounterEnv", "CounterOptions", "count_is", "start_at"]


class CounterOptions(hud_gym.GymOptions):
    """The counter's options (the env's keywords, the controller's options)."""

    step_size: int = Field(default=1, ge=1, description="How much a click adds and `press down` takes away.")


class CounterController(Controller):
    """The counter: no resources to start; deterministic frames."""

    gym = "counter"

    def __init__(self, screen_size: tuple[int, int] = (64, 32), options: CounterOptions | None = None) -> None:
        super().__init__(screen_size)
        self.step_size = (options or CounterOptions()).step_size
        self.count = 0

    async def start(self) -> None:
        self.count = 0

    async def reset(self, task: Task | None, seed: int | None) -> None:
        self.count = 0

    async def step(self, action: CLAAction) -> ActionOutcome:
        if isinstance(action, ClickAction):
            self.count += self.step_size
        elif isinstance(action, PressAction) and action.keys == ["down"]:
            self.count -= self.step_size
        else:
            raise ActionError(f"the counter takes a click or 'press down', not {action.type}")
        return ActionOutcome(info={"count": self.count})

    async def observe(self) -> Frame:
        width, height = self.screen_size
        pixels = np.zeros((height, width, 3), np.uint8)
        pixels[:, : max(0, min(self.count, width))] = 255
        return Frame(screenshot=pixels, text=f"Count: {self.count}", info={"count": self.count})

    async def close(self) -> None:
        pass


class CounterEnv(HudEnv):
    """``test/Counter-v0``: count with clicks. Options: :class:`CounterOptions`."""

    def __init__(self, *args: Any, screen_size: tuple[int, int] = (64, 32), **kwargs: Any) -> None:
        super().__init__(*args, screen_size=screen_size, **kwargs)


@hud_gym.setup_function("counter")
def start_at(ctx: FunctionContext, value: int) -> None:
    """Set the counter to ``value``."""
    ctx.controller.count = value


@hud_gym.evaluate_function("counter")
def count_is(ctx: FunctionContext, target: int) -> float:
    """1 when the counter shows ``target``, else 0."""
    return float(ctx.controller.count == target)


GYM = hud_gym.GymType(
    name="counter",
    id="test/Counter-v0",
    env=CounterEnv,
    controller=CounterController,
    options=CounterOptions,
    aliases=("tally",),
    function_modules=(__name__,),
    deterministic=True,
    max_episode_steps=10,
    description="a counter driven by clicks (the test gym of docs/adding-a-gym.md)",
)

hud_gym.register_gym(GYM)
