"""Makes hud-gym's gyms usable (done on ``import hud_gym``): their Gymnasium ids, and the remote
placements of their controllers.

The ids come from the gyms' descriptors (:mod:`hud_gym.gyms`). The envs enforce reset-before-step
and their own step limit (so the reward of the final, truncated step is the evaluator's), and
their observations are sanitised into their spaces; so they are registered without Gymnasium's
``OrderEnforcing`` and passive-checker wrappers, and ``gymnasium.make`` returns the env itself:
``env.evaluate()`` and ``env.final_response`` work on it as in HUD.
``gymnasium.utils.env_checker.check_env`` passes on every id.

A process that never imported hud-gym (a Ray worker, a subprocess vector env) finds the ids
through Gymnasium's module form: ``gymnasium.make("hud_gym:hud/Browser-v0")`` imports
:mod:`hud_gym` first.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hud_gym.core.placement import set_remote_placement
from hud_gym.gyms import all_gyms, get_gym

__all__ = ["GYM_IDS", "gym_id_for", "register_envs"]


class _GymIds(Mapping[str, str]):
    """Gym name to Gymnasium id, for every registered gym (read live)."""

    def __getitem__(self, name: str) -> str:
        return next(gym.id for gym in all_gyms() if gym.name == name)

    def __iter__(self) -> Iterator[str]:
        return iter([gym.name for gym in all_gyms()])

    def __len__(self) -> int:
        return len(all_gyms())


GYM_IDS: Mapping[str, str] = _GymIds()
"""Gym name to Gymnasium id (``{"qa": "hud/QA-v0", ...}``), from the descriptors."""


def gym_id_for(gym: str | None) -> str:
    """The Gymnasium id for a task's ``gym`` (a name such as ``"qa"``, an alias such as
    ``"hud-browser"``, or an id; ``None``: the QA gym).

    Raises:
        ValueError: unknown gym (:class:`~hud_gym.core.gym_type.UnknownGymError`).
    """
    return get_gym(gym).id


class _RemoteControllers:
    """The remote placements (``"subprocess"``, ``"docker"``, ``ws://``), served by
    :mod:`hud_gym.controllers.remote.client`, imported when an env first uses one."""

    def check(self, placement: str, token: str | None) -> tuple[str, str | None]:
        from hud_gym.controllers.remote.client import check_remote_placement

        return check_remote_placement(placement, token)

    def controller(
        self, gym: str, screen_size: tuple[int, int], placement: str, token: str | None, options: dict[str, Any]
    ) -> Any:
        from hud_gym.controllers.remote.client import RemoteController

        return RemoteController(gym, screen_size, where=placement, token=token, options=options)


def register_envs() -> None:
    """Register every hud-gym id and the remote controller placements (idempotent).

    ``gymnasium.make_vec(id, num_envs=N)`` uses the id's ``vector_entry_point``: a
    :class:`~hud_gym.wrappers.vector.HudVectorEnv` of N envs on one event loop.
    """
    for gym in all_gyms():
        gym.register_id()
    set_remote_placement(_RemoteControllers())
