"""The ``vector_entry_point`` of every gym's id: ``hud_gym.vector_entry_points:<gym name>``, a
function ``(num_envs, **kwargs) -> HudVectorEnv`` of that gym's env class (see
:meth:`HudVectorEnv.from_env_class <hud_gym.wrappers.vector.HudVectorEnv.from_env_class>`).

``gymnasium.make_vec(id, num_envs=N)`` imports this module and looks the gym's name up here; a
gym registered later (``hud_gym.register_gym``) gets its entry point without a line of its own.

Example:
    >>> import gymnasium, hud_gym
    >>> envs = gymnasium.make_vec("hud/QA-v0", num_envs=2, taskset="qa-basic")
    >>> envs.num_envs
    2
    >>> envs.close()
"""

from __future__ import annotations

from typing import Any

from hud_gym.gyms import UnknownGymError, get_gym
from hud_gym.wrappers.vector import HudVectorEnv

__all__ = ["vector_env"]


def vector_env(gym: str, num_envs: int = 1, **kwargs: Any) -> HudVectorEnv:
    """A :class:`HudVectorEnv` of ``num_envs`` envs of ``gym`` (a name, alias or id) made with ``kwargs``."""
    return HudVectorEnv.from_env_class(get_gym(gym).env, num_envs, **kwargs)


def __getattr__(name: str) -> Any:
    try:
        gym = get_gym(name)
    except UnknownGymError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}: {name!r} is not a registered gym") from None

    def create(num_envs: int = 1, **kwargs: Any) -> HudVectorEnv:
        return HudVectorEnv.from_env_class(gym.env, num_envs, **kwargs)

    create.__name__ = create.__qualname__ = name
    create.__doc__ = f"``vector_entry_point`` of {gym.id}: a :class:`HudVectorEnv` of :class:`{gym.entry_point}`."
    return create
