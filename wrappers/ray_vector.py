"""Moved to :mod:`hud_gym.wrappers.integrations.ray_vector` (the actors to :mod:`hud_gym.wrappers.integrations.ray_actors`); this old path keeps working."""

# The ``X as X`` names were public in the old module without being in its ``__all__``.
from hud_gym.wrappers.integrations.ray_actors import (
    CLOSE_TIMEOUT_S as CLOSE_TIMEOUT_S,
)
from hud_gym.wrappers.integrations.ray_actors import (
    DEFAULT_ACTOR_OPTIONS,
    EnvWorker,
    GymEnvMaker,
    ensure_ray,
    import_ray,
    writable,
)
from hud_gym.wrappers.integrations.ray_actors import (
    RAY_INSTALL_HINT as RAY_INSTALL_HINT,
)
from hud_gym.wrappers.integrations.ray_actors import (
    close_actors as close_actors,
)
from hud_gym.wrappers.integrations.ray_actors import (
    failure_message as failure_message,
)
from hud_gym.wrappers.integrations.ray_actors import (
    remote_worker as remote_worker,
)
from hud_gym.wrappers.integrations.ray_vector import RayVectorEnv

__all__ = ["DEFAULT_ACTOR_OPTIONS", "EnvWorker", "GymEnvMaker", "RayVectorEnv", "ensure_ray", "import_ray", "writable"]
