"""The env options a task set is meant to run with, and the check of a run's options before any
env starts (``run_job`` and ``hud-gym run`` share both).

Example:
    >>> from hud_gym.tasksets import load_taskset
    >>> taskset_env_defaults(load_taskset("miniwob"))
    {'observation_crop': (0, 0, 160, 210), 'screen_size': (500, 320)}
    >>> taskset_env_defaults(load_taskset("qa-basic"))
    {}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hud_gym.core.options import check_env_options
from hud_gym.core.suite import suite_of_tasks
from hud_gym.gyms import get_gym
from hud_gym.task import Task

__all__ = ["check_options", "taskset_env_defaults"]


def taskset_env_defaults(tasks: Iterable[Task]) -> dict[str, Any]:
    """The screen and observed region of the suite every task belongs to (MiniWoB++: a 500x320
    screen and its 160x210 task area, as the benchmark shows it); none for other task sets."""
    suite = suite_of_tasks(tasks)
    defaults: dict[str, Any] = {}
    if suite is not None and suite.observation_crop is not None:
        defaults["observation_crop"] = suite.observation_crop
    if suite is not None and suite.screen_size is not None:
        defaults["screen_size"] = suite.screen_size
    return defaults


def check_options(tasks: Iterable[Task], env_kwargs: Mapping[str, Any]) -> None:
    """Refuse an option that the env of some task does not take (naming the closest ones).

    Raises:
        UnknownEnvOptionError: a ``TypeError``.
    """
    gyms = {gym.id: gym for gym in (get_gym(task.gym) for task in tasks)}
    for gym in gyms.values():
        check_env_options(gym.env, env_kwargs, gym.id)
