"""Moved to :mod:`hud_gym.wrappers.integrations.sb3_vec_env`; this old path keeps working."""

# The ``X as X`` names were public in the old module without being in its ``__all__``.
from hud_gym.wrappers.integrations.sb3_vec_env import (
    HudSB3VecEnv,
    to_sb3_vec_env,
    unbatch_infos,
)
from hud_gym.wrappers.integrations.sb3_vec_env import (
    logger as logger,
)

__all__ = ["HudSB3VecEnv", "to_sb3_vec_env", "unbatch_infos"]
