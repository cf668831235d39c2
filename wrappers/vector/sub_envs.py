"""The sub-envs of a :class:`~hud_gym.wrappers.vector.local.HudVectorEnv`: hud-gym envs, bare or
wrapped in Gymnasium's own wrappers (``gymnasium.make`` gives ``OrderEnforcing`` and
``PassiveEnvChecker``; ``render_mode="rgb_array_list"`` adds ``RenderCollection``;
``RecordEpisodeStatistics`` and the like are the user's), checked as ``SyncVectorEnv`` and
stable-baselines3's ``DummyVecEnv`` check theirs, and stepped on the shared event loop.

A bare env steps on the loop itself (``astep``); a wrapped one steps through its wrappers' sync
``step`` in a worker thread, whose call the env runs on the loop, so that every wrapper sees
every step and the envs still step concurrently.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence
from typing import Any

import gymnasium

from hud_gym.core.env import HudEnv

__all__ = ["aclose", "areset", "astep", "check_sub_envs", "hud_env"]


def hud_env(env: gymnasium.Env) -> HudEnv:
    """The hud-gym env under ``env``'s wrappers (``env`` itself when bare).

    Raises:
        TypeError: ``env`` is not a hud-gym env, bare or wrapped.
    """
    inner = env.unwrapped
    if not isinstance(inner, HudEnv):
        raise TypeError(f"HudVectorEnv runs hud-gym envs (bare or wrapped), got {type(inner).__name__}")
    return inner


def check_sub_envs(envs: Sequence[gymnasium.Env]) -> None:
    """Refuse what ``DummyVecEnv`` and ``SyncVectorEnv`` refuse, with their messages: one env
    instance given twice (its functions return the same object), and sub-envs whose spaces are
    not the first one's.

    Raises:
        TypeError: a sub-env that is not a hud-gym env.
        ValueError: the same env instance twice.
        RuntimeError: a sub-env's observation or action space is not sub-env 0's.
    """
    inners = [hud_env(env) for env in envs]
    if len({id(inner) for inner in inners}) != len(inners):
        raise ValueError(
            "You tried to create multiple environments, but the function to create them returned the same "
            "instance instead of creating different objects. You are probably using `lambda: env` or "
            "`[lambda: env] * n_envs`: give a function that makes a new env at every call "
            "(`lambda: gymnasium.make(...)`); one env cannot step twice at once."
        )
    single_observation_space, single_action_space = envs[0].observation_space, envs[0].action_space
    for env in envs:
        if env.observation_space != single_observation_space:
            raise RuntimeError(
                "HudVectorEnv(...) however the sub-environments observation spaces are not equivalent. "
                f"single_observation_space={single_observation_space}, "
                f"sub-environment observation_space={env.observation_space}. Give every sub-env the same "
                "observation_size, observation_crop and max_text_length."
            )
        if env.action_space != single_action_space:
            raise RuntimeError(
                "Sub-environment action space doesn't make the `single_action_space`, "
                f"action_space={env.action_space}, single_action_space={single_action_space}"
            )


async def _in_thread(function: Any, *args: Any, **kwargs: Any) -> Any:
    return await asyncio.get_running_loop().run_in_executor(None, functools.partial(function, *args, **kwargs))


async def astep(env: gymnasium.Env, action: Any) -> Any:
    """``env.step(action)`` from the loop: on the loop for a bare env, else through its wrappers."""
    if isinstance(env, HudEnv):
        return await env.astep(action)
    return await _in_thread(env.step, action)


async def areset(env: gymnasium.Env, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
    """``env.reset(seed=seed, options=options)`` from the loop (see :func:`astep`)."""
    if isinstance(env, HudEnv):
        return await env.areset(seed=seed, options=options)
    return await _in_thread(env.reset, seed=seed, options=options)


async def aclose(env: gymnasium.Env) -> None:
    """``env.close()`` from the loop (see :func:`astep`)."""
    if isinstance(env, HudEnv):
        await env.aclose()
    else:
        await _in_thread(env.close)
