"""Everything built on top of a single hud-gym env, in three groups (the layers import downward):

- :mod:`hud_gym.wrappers.vector`: batched vector envs, Gymnasium's ``VectorEnv`` API with
  EnvPool-style ``send``/``recv`` (``gymnasium.make_vec("hud/QA-v0", num_envs=4)`` gives one);
- :mod:`hud_gym.wrappers.rollout`: trainer-agnostic rollouts: GRPO groups, a pool of warm envs,
  and where the envs of a batch run their controllers;
- :mod:`hud_gym.wrappers.integrations`: adapters for other libraries (stable-baselines3, Ray,
  TRL, verifiers), each imported only when used: ``import hud_gym.wrappers`` imports none of them.

Example:
    >>> from hud_gym.wrappers.rollout import EnvPool, rollout_group
    >>> from hud_gym.wrappers.vector import HudVectorEnv
"""
