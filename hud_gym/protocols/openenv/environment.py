"""A hud-gym env as an OpenEnv ``Environment`` (``openenv-core``'s server contract).

OpenEnv makes one :class:`HudGymEnvironment` per WebSocket session (and one per stateless HTTP
``/reset`` or ``/step``, closed after it) from the factory the server is given. ``reset`` takes
``seed``, ``episode_id`` and ``task`` (a reference: :func:`hud_gym.protocols.session.pick_task`);
``step`` takes a :class:`~hud_gym.protocols.openenv.models.HudGymAction` (CLA actions, or
``evaluate=true``: a grade of the current state, the episode left open). A step with no episode
open (a stateless HTTP ``/step``) answers ``status="no_episode"``, ``reward=None``, ``done``.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable
from typing import Any

from gymnasium.error import ResetNeeded
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import EnvironmentMetadata

from hud_gym.actions import ActionError
from hud_gym.protocols.openenv.models import HudGymAction, HudGymObservation, HudGymState
from hud_gym.protocols.session import ServedEnv, StepReport, encode_png

__all__ = ["NO_EPISODE", "HudGymEnvironment", "environment_factory"]

NO_EPISODE = "no_episode"
"""The status of a step with no episode open (OpenEnv's HTTP ``/step`` makes a fresh env)."""


def observation(report: StepReport, screenshot: Any) -> HudGymObservation:
    """The OpenEnv observation of ``report`` and ``screenshot``."""
    data = report.model_dump()
    png = base64.b64encode(encode_png(screenshot)).decode("ascii") if screenshot is not None else ""
    return HudGymObservation(
        screenshot=png,
        done=report.terminated or report.truncated,
        metadata={},
        **data,
    )


class HudGymEnvironment(Environment):
    """One hud-gym env behind OpenEnv's ``reset`` / ``step`` / ``state``.

    Args:
        env: the env (``hud_gym.make(...)``), owned from now on (closed by :meth:`close`).
    """

    SUPPORTS_CONCURRENT_SESSIONS = True  # each session has an env of its own

    def __init__(self, env: Any) -> None:
        super().__init__()
        self.served = ServedEnv(env)
        self._state = HudGymState(gym=self.served.env.gym)

    async def reset_async(
        self, seed: int | None = None, episode_id: str | None = None, task: str | None = None
    ) -> HudGymObservation:
        """Start an episode (on ``task`` when given); ``episode_id`` names it (else a new uuid)."""
        report = await self.served.reset(task, seed)
        self._state = HudGymState(
            episode_id=(episode_id or str(uuid.uuid4()))[:255],
            step_count=0,
            task_id=report.task_id,
            status=report.status,
            gym=self.served.env.gym,
        )
        return observation(report, self.served.screenshot)

    async def step_async(self, action: HudGymAction, timeout_s: float | None = None) -> HudGymObservation:
        """One env step of ``action.actions`` (the env's own ``step_timeout`` bounds it)."""
        if not self.served.started:
            report = StepReport(status=NO_EPISODE, terminated=True, error="no episode: reset first")
            return observation(report, None)
        try:
            report = await (self.served.evaluate() if action.evaluate else self.served.step(action.actions))
        except (ActionError, ResetNeeded) as exc:
            report = StepReport(
                status="action_error", error=f"{type(exc).__name__}: {exc}", step=self._state.step_count
            )
            return observation(report, self.served.screenshot)
        self._state.step_count = report.step
        self._state.status = report.status
        return observation(report, self.served.screenshot)

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, task: str | None = None
    ) -> HudGymObservation:
        """Sync :meth:`reset_async` (from a thread without a running loop)."""
        import asyncio

        return asyncio.run(self.reset_async(seed=seed, episode_id=episode_id, task=task))

    def step(self, action: HudGymAction, timeout_s: float | None = None) -> HudGymObservation:
        """Sync :meth:`step_async` (from a thread without a running loop)."""
        import asyncio

        return asyncio.run(self.step_async(action, timeout_s))

    @property
    def state(self) -> HudGymState:
        """The episode's id, step count, task and last status."""
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        """The env's name and what it is."""
        return EnvironmentMetadata(
            name=f"hud-gym {self.served.env.gym}",
            description="A hud-gym environment: CLA actions, screenshot observations, rewards from the task's evaluator.",
        )

    def close(self) -> None:
        """Close the env (its browser or desktop)."""
        self.served.env.close()


def environment_factory(make_env: Callable[[], Any]) -> Callable[[], HudGymEnvironment]:
    """The factory OpenEnv's ``create_app`` takes: a new :class:`HudGymEnvironment` over
    ``make_env()`` for each session."""

    def factory() -> HudGymEnvironment:
        return HudGymEnvironment(make_env())

    return factory
