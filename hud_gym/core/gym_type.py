"""The descriptor of a gym type (:class:`GymType`) and the registry every part of hud-gym reads.

A gym type is an env class (a :class:`~hud_gym.core.env.HudEnv` subclass), the controller it
drives, the modules that register its setup/evaluate functions, and a few facts: its Gymnasium
id, the names tasks give it (``Task.gym``), its default step limit, whether it is deterministic.
One :class:`GymType`, defined next to its env class, says all of that; :func:`register_gym`
(called once per gym: :mod:`hud_gym.gyms` for hud-gym's own) makes the rest of hud-gym read it:

- Gymnasium: the id, with the env class as entry point and a ``HudVectorEnv`` of it as
  ``vector_entry_point`` (``gymnasium.make`` / ``make_vec``);
- the function registry (:mod:`hud_gym.evaluation`): the gym's function modules, imported the
  first time its names are needed, and the dotted prefixes of its namespace;
- the task sets (:mod:`hud_gym.tasksets`): the named task sets the gym generates;
- the env core: the env's ``gym`` name, default step limit and controller factory;
- :func:`get_gym` for ``hud_gym.make``, task validation, the task-set formats, the CLI and a
  controller server (``controller_factory()`` of the gym it serves).

Example:
    >>> get_gym("hud-browser").id
    'hud/Browser-v0'
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import gymnasium

from hud_gym.core.gym_options import GymOptions
from hud_gym.errors import HudGymError
from hud_gym.evaluation.registry import REGISTRY
from hud_gym.tasksets import register_taskset

__all__ = [
    "DEFAULT_GYM",
    "VECTOR_ENTRY_MODULE",
    "GymType",
    "UnknownGymError",
    "all_gyms",
    "get_gym",
    "gym_of_env",
    "import_path",
    "register_gym",
]

DEFAULT_GYM = "qa"
"""The gym of a task whose ``gym`` is unset."""

VECTOR_ENTRY_MODULE = "hud_gym.wrappers.vector.entry_points"
"""The module whose attribute ``<gym name>`` is the ``vector_entry_point`` of that gym's id."""

_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")


class UnknownGymError(HudGymError, ValueError):
    """No registered gym has this name, alias or Gymnasium id."""


def import_path(path: str) -> Any:
    """The object at ``"package.module:attribute"`` (imported now)."""
    module, _, attribute = path.partition(":")
    if not module or not attribute:
        raise ValueError(f"an import path looks like 'package.module:attribute', got {path!r}")
    obj: Any = importlib.import_module(module)
    for part in attribute.split("."):
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True)
class GymType:
    """What hud-gym knows of one gym type (see the module docstring).

    Attributes:
        name: the gym's name (lower case): ``Task.gym``, ``env.gym``, ``FunctionContext.gym``,
            the key of its functions in the registry.
        id: its Gymnasium id (``"hud/Browser-v0"``).
        env: its env class, a ``HudEnv`` subclass.
        controller: its controller: a ``Controller`` class, a callable ``(screen_size, options)
            -> Controller``, or the import path of either (``"package.module:Name"``, imported
            when the first controller is made, so that defining the gym imports nothing heavy).
        options: its options model (:mod:`hud_gym.core.gym_options`): the env's keywords, the
            controller's ``options``, a controller server's JSON (default: none).
        aliases: other names tasks may give it (``"hud-browser"``); matched case-insensitively.
        function_modules: modules that register its setup/evaluate functions (imported the first
            time a task of this gym names a function).
        function_prefixes: prefixes of its namespace in dotted function names
            (``"chrome.maximize"`` is ``maximize``); default: the name.
        tasksets: named task sets it generates: name to the import path of a function returning
            a ``TaskSet`` (``load_taskset(name)`` calls it).
        remote_name: the gym a controller server serves for it (default: ``name``).
        deterministic: the same seed and actions give the same observations
            (``check_env``'s determinism checks run; Gymnasium's ``nondeterministic`` otherwise).
        max_episode_steps: steps before truncation when the env is not given ``max_steps``.
        description: one line for listings.
    """

    name: str
    id: str
    env: type[Any]
    controller: str | Callable[..., Any]
    options: type[GymOptions] = GymOptions
    aliases: tuple[str, ...] = ()
    function_modules: tuple[str, ...] = ()
    function_prefixes: tuple[str, ...] = ()
    tasksets: Mapping[str, str] = field(default_factory=dict)
    remote_name: str | None = None
    deterministic: bool = False
    max_episode_steps: int | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ValueError(f"a gym name is lower case letters, digits, '-' and '_', got {self.name!r}")
        if "/" not in self.id:
            raise ValueError(f"gym {self.name!r}: a Gymnasium id has a namespace ('ns/Name-v0'), got {self.id!r}")
        if not isinstance(self.env, type):
            raise TypeError(f"gym {self.name!r}: env must be the env class, got {self.env!r}")
        if not (isinstance(self.options, type) and issubclass(self.options, GymOptions)):
            raise TypeError(f"gym {self.name!r}: options must be a GymOptions subclass, got {self.options!r}")
        if self.max_episode_steps is not None and self.max_episode_steps < 1:
            raise ValueError(f"gym {self.name!r}: max_episode_steps must be at least 1, got {self.max_episode_steps}")
        object.__setattr__(self, "aliases", tuple(a.lower() for a in self.aliases))
        object.__setattr__(self, "function_modules", tuple(self.function_modules))
        object.__setattr__(self, "function_prefixes", tuple(self.function_prefixes) or (self.name,))
        object.__setattr__(self, "tasksets", MappingProxyType(dict(self.tasksets)))

    @property
    def names(self) -> tuple[str, ...]:
        """The name and the aliases."""
        return (self.name, *self.aliases)

    @property
    def served_as(self) -> str:
        """The gym a controller server serves for this one."""
        return self.remote_name or self.name

    @property
    def entry_point(self) -> str:
        """Gymnasium's ``entry_point``: the env class's import path."""
        return f"{self.env.__module__}:{self.env.__qualname__}"

    @property
    def vector_entry_point(self) -> str:
        """Gymnasium's ``vector_entry_point``: a ``HudVectorEnv`` of this gym's env class."""
        return f"{VECTOR_ENTRY_MODULE}:{self.name}"

    def register_id(self) -> None:
        """Register the Gymnasium id (unless it is registered already). The env enforces
        reset-before-step and its own step limit, and sanitises its observations: no
        ``OrderEnforcing`` or passive checker, and ``gymnasium.make`` returns the env itself."""
        if self.id not in gymnasium.registry:
            gymnasium.register(
                id=self.id,
                entry_point=self.entry_point,
                vector_entry_point=self.vector_entry_point,
                nondeterministic=not self.deterministic,
                order_enforce=False,
                disable_env_checker=True,
            )

    def controller_factory(self) -> Callable[..., Any]:
        """The controller class (or factory), imported now if given by path."""
        return import_path(self.controller) if isinstance(self.controller, str) else self.controller

    def make_controller(self, screen_size: tuple[int, int], options: GymOptions) -> Any:
        """A new (not started) controller of this gym, with ``options`` (of its :attr:`options` model).

        Raises:
            TypeError: ``options`` is not of this gym's options model.
        """
        if not isinstance(options, self.options):
            raise TypeError(f"gym {self.name!r} takes {self.options.__name__}, got {type(options).__name__}")
        return self.controller_factory()(screen_size, options)


