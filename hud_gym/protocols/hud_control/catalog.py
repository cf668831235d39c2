"""The tasks a HUD control channel offers: one hud-gym task set, as ``tasks.list`` lists it.

Each task of the set is offered under its id (a task without one as ``task-<index>``), described
by its prompt's first line (cut to 256 characters), with the JSON schema of the arguments
``tasks.start`` takes: ``seed`` (the episode's seed), nothing else.

Example:
    >>> catalog = TaskCatalog.load("qa-basic")
    >>> catalog.entries()[0]["id"]
    'capital-france'
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hud_gym.bounds import clip_text
from hud_gym.errors import HudGymError
from hud_gym.task import Task, TaskSet
from hud_gym.tasksets import load_taskset

__all__ = ["DESCRIPTION_CHARS", "StartArgs", "TaskCatalog", "UnknownTaskError"]

DESCRIPTION_CHARS = 256
"""A task's description in ``tasks.list``: its prompt's first line, cut to this many characters."""


class UnknownTaskError(HudGymError, KeyError):
    """``tasks.start`` named a task the catalog does not have."""


class StartArgs(BaseModel):
    """The ``args`` of ``tasks.start``: what a client may choose about an episode (nothing else)."""

    model_config = ConfigDict(extra="forbid")

    seed: int | None = Field(default=None, ge=0, lt=2**63, description="The episode's seed.")


class TaskCatalog:
    """The tasks of one task set by id; see the module docstring."""

    def __init__(self, name: str, tasks: TaskSet) -> None:
        self.name = name
        self.tasks: dict[str, Task] = {}
        for index, task in enumerate(tasks.tasks):
            self.tasks.setdefault(task.id or f"task-{index}", task)
        if not self.tasks:
            raise ValueError(f"task set {name!r} has no tasks to serve")

    @classmethod
    def load(cls, name_or_path: str) -> TaskCatalog:
        """The catalog of a task set by name or path (:func:`hud_gym.tasksets.load_taskset`)."""
        return cls(str(name_or_path), load_taskset(name_or_path))

    def entries(self) -> list[dict[str, Any]]:
        """The ``tasks`` of ``tasks.list``: ``{id, description, args}`` per task."""
        schema = StartArgs.model_json_schema()
        return [
            {
                "id": task_id,
                "description": clip_text(task.prompt.strip().split("\n", 1)[0], DESCRIPTION_CHARS),
                "args": schema,
            }
            for task_id, task in self.tasks.items()
        ]

    def task(self, task_id: Any) -> Task:
        """The task ``task_id``.

        Raises:
            UnknownTaskError: no task has that id (the message says how many there are).
        """
        task = self.tasks.get(task_id) if isinstance(task_id, str) else None
        if task is None:
            shown = clip_text(repr(task_id), 300)
            raise UnknownTaskError(f"unknown task: {shown} (task set {self.name!r} has {len(self.tasks)} tasks)")
        return task

    @staticmethod
    def start_args(args: Any) -> StartArgs:
        """``tasks.start``'s ``args`` read with :class:`StartArgs`.

        Raises:
            ValueError: not an object, an unknown key, or a bad seed (the message names it).
        """
        if args is None:
            return StartArgs()
        if not isinstance(args, dict):
            raise ValueError("tasks.start: 'args' must be an object")
        try:
            return StartArgs.model_validate(args)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'args'}: {e['msg']}" for e in exc.errors())
            raise ValueError(f"tasks.start: bad args ({clip_text(problems, 1000)}); known args: seed") from None
