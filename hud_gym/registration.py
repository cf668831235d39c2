"""Registers the hud-gym environment ids with Gymnasium (done on ``import hud_gym``).

The envs enforce reset-before-step and their own step limit (so the reward of the final,
truncated step is the evaluator's), and their observations are sanitised into their spaces;
so they are registered without Gymnasium's ``OrderEnforcing`` and passive-checker wrappers, and
``gymnasium.make`` returns the env itself: ``env.evaluate()`` and ``env.final_response`` work on
it as in HUD. ``gymnasium.utils.env_checker.check_env`` passes on every id.
"""

from __future__ import annotations

import gymnasium

__all__ = ["GYM_IDS", "gym_id_for", "register_envs"]

GYM_IDS: dict[str, str] = {
    "qa": "hud/QA-v0",
    "browser": "hud/Browser-v0",
    "ubuntu": "hud/Ubuntu-v0",
}
"""Gym type to Gymnasium id."""

_GYM_ALIASES: dict[str, str] = {
    "qa": "qa",
    "question-answer": "qa",
    "hud-browser": "browser",
    "browser": "browser",
    "hud-ubuntu": "ubuntu",
    "ubuntu": "ubuntu",
    "desktop": "ubuntu",
}


def gym_id_for(gym: str | None) -> str:
    """The Gymnasium id for a task's ``gym`` (``"qa"``, ``"hud-browser"``, ``"hud-ubuntu"``, or an id).

    Raises:
        ValueError: unknown gym, or one whose environment is not available yet.
    """
    if gym is None:
        gym = "qa"
    if gym in GYM_IDS.values():
        gym_id = gym
    elif gym.lower() in _GYM_ALIASES:
        gym_id = GYM_IDS[_GYM_ALIASES[gym.lower()]]
    else:
        raise ValueError(f"unknown gym {gym!r}; expected one of {', '.join(sorted(_GYM_ALIASES))} or a hud/ id")
    if gym_id not in gymnasium.registry:
        raise ValueError(f"gym {gym!r} ({gym_id}) is not available in this version of hud-gym")
    return gym_id


# id, env entry point, vector entry point, nondeterministic (a real browser or desktop cannot
# reproduce frames exactly: fonts, animations, timestamps).
_ENVS: tuple[tuple[str, str, str, bool], ...] = (
    ("hud/QA-v0", "hud_gym.envs.qa:QAEnv", "hud_gym.wrappers.vector:qa_vector_env", False),
    ("hud/Browser-v0", "hud_gym.envs.browser:BrowserEnv", "hud_gym.wrappers.vector:browser_vector_env", True),
    ("hud/Ubuntu-v0", "hud_gym.envs.ubuntu:UbuntuEnv", "hud_gym.wrappers.vector:ubuntu_vector_env", True),
)


def register_envs() -> None:
    """Register every hud-gym id (idempotent).

    ``gymnasium.make_vec(id, num_envs=N)`` uses the id's ``vector_entry_point``: a
    :class:`~hud_gym.wrappers.vector.HudVectorEnv` of N envs on one event loop.
    """
    for gym_id, entry_point, vector_entry_point, nondeterministic in _ENVS:
        if gym_id not in gymnasium.registry:
            gymnasium.register(
                id=gym_id,
                entry_point=entry_point,
                vector_entry_point=vector_entry_point,
                nondeterministic=nondeterministic,
                order_enforce=False,
                disable_env_checker=True,
            )
