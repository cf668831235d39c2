"""What the task-set converters share: the conversion report, reading rows with their line
numbers, and checking that every setup/evaluate call of a converted task resolves in the registry."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hud_gym.errors import HudGymWarning
from hud_gym.evaluation.registry import REGISTRY, FunctionArgumentError, Phase, UnknownFunctionError
from hud_gym.gyms import get_gym
from hud_gym.task import Task, TaskFileError, one_call_hint
from hud_gym.task_files import check_unique_ids as _check_unique_ids
from hud_gym.task_files import jsonl_records, parse_json, read_text

__all__ = [
    "ConversionReport",
    "ConversionWarning",
    "Row",
    "TaskConversion",
    "build_task",
    "check_unique_ids",
    "check_task_calls",
    "read_json",
    "read_rows",
    "require_str",
    "source_metadata",
]


class ConversionWarning(HudGymWarning):
    """Some rows of a foreign task set were skipped or changed on conversion (see the report)."""


class TaskConversion(BaseModel):
    """How one row of a foreign task set was converted.

    Attributes:
        index: the row's position in the file (0-based).
        id: the task id (the row's id).
        line: the row's line in a JSONL file.
        file: the file the row came from (an OSWorld directory holds one file per example).
        included: whether the row became a task of the converted set.
        reason: why it was skipped (when not included).
        unmapped_config: setup steps with no hud-gym equivalent (e.g. ``"chrome_open_tabs"``).
        unmapped_evaluator: evaluator parts with no hud-gym equivalent (e.g. ``"compare_table"``).
        notes: what changed on the way (dropped sleeps, rewritten paths, ungraded evaluation...).
    """

    model_config = ConfigDict(extra="forbid")

    index: int
    id: str | None = None
    line: int | None = None
    file: str | None = None
    included: bool = True
    reason: str | None = None
    unmapped_config: list[str] = Field(default_factory=list)
    unmapped_evaluator: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class ConversionReport(BaseModel):
    """What a converter did with every row of a foreign task set.

    Example:
        >>> report = ConversionReport(format="osworld", path="examples/")
        >>> report.tasks.append(TaskConversion(index=0, id="a", included=False, reason="infeasible task"))
        >>> [t.id for t in report.skipped]
        ['a']
    """

    model_config = ConfigDict(extra="forbid")

    format: str
    path: str
    tasks: list[TaskConversion] = Field(default_factory=list)

    @property
    def converted(self) -> list[TaskConversion]:
        """The rows that became tasks."""
        return [t for t in self.tasks if t.included]

    @property
    def skipped(self) -> list[TaskConversion]:
        """The rows that were skipped, each with its ``reason``."""
        return [t for t in self.tasks if not t.included]

    def get(self, task_id: str) -> TaskConversion:
        """The entry of the row whose id is ``task_id``.

        Raises:
            KeyError: no row has that id.
        """
        for entry in self.tasks:
            if entry.id == task_id:
                return entry
        raise KeyError(f"no row {task_id!r} in the conversion report of {self.path}")

    def summary(self) -> str:
        """One line per skipped row, after a count: what a person needs to read."""
        head = f"{self.path} ({self.format}): {len(self.converted)} of {len(self.tasks)} task(s) converted"
        lines = [head]
        for entry in self.skipped:
            lines.append(f"  skipped {entry.id or f'row {entry.index}'}: {entry.reason}")
        return "\n".join(lines)

    def warn_if_skipped(self) -> None:
        """Emit a :class:`ConversionWarning` with :meth:`summary` when rows were skipped."""
        if self.skipped:
            warnings.warn(self.summary(), ConversionWarning, stacklevel=3)


@dataclass(frozen=True)
class Row:
    """One record of a foreign task file and where it is (``line`` for JSONL files)."""

    data: dict[str, Any]
    index: int
    line: int | None = None


def read_json(path: Path) -> Any:
    """The parsed JSON of ``path``, checked as :func:`hud_gym.task_files.parse_json` (size,
    encoding, nesting, NaN).

    Raises:
        TaskFileError: the file cannot be read or is not acceptable JSON (naming the line).
    """
    return parse_json(path, read_text(path))


def read_rows(path: Path) -> Iterator[Row]:
    """The records of a ``.jsonl`` file (one per non-empty line) or of a ``.json`` list.

    Raises:
        TaskFileError: unreadable file, invalid JSON (naming the line), a row that is not an object.
    """
    if path.suffix.lower() == ".jsonl":
        for index, (lineno, data) in enumerate(jsonl_records(path, read_text(path))):
            if not isinstance(data, dict):
                raise TaskFileError(
                    path, f"a row must be an object, got {type(data).__name__}", line=lineno, index=index
                )
            yield Row(data=data, index=index, line=lineno)
        return
    data = read_json(path)
    if not isinstance(data, list):
        raise TaskFileError(path, f"expected a list of rows, got {type(data).__name__}")
    for index, item in enumerate(data):
        if not isinstance(item, dict):
            raise TaskFileError(path, f"a row must be an object, got {type(item).__name__}", index=index)
        yield Row(data=item, index=index)


def require_str(path: Path, row: Row, field: str, *, allow_empty: bool = False) -> str:
    """``row.data[field]`` as a string.

    Raises:
        TaskFileError: the field is missing, not a string, or empty (naming file, line and field).
    """
    if field not in row.data:
        raise TaskFileError(
            path, f"missing field (the row has {sorted(row.data)})", line=row.line, index=row.index, field=field
        )
    value = row.data[field]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise TaskFileError(
            path, f"expected a string, got {type(value).__name__}", line=row.line, index=row.index, field=field
        )
    if not allow_empty and not value.strip():
        raise TaskFileError(path, "must not be empty", line=row.line, index=row.index, field=field)
    return value


def source_metadata(format_name: str, row: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """``{"source": {"format", "row", ...}}``: the original row, kept in ``Task.metadata``."""
    return {"source": {"format": format_name, "row": row, **extra}}


def check_task_calls(path: Path, task: Task, *, index: int, line: int | None = None) -> None:
    """Resolve every setup and evaluate call of ``task`` in the registry (names and arguments).

    Raises:
        TaskFileError: an unknown gym, function name or bad arguments; the message names the file,
            the row and the call.
    """
    where: dict[str, Any] = {"line": line, "index": index, "task_id": task.id}
    try:
        gym = get_gym(task.gym).name
    except ValueError as exc:
        raise TaskFileError(path, str(exc), field="gym", **where) from None
    phases: tuple[tuple[Phase, Any], ...] = (("setup", task.setup), ("evaluate", task.evaluate))
    for phase, calls in phases:
        for position, call in enumerate(calls or ()):
            try:
                REGISTRY.resolve(phase, gym, call)
            except (UnknownFunctionError, FunctionArgumentError) as exc:
                message = f"{one_call_hint(calls)}{exc}"
                raise TaskFileError(path, message, field=f"{phase}[{position}]", **where) from None


def build_task(path: Path, data: dict[str, Any], *, index: int, line: int | None = None) -> Task:
    """A validated :class:`Task` whose calls all resolve.

    Raises:
        TaskFileError: invalid fields or calls (naming the file, row and field).
    """
    try:
        task = Task.model_validate(data)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        field = ".".join(str(p) for p in err["loc"]) or None
        raise TaskFileError(path, err["msg"], line=line, index=index, field=field) from None
    check_task_calls(path, task, index=index, line=line)
    return task


def check_unique_ids(path: Path, tasks: list[Task], rows: list[Row]) -> None:
    """Raise when two tasks share an id.

    Raises:
        TaskFileError: naming the file, the line/index of the second occurrence, the first one, and the id.
    """
    _check_unique_ids(path, ((task.id, row.index, row.line) for task, row in zip(tasks, rows, strict=True)))
