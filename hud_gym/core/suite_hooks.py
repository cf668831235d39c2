"""The suites of one env (:class:`EnvSuites`): the env's hook points call them.

An env of a gym makes one :class:`~hud_gym.core.suite.SuiteExtension` per suite of its gym that
has one, from the suite options among its keyword arguments (the suite's defaults otherwise);
:class:`~hud_gym.core.episode.EpisodeRunner` and :class:`~hud_gym.core.env.HudEnv` call them where a
suite may change an episode: the task a reset picks, the step's observation and reward, a
frame's ``info``. A step's hooks run for the suite the episode's task belongs to.

Example:
    >>> import hud_gym
    >>> env = hud_gym.make("hud/Browser-v0", reward_processor="binary")  # doctest: +SKIP
    >>> env.suites["miniwob"].options["reward_processor"]                # doctest: +SKIP
    'binary'
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hud_gym.core.suite import SuiteExtension, load_extension, suite_of_tasks, suites_of
from hud_gym.task import Task

__all__ = ["EnvSuites", "default_crop", "suite_option_names"]


def suite_option_names(gym: str) -> set[str]:
    """The env options the suites of ``gym`` add."""
    return {name for suite in suites_of(gym) for name in suite.options}


class EnvSuites(Mapping[str, SuiteExtension]):
    """Suite name to its extension, for one env of ``gym`` (see the module docstring).

    Args:
        gym: the env's gym name.
        options: the env's suite options (every key one that a suite of the gym declares: the
            env checks them first, :func:`suite_option_names`).

    Raises:
        ValueError: an extension refused its options (its message names the option).
    """

    def __init__(self, gym: str, options: Mapping[str, Any]) -> None:
        self._extensions: dict[str, SuiteExtension] = {}
        self.reset_options: frozenset[str] = frozenset()
        for suite in suites_of(gym):
            self.reset_options |= suite.reset_options
            extension = load_extension(suite)
            if extension is not None:
                given = {name: options[name] for name in suite.options if name in options}
                self._extensions[suite.name] = extension(suite, {**suite.options, **given})

    def __getitem__(self, name: str) -> SuiteExtension:
        return self._extensions[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._extensions)

    def __len__(self) -> int:
        return len(self._extensions)

    def of(self, task: Task | None) -> SuiteExtension | None:
        """The extension of the suite ``task`` belongs to, if it has one."""
        return next((ext for ext in self._extensions.values() if ext.suite.claims(task)), None)

    def pick_task(self, task: Task | None, options: Mapping[str, Any]) -> Task | None:
        """The reset's task after every suite's :meth:`~SuiteExtension.pick_task`."""
        for extension in self._extensions.values():
            task = extension.pick_task(task, options)
        return task

    def finish_step(
        self, env: Any, observation: dict[str, Any], reward: float | None, terminated: bool, info: dict[str, Any]
    ) -> tuple[dict[str, Any], float | None]:
        """The step's observation and reward after the task's suite's hook."""
        extension = self.of(getattr(env, "task", None))
        if extension is None:
            return observation, reward
        return extension.finish_step(env, observation, reward, terminated, info)

    def frame_info(self, env: Any, info: dict[str, Any]) -> None:
        """A frame's ``info`` after every suite's hook (each acts on what it added)."""
        for extension in self._extensions.values():
            extension.frame_info(env, info)


def default_crop(gym: str, tasks: list[Task]) -> tuple[int, int, int, int] | None:
    """The region an env of ``gym`` observes by default for ``tasks``: the ``observation_crop``
    of the suite of ``gym`` every task belongs to, if any."""
    suite = suite_of_tasks(tasks)
    return suite.observation_crop if suite is not None and suite.gym == gym else None
