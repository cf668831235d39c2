"""TRL's OpenEnv path: a class for ``GRPOTrainer(environment_factory=...)`` whose episodes run on
a hud-gym env behind an OpenEnv server, through ``openenv-core``'s client (its sync wrapper).

TRL makes one instance per rollout slot with no arguments, calls ``reset(**row)`` before each
episode, offers every other public method but ``get_reward`` as a tool, and scores a rollout
with ``get_reward()``. Rows carry ``task`` (a reference the server serves) and optionally
``seed``; a row with its own ``prompt`` gets ``None`` from ``reset`` (TRL shows the row's
prompt), else the task's instruction. ``get_reward`` is the episode's graded reward; when the
policy has not ended the episode it is graded now (``HudGymAction(evaluate=True)``); an absent
reward (``eval_error``, ``timeout``, ``env_error``) is NaN, which TRL leaves out of its mean.
Once the episode is over, a tool answers an error without stepping the env (a step would be
``episode_over`` with no reward, and the episode's grade is the one kept).

Example:
    >>> HudOpenEnv = openenv_trl_environment("http://hud:TOKEN@127.0.0.1:8001")  # doctest: +SKIP
    >>> def env_reward(environments, **kwargs):
    ...     return [env.get_reward() for env in environments]
    >>> # GRPOTrainer(model=..., reward_funcs=env_reward, environment_factory=HudOpenEnv, ...)
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from hud_gym.actions import ClickAction, Point, ResponseAction, TypeAction
from hud_gym.protocols.openenv.client import HudGymEnvClient
from hud_gym.protocols.openenv.models import HudGymAction

__all__ = ["HudOpenEnv", "openenv_trl_environment"]


class HudOpenEnv:
    """A hud-gym env over OpenEnv, for TRL: ``reset``, the tools, ``get_reward``; its server is
    the class's ``base_url`` (:func:`openenv_trl_environment` makes the subclass that sets it)."""

    base_url: ClassVar[str] = ""
    timeout: ClassVar[float] = 180.0

    def __init__(self) -> None:
        self._client: Any = None
        self._reward: float | None = None
        self._done = False

    def _session(self) -> Any:
        if self._client is None:
            self._client = HudGymEnvClient(base_url=self.base_url, message_timeout_s=self.timeout).sync()
            self._client.connect()
        return self._client

    def reset(self, **row: Any) -> str | None:
        result = self._session().reset(task=row.get("task"), seed=row.get("seed"))
        self._reward, self._done = None, False
        return None if row.get("prompt") else result.observation.prompt

    def _act(self, action: Any) -> str:
        if self._done:  # a step now would be episode_over, ungraded: the grade is kept
            return f"Error: the episode is over (reward {self._reward}); no more actions are accepted."
        result = self._session().step(HudGymAction(actions=[action]))
        observation = result.observation
        if result.done:
            self._done, self._reward = True, result.reward
            return f"episode over ({observation.status}); reward {result.reward}"
        return observation.error or observation.text or "ok"

    def click(self, x: int, y: int) -> str:
        """Click a point of the screen.

        Args:
            x: pixels from the left.
            y: pixels from the top.
        """
        return self._act(ClickAction(point=Point(x=x, y=y)))

    def type_text(self, text: str) -> str:
        """Type text.

        Args:
            text: what to type.
        """
        return self._act(TypeAction(text=text))

    def answer(self, text: str) -> str:
        """Give the final answer; the episode ends and is graded.

        Args:
            text: the answer.
        """
        return self._act(ResponseAction(text=text))

    def get_reward(self) -> float:
        if not self._done:
            result = self._session().step(HudGymAction(evaluate=True))
            self._reward = result.reward
        return math.nan if self._reward is None else float(self._reward)

    def __del__(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception:  # noqa: BLE001  (the server may be gone at interpreter exit)
                pass


def openenv_trl_environment(base_url: str, *, timeout: float = 180.0) -> type[HudOpenEnv]:
    """A TRL environment class over the OpenEnv server at ``base_url`` (with its token:
    ``http://hud:TOKEN@host:port``); each instance holds one WebSocket session (one env)."""
    return type("HudOpenEnv", (HudOpenEnv,), {"base_url": base_url, "timeout": timeout})
