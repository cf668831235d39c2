"""Tasks: what an agent must do, how to set it up, and how to grade it.

``setup`` and ``evaluate`` accept HUD's function-config grammar in all its forms, normalised to a
list of :class:`FunctionConfig`:

- ``"name"`` or a dotted ``"browser.maximize"``;
- ``("name", *args)`` (in JSON/YAML a list inside the list: ``[["goto", "https://x"]]``);
- ``{"function": "name", "args": [...], "kwargs": {...}}`` (``args`` may be omitted; a non-list
  ``args`` is one argument);
- a :class:`FunctionConfig`;
- a list mixing any of these (run in order).

Example:
    >>> task = Task(prompt="Capital of France?", evaluate=("response_includes", "Paris"))
    >>> task.evaluate
    [FunctionConfig(function='response_includes', args=['Paris'], kwargs={}, id=None, metadata=None)]
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hud_gym.bounds import PROMPT_CHARS, TASK_ID_CHARS, sanitize_value
from hud_gym.task_files import TaskFileError, check_unique_ids, jsonl_records, parse_json, parse_yaml, read_text

__all__ = [
    "FunctionConfig",
    "FunctionConfigs",
    "Task",
    "TaskFileError",
    "TaskSet",
    "custom_gym",
    "expand_config",
    "one_call_hint",
]

_NAME_PART = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class FunctionConfig(BaseModel):
    """One call of a setup or evaluate function: ``function(*args, **kwargs)``.

    ``function`` is a name or a dotted name whose every part is an identifier.
    """

    model_config = ConfigDict(extra="forbid")

    function: str
    args: list[Any] = Field(default_factory=list)
    kwargs: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None
    metadata: dict[str, Any] | None = None

    @field_validator("function")
    @classmethod
    def _dotted_name(cls, value: str) -> str:
        if not value or not all(_NAME_PART.match(part) for part in value.split(".")):
            shown = repr(value) if len(value) <= 80 else repr(value[:80]) + f"... ({len(value)} characters)"
            raise ValueError(f"{shown} is not a function name (identifiers joined by dots, e.g. 'browser.maximize')")
        return value

    @field_validator("args", mode="before")
    @classmethod
    def _wrap_args(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, tuple):
            return list(value)
        return value if isinstance(value, list) else [value]

    @field_validator("kwargs", mode="before")
    @classmethod
    def _none_kwargs(cls, value: Any) -> Any:
        return {} if value is None else value

    def __str__(self) -> str:
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"{self.function}({', '.join(parts)})"


FunctionConfigs = Any
"""Anything :func:`expand_config` accepts."""


def _one(item: Any) -> FunctionConfig:
    if isinstance(item, FunctionConfig):
        return item
    if isinstance(item, str):
        return FunctionConfig(function=item)
    if isinstance(item, (tuple, list)):
        if not item or not isinstance(item[0], str):
            raise ValueError(f"a tuple config must start with the function name, got {item!r}")
        return FunctionConfig(function=item[0], args=list(item[1:]))
    if isinstance(item, dict):
        if "function" not in item:
            raise ValueError(f"a dict config needs a 'function' key, got keys {sorted(item)}")
        unknown = set(item) - {"function", "args", "kwargs", "id", "metadata"}
        if unknown:
            raise ValueError(f"unknown key(s) {sorted(unknown)} in function config {item!r}")
        return FunctionConfig(**item)
    raise ValueError(f"cannot read a function config from {type(item).__name__} {item!r}")


def expand_config(config: FunctionConfigs) -> list[FunctionConfig]:
    """Normalise any function-config form to a list of :class:`FunctionConfig`.

    A top-level tuple is one call (``("goto", url)``); a top-level list is a sequence of calls,
    each of which may be a name, a tuple/list (name then args), a dict or a FunctionConfig.

    Raises:
        ValueError: the config is not one of the accepted forms (the message says which part).
    """
    if config is None:
        return []
    if isinstance(config, list):
        out = []
        for i, item in enumerate(config):
            try:
                out.append(_one(item))
            except ValidationError as exc:
                first = exc.errors(include_url=False)[0]
                where = ".".join(str(p) for p in first["loc"])
                raise ValueError(
                    f"{one_call_hint(config)}item {i}: {where + ': ' if where else ''}{first['msg']}"
                ) from None
            except ValueError as exc:
                raise ValueError(f"{one_call_hint(config)}item {i}: {exc}") from None
        return out
    return [_one(config)]


def one_call_hint(config: Any) -> str:
    """The hint for JSON's tuple trap: ``["goto", "google.com"]`` (a flat list starting with a
    name) is a *sequence* of calls, ``goto()`` then ``google.com()``; one call with arguments is a
    list inside the list, ``[["goto", "google.com"]]``. It leads the error message (which may be
    cut at its end); empty when ``config`` is not such a list."""
    if isinstance(config, list) and config and all(isinstance(c, FunctionConfig) for c in config):
        if len(config) < 2 or any(c.args or c.kwargs for c in config):
            return ""
        config = [c.function for c in config]
    scalars = (str, int, float, bool, type(None))
    if not (isinstance(config, list) and len(config) >= 2 and isinstance(config[0], str)):
        return ""
    if not all(isinstance(item, scalars) for item in config):
        return ""
    one_call = json.dumps([config], ensure_ascii=False)
    return (
        f"a list of names is one call per name: for one call of {config[0]!r} with the other items as its "
        f"arguments, write a list inside the list: {one_call}. "
    )


_CUSTOM_GYM_KEYS = ("image_or_build_context", "dockerfile", "controller_source_dir")


def custom_gym(value: Any) -> tuple[str, dict[str, Any]]:
    """HUD's ``CustomGym`` (an object or a dict with ``image_or_build_context``, or 0.2.4's
    ``dockerfile`` / ``controller_source_dir``) as ``(gym, docker)``: the hud-gym gym its container
    serves (its ``gym`` field, else ``"hud-ubuntu"``) and ``task.config["docker"]``, which makes
    the task's env run its controller with ``controller="docker"`` in that image.

    Raises:
        ValueError: ``value`` is not a CustomGym shape.
    """
    fields = value if isinstance(value, dict) else getattr(value, "__dict__", {})
    if not any(fields.get(key) is not None for key in _CUSTOM_GYM_KEYS):
        raise ValueError(
            f"gym must be a gym name or a HUD CustomGym (with image_or_build_context), got {type(value).__name__}"
        )
    source = fields.get("image_or_build_context")
    build_context = fields.get("controller_source_dir") or (source if isinstance(source, Path) else None)
    docker: dict[str, Any] = {
        "image": source if isinstance(source, str) else None,
        "build_context": str(build_context) if build_context is not None else None,
        "host_config": fields.get("host_config"),
    }
    return str(fields.get("gym") or "hud-ubuntu"), docker


class Task(BaseModel):
    """A scenario for an agent: the seed's fields, with ``setup``/``evaluate`` normalised.

    Attributes:
        id: optional identifier (unique within a task set; at most
            :data:`~hud_gym.bounds.TASK_ID_CHARS` characters).
        prompt: the instruction shown to the agent (at most :data:`~hud_gym.bounds.PROMPT_CHARS`
            characters). Lone surrogates in any of a task's strings become U+FFFD.
        setup: calls run by ``reset`` before the agent acts.
        evaluate: calls that grade the episode; empty means "grade the final response against
            ``target``" (see :mod:`hud_gym.evaluation`).
        gym: the gym type: ``"qa"``, ``"hud-browser"``, ``"hud-ubuntu"`` (or a gym id); HUD's
            ``CustomGym`` shape is read by :func:`custom_gym` (a ``controller="docker"`` gym).
        target: the ideal answer(s), for response grading.
        choices: multiple-choice options.
        files: files associated with the task (name to content or path).
        metadata: free-form data.
        config: gym-specific settings.
    """

    model_config = ConfigDict(extra="forbid")

    id: str | None = None
    prompt: str
    setup: list[FunctionConfig] | None = None
    evaluate: list[FunctionConfig] | None = None
    gym: str | None = None
    target: str | list[str] | None = None
    choices: list[str] | None = None
    files: dict[str, str] | None = None
    metadata: dict[str, Any] | None = None
    config: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _custom_gym(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = sanitize_value(data)  # a lone surrogate ("\ud800") is no text: U+FFFD
        if isinstance(data, dict) and data.get("gym") is not None and not isinstance(data["gym"], str):
            gym, docker = custom_gym(data["gym"])
            data = {**data, "gym": gym, "config": {**(data.get("config") or {}), "docker": docker}}
        return data

    @field_validator("id")
    @classmethod
    def _short_id(cls, value: str | None) -> str | None:
        if value is not None and len(value) > TASK_ID_CHARS:
            raise ValueError(f"a task id has at most {TASK_ID_CHARS} characters, this one {len(value):,}")
        return value

    @field_validator("prompt")
    @classmethod
    def _bounded_prompt(cls, value: str) -> str:
        if len(value) > PROMPT_CHARS:
            raise ValueError(f"a prompt has at most {PROMPT_CHARS:,} characters, this one {len(value):,}")
        return value

    @field_validator("setup", "evaluate", mode="before")
    @classmethod
    def _expand(cls, value: Any) -> Any:
        if value is None or value == ():  # HUD's setup=() / evaluate=(): no calls
            return None
        return expand_config(value)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Task:
        """Validate a task from a dict (as read from JSON/YAML)."""
        return cls.model_validate(data)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict without the fields that are unset."""
        return self.model_dump(mode="json", exclude_none=True)