_GYMS: dict[str, GymType] = {}
_LOOKUP: dict[str, str] = {}


def register_gym(gym: GymType, *, replace: bool = False) -> GymType:
    """Make ``gym`` known to Gymnasium, the function registry, the task sets and :func:`get_gym`
    (see the module docstring). Registering the same descriptor again does nothing.

    Raises:
        ValueError: another gym already has this name, an alias, the id or the env class (which
            names its gym: :func:`gym_of_env`), unless ``replace``.
    """
    current = _GYMS.get(gym.name)
    if current == gym:
        return current
    keys = {key.lower(): gym.name for key in (*gym.names, gym.id)}
    taken = sorted(key for key, owner in keys.items() if _LOOKUP.get(key, gym.name) != gym.name)
    if (taken or current is not None) and not replace:
        raise ValueError(
            f"gym {gym.name!r}: {', '.join(taken) or gym.name!r} already names another gym "
            "(pass replace=True to redefine it)"
        )
    owner = next((other.name for other in _GYMS.values() if other.env is gym.env and other.name != gym.name), None)
    if owner is not None and not replace:
        raise ValueError(
            f"gym {gym.name!r}: its env class {gym.env.__name__} is gym {owner!r}'s (the class names its gym): "
            "give this gym a subclass of it"
        )
    if current is not None:
        for key in [k for k, owner in _LOOKUP.items() if owner == current.name]:
            del _LOOKUP[key]
    _GYMS[gym.name] = gym
    _LOOKUP.update(keys)
    REGISTRY.add_gym(gym.name, prefixes=gym.function_prefixes, function_modules=gym.function_modules)
    for name, loader in gym.tasksets.items():
        register_taskset(name, loader)
    if replace and gym.id in gymnasium.registry:
        del gymnasium.registry[gym.id]
    gym.register_id()
    return gym


def get_gym(gym: str | None = None) -> GymType:
    """The gym named ``gym``: a name, an alias (any case) or a Gymnasium id; ``None``: the default
    gym (:data:`DEFAULT_GYM`).

    Raises:
        UnknownGymError: no such gym; the message lists the known names.
    """
    found = _LOOKUP.get((gym if gym is not None else DEFAULT_GYM).lower())
    if found is None:
        known = sorted({name for g in _GYMS.values() for name in g.names})
        raise UnknownGymError(
            f"unknown gym {gym!r}; expected one of {', '.join(known)} or a gym id "
            f"({', '.join(sorted(g.id for g in _GYMS.values()))})"
        )
    return _GYMS[found]


def all_gyms() -> tuple[GymType, ...]:
    """Every registered gym, in registration order."""
    return tuple(_GYMS.values())


def gym_of_env(env_class: type[Any]) -> GymType | None:
    """The gym whose env class is ``env_class`` or its nearest registered base, if any."""
    by_class = {gym.env: gym for gym in _GYMS.values()}
    return next((by_class[cls] for cls in env_class.__mro__ if cls in by_class), None)
