"""The step timeout fires even when the controller's call ignores its cancellation (a ``finally``
that awaits a reply that never comes, as a DevTools call to a renderer held by a dialog):
:func:`hud_gym.core.deadline.within`. The left-behind call ends when the next reset restarts the
controller."""

from __future__ import annotations

import asyncio
import time

import pytest
from counter_gym import CounterController, CounterEnv

import hud_gym
from hud_gym import CLAAction, PressAction
from hud_gym.controllers.base import ActionOutcome
from hud_gym.core.deadline import within
from hud_gym.rewards import graded_reward

pytestmark = pytest.mark.timeout(30)


class StubbornController(CounterController):
    """``press x`` hangs, and once cancelled hangs again in its ``finally`` until ``close``."""

    closed: list[StubbornController] = []

    async def start(self) -> None:
        await super().start()
        self.released = asyncio.Event()
        self.cleaned_up = False

    async def step(self, action: CLAAction) -> ActionOutcome:
        if isinstance(action, PressAction) and action.keys == ["x"]:
            try:
                await asyncio.Event().wait()
            finally:
                await self.released.wait()
                self.cleaned_up = True
        return await super().step(action)

    async def close(self) -> None:
        self.released.set()
        await asyncio.sleep(0.05)
        StubbornController.closed.append(self)


class StubbornEnv(CounterEnv):
    """The counter gym (no gym of its own to register) with a :class:`StubbornController`."""

    def _make_controller(self) -> StubbornController:
        return StubbornController(self.screen_size, self.options)


def test_a_step_whose_call_ignores_cancellation_still_times_out() -> None:
    env = StubbornEnv(step_timeout=0.5)
    try:
        env.reset(seed=0)
        controller = env.unwrapped.controller
        started = time.perf_counter()
        _, reward, _, truncated, info = env.step(PressAction(keys=["x"]))
        took = time.perf_counter() - started
        assert (info["status"], graded_reward(reward), truncated) == ("timeout", None, True), info
        assert took < 0.5 + 2 * hud_gym.core.deadline.GRACE, took
        assert not controller.cleaned_up  # still held in its finally: left behind, not awaited
        env.reset(seed=0)  # restarts the controller, which releases the left-behind call
        assert controller in StubbornController.closed and controller.cleaned_up
        assert env.unwrapped.controller is not controller
        _, _, _, _, info = env.step(PressAction(keys=["down"]))
        assert info["status"] == "ok" and info["count"] == -1
    finally:
        env.close()


def test_within_returns_the_result_and_passes_errors_on() -> None:
    async def main() -> None:
        assert await within(asyncio.sleep(0, result=7), 1) == 7
        with pytest.raises(KeyError):
            await within(_raise(), 1)
        with pytest.raises(asyncio.TimeoutError):
            await within(asyncio.sleep(5), 0.05)

    async def _raise() -> None:
        raise KeyError("x")

    asyncio.run(main())
