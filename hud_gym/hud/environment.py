"""HUD's ``Environment``: the async, 4-tuple face of a hud-gym env (HUD 0.2's ``hud.env``).

``await gym.make(task)`` returns one with the task's setup already run (:mod:`hud_gym.hud.gym`);
every method is a coroutine over the same :class:`~hud_gym.core.env.HudEnv`, its loop thread,
its job recorder and its grades:

- ``await env.reset(task=None)`` -> ``(Observation, info)``: the observation setup left (setup is
  not run again, as in HUD) or, with a task or after steps, a new episode;
- ``await env.step(actions)`` -> ``(Observation, reward, terminated, info)`` (``terminated`` also
  covers truncation, which ``info["truncated"]`` tells apart); ``step(None)`` returns the current
  observation without acting;
- ``await env.evaluate()`` -> :class:`~hud_gym.evaluation.Grade` (``float(grade)`` is the reward);
  it is what the job stores for the episode;
- ``env.final_response``, ``await env._setup()`` (runs the task's setup again), ``await env.close()``.
"""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np

from hud_gym.core.env import HudEnv
from hud_gym.evaluation import Grade
from hud_gym.rewards import graded_reward
from hud_gym.task import Task
from hud_gym.tasksets import resolve_task

__all__ = ["Environment", "Observation"]


class Observation(dict[str, Any]):
    """HUD's observation: :attr:`screenshot` is a base64 PNG and :attr:`text` the text; as a dict
    it is hud-gym's observation (``obs["screenshot"]`` the RGB array), so hud-gym agents and
    adapters take it as is."""

    @property
    def screenshot(self) -> str | None:
        """The screenshot as base64 PNG (HUD's form), or ``None``."""
        array = self.get("screenshot")
        if array is None:
            return None
        from PIL import Image

        buffer = io.BytesIO()
        Image.fromarray(np.asarray(array)).save(buffer, format="PNG")
        return base64.b64encode(buffer.getvalue()).decode("ascii")

    @property
    def text(self) -> str:
        """The observation's text (the prompt at reset, the page text, ...)."""
        return str(self.get("text") or "")

    def __repr__(self) -> str:
        array = self.get("screenshot")
        shape = "x".join(map(str, np.shape(array))) if array is not None else None
        return f"Observation(text={self.text!r}, screenshot=<{shape} RGB>)"


class Environment:
    """See the module docstring. Made by :func:`hud_gym.hud.gym.make`; :attr:`env` is the Gymnasium env."""

    def __init__(self, env: HudEnv) -> None:
        self.env = env
        self._observation: Observation | None = None
        self._info: dict[str, Any] = {}
        self._fresh = False  # the episode setup started has had no step yet

    @property
    def task(self) -> Task | None:
        """The task of the current episode."""
        return self.env.task

    @property
    def final_response(self) -> str | None:
        """The agent's answer (from a ``ResponseAction``) in the current episode."""
        return self.env.final_response

    async def _start(self, task: Task | None = None) -> tuple[Observation, dict[str, Any]]:
        options = {"task": task} if task is not None else None
        observation, info = await self.env.areset(options=options)
        self._observation, self._info, self._fresh = Observation(observation), info, True
        return self._observation, info

    async def _setup(self) -> None:
        """Run the task's setup again on the current episode (HUD's ``env._setup()``)."""
        env = self.env
        controller, context = env.controller, env.episode.state.context
        if controller is None or context is None or env.task is None:
            await self._start()
            return
        calls = controller.resolve("setup", env.task.setup)
        await env._runner.run_async(controller.setup(calls, context))
        self._observation, _, _, _ = await self.step(None)

    async def reset(self, task: Task | dict[str, Any] | str | None = None) -> tuple[Observation, dict[str, Any]]:
        """The first observation: the one setup left when nothing happened since, else (or with
        ``task``) a new episode with its setup."""
        if task is None and self._fresh and self._observation is not None:
            return self._observation, dict(self._info)
        return await self._start(resolve_task(task) if task is not None else None)

    async def step(self, actions: Any = None) -> tuple[Observation, float | None, bool, dict[str, Any]]:
        """Execute CLA actions (a model, a dict, or a list of them); ``None``: just observe.
        The reward is ``None`` when the step failed (``info["status"]`` says how)."""
        if actions is None:
            frame = await self.env._runner.run_async(self._observe())
            return frame, 0.0, False, {"status": "ok"}
        observation, reward, terminated, truncated, info = await self.env.astep(actions)
        self._fresh = False
        self._observation = Observation(observation)
        info["truncated"] = truncated
        return self._observation, graded_reward(reward), bool(terminated or truncated), info

    async def _observe(self) -> Observation:
        controller = self.env.controller
        if controller is None:
            raise RuntimeError("the environment is closed")
        return Observation(self.env._observation(await controller.observe()))

    async def evaluate(self) -> Grade:
        """Grade the episode now; the job stores this grade as the episode's reward."""
        return await self.env.aevaluate()

    async def close(self) -> None:
        """End the episode (stored in the job with its last grade, else ``ungraded``) and free the env."""
        await self.env.aclose()
