"""Task families: seeded generators of tasks, each with an oracle that proves every variant solvable.

A :class:`Family` turns ``(seed, difficulty)`` into a :class:`~hud_gym.task.Task` (prompt, setup,
evaluator, metadata), deterministically: the same seed and difficulty give the same task. Its
oracle is a scripted solver that plays CLA actions only (what an agent can do: clicks, typing,
keys), reading the task's parameters and the env's observation and ``info``, never the app's
internals. A difficulty level changes how many steps a solution needs.

Families are grouped by kind (``"office"``, ``"files"``, ``"webapps"``); :func:`register_family`
makes both the family's name and its kind task sets of :func:`~hud_gym.tasksets.load_taskset`,
with a train and a held-out seed range::

    load_taskset("webapps", split="test", n=200)

Train seeds are ``0 .. TEST_SEED_START - 1``; test seeds ``TEST_SEED_START .. 2**31 - 1``.
``hud-gym tasksets check NAME`` proves a family (its oracle scores 1, doing nothing and random
actions do not, the reward-hacking scripts score 0). See ``docs/task-families.md``.

Example:
    >>> sorted({f.kind for f in families()}) <= ["files", "office", "webapps"]
    True
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from types import MappingProxyType
from typing import Any, Literal, Protocol

from hud_gym.actions import CLAAction
from hud_gym.core.gym_type import import_path
from hud_gym.task import Task, TaskSet
from hud_gym.tasksets import register_taskset

__all__ = [
    "KINDS",
    "SEED_LIMIT",
    "TEST_SEED_START",
    "Family",
    "Oracle",
    "families",
    "family_taskset",
    "generate_task",
    "get_family",
    "make_oracle",
    "register_family",
    "split_seed",
]

TEST_SEED_START = 10**9
"""The first held-out (``split="test"``) seed; train seeds are below it."""
SEED_LIMIT = 2**31
"""Seeds are below this."""
KINDS: tuple[str, ...] = ("office", "files", "webapps")
"""The kinds of family hud-gym ships (a kind is also a task set of all its families)."""
_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")


class Oracle(Protocol):
    """A family's scripted solver for one task: one CLA action per call, ``None`` when finished."""

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> CLAAction | None:
        """The next action given the env's latest observation and info (``None``: done)."""
        ...


@dataclass(frozen=True)
class Family:
    """A task family (see the module docstring).

    Attributes:
        name: the family's name (lower case); also a task set of its tasks.
        gym: the gym its tasks run in (``"browser"`` or ``"ubuntu"``).
        kind: ``"office"``, ``"files"`` or ``"webapps"`` (any lower-case name for your own).
        generate: import path ``"pkg.mod:fn"`` of ``fn(seed: int, difficulty: int) -> Task``,
            deterministic; the task's ``metadata`` has ``"family"``, ``"seed"``, ``"difficulty"``
            and ``"benchmark"`` (its suite's name).
        oracle: import path of ``fn(task: Task) -> Oracle``.
        difficulties: the difficulty levels, easiest first.
        description: one line for listings.
        attacks: import path of a sequence of
            :class:`~hud_gym.evaluation.hacking.Attack`: the reward-hacking scripts
            ``hud-gym tasksets check`` plays on its tasks (``None``: none of its own).
        env_options: keyword options of the env its oracle needs (e.g. ``{"elements": True}``:
            the browser's element boxes), used by ``hud-gym tasksets check``.
    """

    name: str
    gym: str
    kind: str
    generate: str
    oracle: str
    difficulties: tuple[int, ...] = (1, 2, 3)
    description: str = ""
    attacks: str | None = None
    env_options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for label, value in (("name", self.name), ("kind", self.kind)):
            if not _NAME.match(value):
                raise ValueError(f"a family {label} is lower case letters, digits, '-' and '_', got {value!r}")
        if not self.difficulties or any(not isinstance(d, int) for d in self.difficulties):
            raise ValueError(f"family {self.name!r}: difficulties are a non-empty tuple of ints")
        object.__setattr__(self, "difficulties", tuple(self.difficulties))
        object.__setattr__(self, "env_options", MappingProxyType(dict(self.env_options)))
        for label, path in (("generate", self.generate), ("oracle", self.oracle)):
            if ":" not in path:
                raise ValueError(f"family {self.name!r}: {label} is an import path 'pkg.mod:fn', got {path!r}")


_FAMILIES: dict[str, Family] = {}


