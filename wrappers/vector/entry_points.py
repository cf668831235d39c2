"""The ``vector_entry_point`` of every gym's id: ``hud_gym.wrappers.vector.entry_points:<gym name>``,
a function ``(num_envs, **kwargs) -> HudVectorEnv`` of that gym's env class (see
:meth:`HudVectorEnv.from_env_class <hud_gym.wrappers.vector.HudVectorEnv.from_env_class>`).

``gymnasium.make_vec(id, num_envs=N)`` imports this module and looks the gym's name up here; a
gym registered later (``hud_gym.register_gym``) gets its entry point without a line of its own.
``qa_vector_env``, ``browser_vector_env`` and ``ubuntu_vector_env`` are the entry points of the
built-in gyms under the names the ids used before.

Example:
    >>> import gymnasium, hud_gym
    >>> envs = gymnasium.make_vec("hud/QA-v0", num_envs=2, taskset="qa-basic")
    >>> envs.num_envs
    2
    >>> envs.close()
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from hud_gym.gyms import UnknownGymError, get_gym
from hud_gym.wrappers.vector.flat import FLAT_ARGUMENTS, FlatVectorEnv
from hud_gym.wrappers.vector.local import HudVectorEnv

__all__ = ["browser_vector_env", "entry_point", "qa_vector_env", "ubuntu_vector_env", "vector_env"]


def _make(env_class: Any, num_envs: int, kwargs: dict[str, Any]) -> HudVectorEnv | FlatVectorEnv:
    flat = {k: kwargs.pop(k) for k in FLAT_ARGUMENTS & kwargs.keys()}
    envs = HudVectorEnv.from_env_class(env_class, num_envs, **kwargs)
    if not flat:
        return envs
    try:
        return FlatVectorEnv(envs, **flat)
    except Exception:
        envs.close()
        raise


def vector_env(gym: str, num_envs: int = 1, **kwargs: Any) -> HudVectorEnv | FlatVectorEnv:
    """A :class:`HudVectorEnv` of ``num_envs`` envs of ``gym`` (a name, alias or id) made with
    ``kwargs``; its flat form (:class:`~hud_gym.wrappers.vector.flat.FlatVectorEnv`) when
    ``kwargs`` hold any of ``observation``, ``action_mode``, ``grid``, ``keys``, ``texts``,
    ``text_length``, ``failed_reward``."""
    return _make(get_gym(gym).env, num_envs, dict(kwargs))


@functools.cache
def entry_point(name: str) -> Callable[..., HudVectorEnv | FlatVectorEnv]:
    """The vector entry point of the gym named ``name`` (one function per gym).

    Raises:
        UnknownGymError: no gym of that name is registered.
    """
    gym = get_gym(name)

    def create(num_envs: int = 1, **kwargs: Any) -> HudVectorEnv | FlatVectorEnv:
        return _make(gym.env, num_envs, dict(kwargs))

    create.__name__ = create.__qualname__ = name
    create.__doc__ = f"``vector_entry_point`` of {gym.id}: a :class:`HudVectorEnv` of :class:`{gym.entry_point}`."
    return create


def __getattr__(name: str) -> Any:
    try:
        return entry_point(name)
    except UnknownGymError:
        raise AttributeError(
            f"module {__name__!r} has no attribute {name!r}: {name!r} is not a registered gym"
        ) from None


qa_vector_env = entry_point("qa")
browser_vector_env = entry_point("browser")
ubuntu_vector_env = entry_point("ubuntu")
