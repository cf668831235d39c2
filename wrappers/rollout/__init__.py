"""Trainer-agnostic rollouts: a task run by a policy, as a :class:`~hud_gym.Trajectory`.

- :mod:`~hud_gym.wrappers.rollout.grpo`: :func:`rollout`, :func:`rollout_group` (G runs of one task
  from one seed), :func:`rollout_groups` (groups streamed as they complete), :func:`group_advantages`;
- :mod:`~hud_gym.wrappers.rollout.pool`: :class:`EnvPool`, warm envs that rollouts lease;
- :mod:`~hud_gym.wrappers.rollout.placement`: which controller place (local, subprocess, a
  ``ws://`` server of a fleet) each env of a batch uses.

Example:
    >>> async def main():
    ...     async with EnvPool(size=8) as pool:
    ...         group = await rollout_group("qa-basic/capital-france", policy, 8, pool=pool)
    ...     return group_advantages(group.rewards())
"""

from hud_gym.wrappers.rollout.grpo import (
    Policy,
    PolicyOutput,
    group_advantages,
    rollout,
    rollout_group,
    rollout_groups,
)
from hud_gym.wrappers.rollout.placement import controller_kwargs, spreads_controllers
from hud_gym.wrappers.rollout.pool import EnvPool

__all__ = [
    "EnvPool",
    "Policy",
    "PolicyOutput",
    "controller_kwargs",
    "group_advantages",
    "rollout",
    "rollout_group",
    "rollout_groups",
    "spreads_controllers",
]
