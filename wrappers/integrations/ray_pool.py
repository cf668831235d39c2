"""A pool of warm envs living in Ray actors, for GRPO rollouts spread over a Ray cluster.

:class:`RayEnvPool` is an :class:`~hud_gym.wrappers.rollout.pool.EnvPool` (``acquire``, ``release``,
``lease``, ``aclose``, ``async with``) whose envs are :class:`RayEnvProxy` objects: each drives one
env in its own actor with the async API :func:`~hud_gym.wrappers.rollout.grpo.rollout` uses (``areset``,
``astep``, ``aevaluate``, ``aclose``, ``final_response``, ``gym``). So
``rollout_group(task, policy, G, pool=RayEnvPool(size=G))`` and ``rollout_groups(..., pool=...)``
run unchanged, with the envs on the cluster and the policy in the driver.

An actor that dies during a rollout fails that rollout (``status == "env_error"``, ``reward`` None,
as every env failure); the pool discards the actor when the env is released, and the next lease
starts a fresh one. A call interrupted by the rollout's own timeout discards the actor too (its
env may still be busy).

Example:
    >>> async def main():
    ...     async with RayEnvPool(size=8) as pool:
    ...         group = await rollout_group("qa-basic/capital-france", policy, 8, pool=pool)
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

from gymnasium.vector import AutoresetMode

from hud_gym.registration import gym_id_for
from hud_gym.task import Task
from hud_gym.wrappers.integrations.ray_actors import (
    CLOSE_TIMEOUT_S,
    DEFAULT_ACTOR_OPTIONS,
    GymEnvMaker,
    ensure_ray,
    remote_worker,
    writable,
)
from hud_gym.wrappers.rollout.pool import EnvPool

__all__ = ["RayEnvPool", "RayEnvProxy"]

T = TypeVar("T")


class RayEnvProxy:
    """One env in a Ray actor, with the async env API of :class:`~hud_gym.core.env.HudEnv`.

    Attributes:
        actor: the Ray actor handle.
        gym: the env's gym name (``"qa"``, ``"browser"``, ``"ubuntu"``).
        pid: the actor's process id (on its node).
        actor_id: the actor's Ray id (hex).
        broken: True once a call failed on the Ray side (the actor died) or was interrupted.
    """

    def __init__(self, ray: Any, actor: Any, description: dict[str, Any]) -> None:
        self._ray = ray
        self.actor = actor
        self.gym: str = description["gym"]
        self.pid: int = description["pid"]
        self.actor_id: str = description["actor_id"]
        self.observation_space = description["observation_space"]
        self.action_space = description["action_space"]
        self._max_steps_value: int | None = description["max_steps"]
        self._final_response: str | None = None
        self.broken = False
        self.closed = False

    @property
    def final_response(self) -> str | None:
        """The agent's final answer in the current episode (as of the last step)."""
        return self._final_response

    @property
    def _max_steps(self) -> int | None:
        return self._max_steps_value

    @_max_steps.setter
    def _max_steps(self, value: int | None) -> None:
        # rollout(max_steps=...) sets this on the env it is given; the actor runs calls in order.
        self._max_steps_value = value
        self.actor.set_attr.remote("_max_steps", value)

    async def _await(self, ref: Awaitable[T]) -> T:
        try:
            return writable(await ref)
        except self._ray.exceptions.RayTaskError:
            raise  # the env raised: the actor lives on
        except (self._ray.exceptions.RayError, asyncio.CancelledError):
            self.broken = True
            raise

    async def areset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start an episode (see :meth:`HudEnv.reset <hud_gym.core.env.HudEnv.reset>`)."""
        self._final_response = None
        return await self._await(self.actor.reset.remote(seed, options))

    async def astep(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """Execute ``action`` (see :meth:`HudEnv.step <hud_gym.core.env.HudEnv.step>`).

        Raises:
            ray.exceptions.RayActorError: the actor died (the rollout reports ``env_error``).
        """
        result, self._final_response = await self._await(self.actor.step_with_response.remote(action))
        return result

    async def aevaluate(self) -> Any:
        """Grade the current state and final response now."""
        return await self._await(self.actor.evaluate.remote())

    async def aclose(self) -> None:
        """Close the env (and its browser) in the actor, then kill the actor."""
        if self.closed:
            return
        self.closed = True
        if not self.broken:
            await asyncio.to_thread(self._ray.wait, [self.actor.close.remote()], timeout=CLOSE_TIMEOUT_S)
        try:
            self._ray.kill(self.actor, no_restart=True)
        except Exception:  # noqa: BLE001  (already dead)
            pass

    def __repr__(self) -> str:
        state = "closed" if self.closed else "broken" if self.broken else "live"
        return f"<RayEnvProxy gym={self.gym!r} pid={self.pid} {state}>"


class RayEnvPool(EnvPool):
    """At most ``size`` envs in Ray actors, made on demand with ``env_kwargs`` and reused across
    leases (one actor per env, per gym id).

    Args:
        size: the most envs (actors) alive at once.
        actor_options: Ray actor options over ``{"num_cpus": 0, "max_restarts": 0}``.
        address: the Ray cluster to connect to when Ray is not initialised yet.
        **env_kwargs: arguments of every env (``screen_size``, ``max_episode_steps``, ...).
    """

    def __init__(
        self, size: int, *, actor_options: dict[str, Any] | None = None, address: str | None = None, **env_kwargs: Any
    ) -> None:
        super().__init__(size, **env_kwargs)
        self._ray = ensure_ray(address)
        self.actor_options = {**DEFAULT_ACTOR_OPTIONS, **(actor_options or {})}
        self._worker_class = remote_worker(self._ray, self.actor_options)

    def _make(self, task: Task) -> RayEnvProxy:  # type: ignore[override]
        # Runs in a worker thread (EnvPool.acquire); "disabled": rollout() resets every episode.
        maker = GymEnvMaker(gym_id_for(task.gym), self._next_env_kwargs())
        actor = self._worker_class.remote(maker, AutoresetMode.DISABLED.value)
        try:
            description = self._ray.get(actor.describe.remote())
        except BaseException:
            self._ray.kill(actor, no_restart=True)
            raise
        return RayEnvProxy(self._ray, actor, description)

    async def release(self, env: RayEnvProxy) -> None:  # type: ignore[override]
        """Return a leased env; a broken one is discarded (its actor killed) to make room for a
        fresh one."""
        if env.broken:
            await env.aclose()
            async with self._available:
                self._count -= 1
                self._available.notify()
            return
        await super().release(env)  # type: ignore[arg-type]  # the pool leases proxies in place of envs
