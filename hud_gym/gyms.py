"""hud-gym's gym types, one line each, and the registry's API.

A gym type is described by one :class:`~hud_gym.core.gym_type.GymType`, defined next to its env
class (``hud_gym/envs/<gym>.py``: ``GYM``); the line below registers it with Gymnasium, the
function registry and the task sets. A gym defined elsewhere (your package, a test) registers
itself the same way: ``hud_gym.register_gym(MY_GYM)``. See ``docs/adding-a-gym.md``.

Example:
    >>> [gym.id for gym in all_gyms()][:3]
    ['hud/QA-v0', 'hud/Browser-v0', 'hud/Ubuntu-v0']
    >>> get_gym("desktop").name
    'ubuntu'
"""

from __future__ import annotations

from hud_gym.core.gym_type import DEFAULT_GYM, GymType, UnknownGymError, all_gyms, get_gym, gym_of_env, register_gym
from hud_gym.envs import browser, qa, ubuntu

__all__ = [
    "BUILTIN_GYMS",
    "DEFAULT_GYM",
    "GymType",
    "UnknownGymError",
    "all_gyms",
    "get_gym",
    "gym_of_env",
    "register_gym",
]

BUILTIN_GYMS: tuple[GymType, ...] = (
    register_gym(qa.GYM),
    register_gym(browser.GYM),
    register_gym(ubuntu.GYM),
)
"""The gym types hud-gym ships, registered when :mod:`hud_gym` is imported."""
