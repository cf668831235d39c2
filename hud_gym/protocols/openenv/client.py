"""A typed OpenEnv client of a hud-gym OpenEnv server: ``openenv-core``'s own ``EnvClient``
(WebSocket session), parsing into :class:`~hud_gym.protocols.openenv.models.HudGymObservation`.

Example:
    >>> from hud_gym.actions import ResponseAction
    >>> async with HudGymEnvClient(base_url="http://hud:TOKEN@127.0.0.1:8000") as env:  # doctest: +SKIP
    ...     result = await env.reset(task="qa-basic/capital-france")
    ...     result = await env.step(HudGymAction(actions=[ResponseAction(text="Paris")]))
    ...     result.reward, result.observation.status
    (1.0, 'ok')
"""

from __future__ import annotations

from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from hud_gym.protocols.openenv.models import HudGymAction, HudGymObservation, HudGymState

__all__ = ["HudGymEnvClient"]


class HudGymEnvClient(EnvClient):
    """OpenEnv's ``EnvClient`` for hud-gym envs (``reset(seed=, task=)``, ``step(HudGymAction)``, ``state()``)."""

    def _step_payload(self, action: HudGymAction) -> dict[str, Any]:
        payload: dict[str, Any] = action.model_dump(mode="json", exclude_none=True)
        return payload

    def _parse_result(self, payload: dict[str, Any]) -> StepResult:
        observation = HudGymObservation(
            **payload.get("observation", {}), reward=payload.get("reward"), done=payload.get("done", False)
        )
        return StepResult(observation=observation, reward=payload.get("reward"), done=payload.get("done", False))

    def _parse_state(self, payload: dict[str, Any]) -> HudGymState:
        return HudGymState(**payload)
