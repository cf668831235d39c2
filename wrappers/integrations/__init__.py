"""Adapters between hud-gym and other libraries; each is an optional extra, so this package
imports none of them (import the module you use):

- stable-baselines3 (``pip install 'hud-gym[sb3]'``): :mod:`~hud_gym.wrappers.integrations.sb3_vec_env`
  (an SB3 ``VecEnv``), :mod:`~hud_gym.wrappers.integrations.sb3_actions` and
  :mod:`~hud_gym.wrappers.integrations.sb3_observations` (flat action and observation spaces);
- Ray (``pip install 'hud-gym[ray]'``): :mod:`~hud_gym.wrappers.integrations.ray_vector` (a vector
  env whose sub-envs live in actors), :mod:`~hud_gym.wrappers.integrations.ray_pool` (an env pool
  of actors), :mod:`~hud_gym.wrappers.integrations.ray_actors` (the actors themselves);
- TRL (``pip install 'hud-gym[train]'``): :mod:`~hud_gym.wrappers.integrations.trl`
  (``GRPOTrainer(environment_factory=...)``);
- verifiers: :mod:`~hud_gym.wrappers.integrations.verifiers_v1` (verifiers >= 0.4 ``Trace``
  records).

Example:
    >>> from hud_gym.wrappers.integrations.sb3_vec_env import to_sb3_vec_env  # doctest: +SKIP
"""