def register_family(family: Family) -> None:
    """Register ``family``: ``load_taskset(family.name, ...)`` and ``load_taskset(family.kind, ...)``
    then give its tasks (keyword options ``split``, ``n``, ``difficulty``, ``start``). Registering
    the same descriptor again does nothing.

    Raises:
        ValueError: another family has this name, or the name is a kind.
    """
    current = _FAMILIES.get(family.name)
    if current == family:
        return
    if current is not None:
        raise ValueError(f"family {family.name!r} is already registered")
    if family.name in KINDS or any(f.kind == family.name for f in _FAMILIES.values()):
        raise ValueError(f"family name {family.name!r} is the name of a kind of family")
    _FAMILIES[family.name] = family
    register_taskset(family.name, partial(family_taskset, family.name))
    register_taskset(family.kind, partial(family_taskset, family.kind))


def get_family(name: str) -> Family:
    """The family named ``name``.

    Raises:
        KeyError: no such family (the message lists the known ones).
    """
    try:
        return _FAMILIES[name]
    except KeyError:
        raise KeyError(f"unknown task family {name!r}; known families: {', '.join(sorted(_FAMILIES))}") from None


def families(kind: str | None = None) -> tuple[Family, ...]:
    """The registered families (of ``kind`` when given), in registration order."""
    return tuple(f for f in _FAMILIES.values() if kind is None or f.kind == kind)


def split_seed(split: Literal["train", "test"], index: int) -> int:
    """The ``index``-th seed of ``split``.

    Raises:
        ValueError: an unknown split, or an index outside the split's range.
    """
    if split not in ("train", "test"):
        raise ValueError(f"split is 'train' or 'test', got {split!r}")
    base, end = (0, TEST_SEED_START) if split == "train" else (TEST_SEED_START, SEED_LIMIT)
    if not 0 <= index < end - base:
        raise ValueError(f"seed index {index} is outside the {split} split (0 .. {end - base - 1})")
    return base + index


def generate_task(family: Family | str, seed: int, difficulty: int) -> Task:
    """The family's task for ``seed`` and ``difficulty``, its metadata checked.

    Raises:
        ValueError: a seed outside ``0 .. 2**31 - 1``, a difficulty the family does not have, or a
            generator whose task lacks the metadata the interface requires.
    """
    family = get_family(family) if isinstance(family, str) else family
    if not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"a family seed is an int in 0 .. {SEED_LIMIT - 1}, got {seed!r}")
    if difficulty not in family.difficulties:
        raise ValueError(f"family {family.name!r} has difficulties {family.difficulties}, got {difficulty!r}")
    task: Task = import_path(family.generate)(seed, difficulty)
    if task.id is None:
        task = task.model_copy(update={"id": f"{family.name}-{seed}-d{difficulty}"})
    metadata = task.metadata or {}
    expected = {"family": family.name, "seed": seed, "difficulty": difficulty}
    wrong = {k: metadata.get(k) for k, v in expected.items() if metadata.get(k) != v}
    if wrong or not metadata.get("benchmark"):
        raise ValueError(
            f"family {family.name!r}: its task's metadata {wrong or metadata} lacks {expected} or benchmark"
        )
    return task


def make_oracle(task: Task) -> Oracle:
    """The oracle of ``task`` (made by its family's ``oracle``).

    Raises:
        ValueError: the task is not a family's (no ``metadata["family"]``).
    """
    name = (task.metadata or {}).get("family")
    if not isinstance(name, str):
        raise ValueError(f"task {task.id!r} is not a family's task (no metadata['family'])")
    oracle: Oracle = import_path(get_family(name).oracle)(task)
    return oracle


def family_taskset(
    kind_or_family: str,
    split: Literal["train", "test"] = "train",
    n: int = 100,
    difficulty: int | None = None,
    start: int = 0,
) -> TaskSet:
    """``n`` tasks of a family, or of every family of a kind (taken in turn), from seed index
    ``start`` of ``split``; each at ``difficulty``, or the family's levels in turn when ``None``.

    Task ``i`` of a kind's ``k`` families is family ``i % k``'s, at seed index ``start + i // k``.

    Raises:
        ValueError: an unknown family or kind, a bad split, ``n`` < 0, or a difficulty no family has.
    """
    chosen = (_FAMILIES[kind_or_family],) if kind_or_family in _FAMILIES else families(kind_or_family)
    if not chosen:
        known = sorted({*_FAMILIES, *(f.kind for f in _FAMILIES.values())})
        raise ValueError(f"no task family or kind {kind_or_family!r}; known: {', '.join(known)}")
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"n is a number of tasks (>= 0), got {n!r}")
    tasks = []
    for i in range(n):
        family = chosen[i % len(chosen)]
        index = start + i // len(chosen)
        level = family.difficulties[index % len(family.difficulties)] if difficulty is None else difficulty
        tasks.append(generate_task(family, split_seed(split, index), level))
    return TaskSet(tasks=tasks, id=f"{kind_or_family}-{split}", description=f"{n} {split} tasks of {kind_or_family}")
