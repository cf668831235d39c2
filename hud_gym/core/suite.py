"""Suites: benchmarks and task families that extend a gym (:class:`Suite`, :func:`register_suite`).

A gym (:class:`~hud_gym.core.gym_type.GymType`) is generic: a Chromium tab, a desktop, a
question. A suite (MiniWoB++, OSWorld, a bundled task set) is a package under ``hud_gym/suites/``
(or yours) whose one :class:`Suite` says what it adds to the gym it extends, and
:func:`register_suite` (called once per suite: :mod:`hud_gym.suites` for hud-gym's own) wires it in:

- its task sets (:mod:`hud_gym.tasksets`): name to the import path of a loader;
- its setup/evaluate function modules, added to the gym's (:mod:`hud_gym.evaluation`);
- its env options (keyword arguments of the gym's env), its reset options, and its
  :class:`SuiteExtension`: one per env, whose hooks see the env's tasks, steps and frames
  (:mod:`hud_gym.core.suite_hooks`);
- the gym's controller hooks (``controller_hooks``: an import path of an object of the type the
  gym's controller reads; the browser's is :class:`~hud_gym.controllers.browser.extensions.BrowserExtension`).

Everything heavy is an import path, imported when first used, so that registering imports
nothing. A task belongs to a suite when its ``metadata["benchmark"]`` is the suite's name.
The controllers and envs import no suite: they read this registry.

Example:
    >>> get_suite("miniwob").gym
    'browser'
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from hud_gym.core.gym_type import get_gym, import_path
from hud_gym.evaluation.registry import REGISTRY
from hud_gym.task import Task
from hud_gym.tasksets import register_taskset

__all__ = [
    "Suite",
    "SuiteExtension",
    "all_suites",
    "get_suite",
    "load_extension",
    "register_suite",
    "suite_of_tasks",
    "suites_of",
]

_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")


@dataclass(frozen=True)
class Suite:
    """What a suite adds to the gym it extends (see the module docstring).

    Attributes:
        name: the suite's name (lower case), also its tasks' ``metadata["benchmark"]``.
        gym: the name (or alias) of the gym it extends; normalised to the gym's name.
        tasksets: named task sets: name to the import path of a function returning a ``TaskSet``.
        function_modules: modules that register its setup/evaluate functions in the gym's namespace.
        options: env keyword options it adds, with their defaults (its extension checks them).
        reset_options: ``reset(options=...)`` keys it adds.
        extension: import path of its :class:`SuiteExtension` subclass (``None``: no env hooks).
        controller_hooks: import path of what it adds to the gym's controller (the type the
            gym's controller reads), or ``None``.
        observation_crop: the screen region an env whose tasks are all this suite's observes
            unless given ``observation_crop`` or ``observation_size``.
        screen_size: the screen a job of only its tasks gets unless given one.
        description: one line for listings.
    """

    name: str
    gym: str
    tasksets: Mapping[str, str] = field(default_factory=dict)
    function_modules: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    reset_options: frozenset[str] = frozenset()
    extension: str | None = None
    controller_hooks: str | None = None
    observation_crop: tuple[int, int, int, int] | None = None
    screen_size: tuple[int, int] | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ValueError(f"a suite name is lower case letters, digits, '-' and '_', got {self.name!r}")
        object.__setattr__(self, "tasksets", MappingProxyType(dict(self.tasksets)))
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))
        object.__setattr__(self, "function_modules", tuple(self.function_modules))
        object.__setattr__(self, "reset_options", frozenset(self.reset_options))

    def claims(self, task: Task | None) -> bool:
        """``task`` is one of this suite's (its ``metadata["benchmark"]`` is the suite's name)."""
        return task is not None and (task.metadata or {}).get("benchmark") == self.name


class SuiteExtension:
    """A suite's part of one env: made with the env from the suite's options (defaults filled
    in), consulted at the env's hook points. Every hook's default changes nothing; a suite
    overrides the ones it needs, for the tasks it :meth:`Suite.claims`.

    Attributes:
        suite: the suite's descriptor.
        options: its env options (the env's arguments, else the defaults).
    """

    def __init__(self, suite: Suite, options: Mapping[str, Any]) -> None:
        self.suite = suite
        self.options = dict(options)

    def pick_task(self, task: Task | None, options: Mapping[str, Any]) -> Task | None:
        """The task of the episode a reset with ``options`` starts (``task``: the env's pick)."""
        return task

    def finish_step(
        self, env: Any, observation: dict[str, Any], reward: float | None, terminated: bool, info: dict[str, Any]
    ) -> tuple[dict[str, Any], float | None]:
        """The step's observation and reward, after grading (the env's task is this suite's)."""
        return observation, reward

    def frame_info(self, env: Any, info: dict[str, Any]) -> None:
        """Adjust a frame's ``info`` before the env observes it (e.g. boxes to observation pixels)."""


_SUITES: dict[str, Suite] = {}


def register_suite(suite: Suite, *, replace: bool = False) -> Suite:
    """Make ``suite`` part of its gym: its task sets, functions, options and hooks (see the module
    docstring). Registering the same descriptor again does nothing.

    Raises:
        UnknownGymError: its gym is not registered.
        ValueError: another suite has this name (unless ``replace``), an option of the gym's own
            (its options model), or an option or reset option of another suite of the gym.
    """
    suite = _normalised(suite)
    current = _SUITES.get(suite.name)
    if current == suite:
        return current
    if current is not None and not replace:
        raise ValueError(f"suite {suite.name!r} is already registered (pass replace=True to redefine it)")
    clash = set(suite.options) & set(get_gym(suite.gym).options.model_fields)
    if clash:
        raise ValueError(f"suite {suite.name!r}: {', '.join(sorted(clash))} already name options of gym {suite.gym!r}")
    for other in suites_of(suite.gym):
        shared = (set(other.options) & set(suite.options)) | (other.reset_options & suite.reset_options)
        if other.name != suite.name and shared:
            raise ValueError(
                f"suite {suite.name!r}: {', '.join(sorted(shared))} already belong to suite {other.name!r}"
            )
    _SUITES[suite.name] = suite
    REGISTRY.add_modules(suite.gym, suite.name, suite.function_modules)
    for name, loader in suite.tasksets.items():
        register_taskset(name, loader)
    return suite


def _normalised(suite: Suite) -> Suite:
    gym = get_gym(suite.gym).name
    return suite if gym == suite.gym else dataclasses.replace(suite, gym=gym)


def get_suite(name: str) -> Suite:
    """The suite named ``name``.

    Raises:
        KeyError: no such suite (the message lists the known ones).
    """
    try:
        return _SUITES[name]
    except KeyError:
        raise KeyError(f"unknown suite {name!r}; known suites: {', '.join(sorted(_SUITES))}") from None


def all_suites() -> tuple[Suite, ...]:
    """Every registered suite, in registration order."""
    return tuple(_SUITES.values())


def suites_of(gym: str) -> tuple[Suite, ...]:
    """The suites that extend ``gym`` (its name), in registration order."""
    return tuple(suite for suite in _SUITES.values() if suite.gym == gym)


def suite_of_tasks(tasks: Iterable[Task | None]) -> Suite | None:
    """The suite every task (at least one) belongs to, if any."""
    tasks = list(tasks)
    if not tasks:
        return None
    return next((suite for suite in _SUITES.values() if all(suite.claims(task) for task in tasks)), None)


def load_extension(suite: Suite) -> type[SuiteExtension] | None:
    """The suite's :class:`SuiteExtension` class (imported now), if it has one."""
    return import_path(suite.extension) if suite.extension else None
