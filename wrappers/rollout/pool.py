"""A pool of warm envs that rollouts lease, so a rollout does not pay for making an env.

Making a browser env costs a browser context and a page load; a leased env that already shows
the task's page resets in milliseconds (MiniWoB: one ``page.evaluate``). Each lease is exclusive,
every lease starts with a ``reset`` (which clears the previous episode's state), and the pool
never holds more than ``size`` envs; further leases wait.

Example:
    >>> async def main():
    ...     async with EnvPool(size=8) as pool:
    ...         group = await rollout_group(task, policy, 8, pool=pool)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from hud_gym.core.env import HudEnv
from hud_gym.gyms import get_gym
from hud_gym.make import make
from hud_gym.registration import gym_id_for
from hud_gym.task import Task
from hud_gym.wrappers.rollout.placement import controller_kwargs

__all__ = ["EnvPool"]


class EnvPool:
    """At most ``size`` envs, made on demand with ``env_kwargs`` and reused across leases.

    Envs are kept per gym id (a QA task never gets a browser env). ``controller`` may be a list
    of places (e.g. ``ws://`` servers of a controller fleet): the envs are spread over them.
    """

    def __init__(self, size: int, **env_kwargs: Any) -> None:
        if size < 1:
            raise ValueError("an env pool needs a size of at least 1")
        self.size = size
        self.env_kwargs = env_kwargs
        self._made = 0  # envs made so far: a list of controller places is used round-robin
        self._idle: dict[str, list[HudEnv]] = {}
        self._count = 0
        self._available = asyncio.Condition()
        self._closed = False

    @property
    def envs(self) -> int:
        """How many envs the pool holds (leased or idle)."""
        return self._count

    async def acquire(self, task: Task) -> HudEnv:
        """An env for ``task``'s gym: an idle one, a new one while under ``size``, or the next one
        released (an idle env of another gym is closed to make room)."""
        gym_id = gym_id_for(task.gym)
        async with self._available:
            while True:
                if self._closed:
                    raise RuntimeError("the env pool is closed")
                if self._idle.get(gym_id):
                    return self._idle[gym_id].pop()
                if self._count < self.size:
                    self._count += 1
                    break
                other = next((envs for envs in self._idle.values() if envs), None)
                if other:
                    await other.pop().aclose()
                    self._count -= 1
                    continue
                await self._available.wait()
        try:
            return await asyncio.to_thread(self._make, task)
        except BaseException:
            async with self._available:
                self._count -= 1
                self._available.notify()
            raise

    def _next_env_kwargs(self) -> dict[str, Any]:
        """The kwargs of the next env made: ``env_kwargs``, with the next controller place when
        ``controller`` is a list (:mod:`hud_gym.wrappers.rollout.placement`)."""
        index, self._made = self._made, self._made + 1
        return controller_kwargs(self.env_kwargs, index)

    def _make(self, task: Task) -> HudEnv:
        return make(task, **self._next_env_kwargs()).unwrapped  # type: ignore[return-value]

    async def release(self, env: HudEnv) -> None:
        """Return a leased env to the pool."""
        async with self._available:
            if self._closed:
                await env.aclose()
                self._count -= 1
                return
            self._idle.setdefault(get_gym(env.gym).id, []).append(env)
            self._available.notify()

    @asynccontextmanager
    async def lease(self, task: Task) -> AsyncIterator[HudEnv]:
        """``async with pool.lease(task) as env:`` an exclusive env, returned afterwards."""
        env = await self.acquire(task)
        try:
            yield env
        finally:
            await self.release(env)

    async def aclose(self) -> None:
        """Close every idle env; leased ones are closed when released."""
        async with self._available:
            self._closed = True
            for envs in self._idle.values():
                for env in envs:
                    await env.aclose()
                    self._count -= 1
            self._idle.clear()
            self._available.notify_all()

    async def __aenter__(self) -> EnvPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