def _validation_to_file_error(
    path: Path, exc: ValidationError, *, line: int | None, index: int | None
) -> TaskFileError:
    err = exc.errors(include_url=False)[0]
    loc = ".".join(str(p) for p in err["loc"]) or None
    msg = err["msg"]
    more = len(exc.errors()) - 1
    if more:
        msg += f" (and {more} more error{'s' if more > 1 else ''})"
    return TaskFileError(path, msg, line=line, index=index, field=loc)


class TaskSet(BaseModel):
    """A list of tasks with an id and a description; acts like a list.

    Example:
        >>> ts = TaskSet(tasks=[Task(prompt="2+2?", target="4")], id="tiny")
        >>> len(ts), ts[0].prompt
        (1, '2+2?')
    """

    model_config = ConfigDict(extra="forbid")

    tasks: list[Task] = Field(default_factory=list)
    id: str | None = None
    description: str | None = None

    def __len__(self) -> int:
        return len(self.tasks)

    def __iter__(self) -> Iterator[Task]:  # type: ignore[override]
        return iter(self.tasks)

    @overload
    def __getitem__(self, index: int) -> Task: ...
    @overload
    def __getitem__(self, index: slice) -> TaskSet: ...
    def __getitem__(self, index: int | slice) -> Task | TaskSet:
        if isinstance(index, slice):
            return TaskSet(tasks=self.tasks[index], id=self.id, description=self.description)
        return self.tasks[index]

    def append(self, task: Task) -> None:
        """Add a task at the end."""
        self.tasks.append(task)

    def extend(self, tasks: Iterable[Task]) -> None:
        """Add tasks at the end."""
        self.tasks.extend(tasks)

    def get(self, task_id: str) -> Task:
        """The task with this id.

        Raises:
            KeyError: no task has that id.
        """
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(f"no task {task_id!r} in task set {self.id!r}")

    # ------------------------------------------------------------------ files

    @classmethod
    def load(cls, path: str | Path) -> TaskSet:
        """Read a task set from ``.json``, ``.jsonl`` or ``.yaml``/``.yml``.

        JSON and YAML files hold either a list of tasks or ``{"id", "description", "tasks"}``;
        JSONL files hold one task per line. Task ids must be unique. The file is untrusted data:
        see :mod:`hud_gym.task_files` for the limits (size, nesting, NaN, YAML aliases).

        Raises:
            TaskFileError: the file is malformed; the message names the file, the line or task
                index, and the field at fault.
        """
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix not in (".json", ".jsonl", ".yaml", ".yml"):
            raise TaskFileError(path, f"unknown task file type {suffix!r}; use .json, .jsonl, .yaml or .yml")
        text = read_text(path)
        if suffix == ".jsonl":
            return cls._from_jsonl(path, text)
        if suffix == ".json":
            return cls._from_data(path, parse_json(path, text), lines=None)
        data, lines = parse_yaml(path, text)
        if data is None:
            raise TaskFileError(path, "the file holds no tasks (an empty YAML document)")
        return cls._from_data(path, data, lines=lines)

    @classmethod
    def _from_jsonl(cls, path: Path, text: str) -> TaskSet:
        tasks: list[Task] = []
        lines: list[int] = []
        for lineno, data in jsonl_records(path, text):
            tasks.append(cls._task(path, data, line=lineno, index=len(tasks)))
            lines.append(lineno)
        check_unique_ids(path, ((task.id, i, lines[i]) for i, task in enumerate(tasks)))
        return cls(tasks=tasks, id=path.stem)

    @classmethod
    def _from_data(cls, path: Path, data: Any, lines: Sequence[int] | None) -> TaskSet:
        meta: dict[str, Any] = {}
        if isinstance(data, dict):
            unknown = set(data) - {"tasks", "id", "description"}
            if "tasks" not in data:
                raise TaskFileError(path, "a task-set object needs a 'tasks' list", field="tasks")
            if unknown:
                raise TaskFileError(
                    path, f"unknown key(s) {sorted(map(str, unknown))}; expected id, description, tasks"
                )
            for key in ("id", "description"):
                if data.get(key) is not None and not isinstance(data[key], str):
                    raise TaskFileError(path, f"expected a string, got {type(data[key]).__name__}", field=key)
            meta = {"id": data.get("id"), "description": data.get("description")}
            data = data["tasks"]
        if not isinstance(data, list):
            raise TaskFileError(path, f"expected a list of tasks, got {type(data).__name__}", field="tasks")
        line_of = (lambda i: lines[i] if i < len(lines) else None) if lines else (lambda i: None)
        tasks = [cls._task(path, item, line=line_of(i), index=i) for i, item in enumerate(data)]
        check_unique_ids(path, ((task.id, i, line_of(i)) for i, task in enumerate(tasks)))
        return cls(tasks=tasks, id=meta.get("id") or path.stem, description=meta.get("description"))

    @staticmethod
    def _task(path: Path, data: Any, *, line: int | None, index: int) -> Task:
        if not isinstance(data, dict):
            raise TaskFileError(path, f"a task must be an object, got {type(data).__name__}", line=line, index=index)
        try:
            return Task.model_validate(data)
        except ValidationError as exc:
            raise _validation_to_file_error(path, exc, line=line, index=index) from None

    def save(self, path: str | Path) -> Path:
        """Write the task set as ``.json``, ``.jsonl`` or ``.yaml`` (chosen by the suffix)."""
        path = Path(path)
        tasks = [t.to_dict() for t in self.tasks]
        suffix = path.suffix.lower()
        if suffix == ".jsonl":
            path.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in tasks), encoding="utf-8")
        elif suffix in (".yaml", ".yml"):
            import yaml

            doc: dict[str, Any] = {
                k: v for k, v in {"id": self.id, "description": self.description}.items() if v is not None
            }
            doc["tasks"] = tasks
            path.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")
        elif suffix == ".json":
            doc = {"id": self.id, "description": self.description, "tasks": tasks}
            path.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        else:
            raise ValueError(f"unknown task file type {suffix!r}; use .json, .jsonl, .yaml or .yml")
        return path
