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


def register_envs() -> None:
    """Register every available hud-gym id (idempotent)."""
    if "hud/QA-v0" not in gymnasium.registry:
        gymnasium.register(
            id="hud/QA-v0",
            entry_point="hud_gym.envs.qa:QAEnv",
            nondeterministic=False,
            order_enforce=False,
            disable_env_checker=True,
        )
    if "hud/Browser-v0" not in gymnasium.registry:
        gymnasium.register(
            id="hud/Browser-v0",
            entry_point="hud_gym.envs.browser:BrowserEnv",
            nondeterministic=True,
            order_enforce=False,
            disable_env_checker=True,
        )
