"""Vector envs: N hud-gym envs stepped as one batch, with Gymnasium's ``VectorEnv`` API.

- :class:`HudVectorEnv` (:mod:`~hud_gym.wrappers.vector.local`): N envs in this process, stepped
  concurrently on hud-gym's event loop (what ``gymnasium.make_vec("hud/...", num_envs=N)`` gives);
- :class:`SendRecvVectorEnv` (:mod:`~hud_gym.wrappers.vector.send_recv`): the base of every
  hud-gym vector env, EnvPool's pattern (``step`` is ``send`` + ``recv``; a backend supplies
  ``_reset``, ``_send`` and ``_recv``), also of Ray's
  :class:`~hud_gym.wrappers.integrations.ray_vector.RayVectorEnv`;
- :mod:`~hud_gym.wrappers.vector.autoreset`: Gymnasium's three autoreset modes, written once;
- :mod:`~hud_gym.wrappers.vector.batching`: seeds, ``reset_mask``, batched actions and rows;
- :mod:`~hud_gym.wrappers.vector.dict_actions`: CLA actions as the batched ``Dict`` action
  (``envs.batch_actions([...])``).

The ``vector_entry_point`` of each gym id names :mod:`~hud_gym.wrappers.vector.entry_points`
(``hud_gym.wrappers.vector.entry_points:qa``).

Example:
    >>> import gymnasium, hud_gym
    >>> envs = gymnasium.make_vec("hud/QA-v0", num_envs=4, taskset="qa-basic")
    >>> isinstance(envs, HudVectorEnv)
    True
    >>> envs.close()
"""

from hud_gym.wrappers.vector.entry_points import browser_vector_env, qa_vector_env, ubuntu_vector_env
from hud_gym.wrappers.vector.local import HudVectorEnv
from hud_gym.wrappers.vector.send_recv import SendRecvVectorEnv

__all__ = ["HudVectorEnv", "SendRecvVectorEnv", "browser_vector_env", "qa_vector_env", "ubuntu_vector_env"]
