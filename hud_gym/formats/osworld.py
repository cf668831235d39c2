"""OSWorld example files (``evaluation_examples/examples/<domain>/<id>.json``) as desktop tasks.

An example is ``{"id", "instruction", "config": [{"type", "parameters"}], "evaluator": {"func",
"result", "expected", "options", "conj", "postconfig"}, "related_apps", "snapshot", "source"}``.
It becomes a ``hud-ubuntu`` task whose prompt is the instruction, whose setup is
``osworld_config(config)`` and whose grade is ``osworld_evaluate(evaluator)``: OSWorld's own
steps and evaluator, unchanged, run by :mod:`hud_gym.suites.osworld.steps` and graded by
:mod:`hud_gym.suites.osworld.grading` as OSWorld grades them. An example using a step, getter or
metric that does not run here (:mod:`hud_gym.suites.osworld.support`) is skipped, and the
:class:`~hud_gym.formats.common.ConversionReport` says why (``TaskConversion.reason``).

Paths: OSWorld's VM home ``/home/user`` is the env's home. What a task needs of the env is in its
``metadata["requires"]`` (``allow_shell``, ``allow_absolute_paths``). Files come from the cache
and the mirror (:mod:`hud_gym.suites.osworld.files`).

Example:
    >>> taskset, report = convert_osworld("evaluation_examples/examples/os")  # doctest: +SKIP
    >>> print(report.summary())  # doctest: +SKIP
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hud_gym.formats.common import (
    ConversionReport,
    Row,
    TaskConversion,
    build_task,
    check_unique_ids,
    read_json,
)
from hud_gym.suites.osworld.mapper import OSWORLD_HOME, convert_example
from hud_gym.task import TaskFileError, TaskSet

__all__ = ["MAX_SCANNED_FILES", "OSWORLD_HOME", "convert_osworld", "is_osworld_example"]

MAX_SCANNED_FILES = 20_000
"""Most files a directory of examples may hold (OSWorld's whole set has a few hundred)."""


def is_osworld_example(data: Any) -> bool:
    """Whether ``data`` looks like an OSWorld example (``instruction`` plus ``config`` or ``evaluator``)."""
    return isinstance(data, dict) and "instruction" in data and ("config" in data or "evaluator" in data)


def _convert_example(path: Path, row: Row) -> tuple[dict[str, Any] | None, TaskConversion]:
    data = row.data
    converted = convert_example(path, data, row.index, row.line)
    entry = TaskConversion(index=row.index, id=data["id"], line=row.line, file=str(path), notes=converted.notes)
    if converted.task is None:
        entry.unmapped_evaluator.extend(converted.reasons)
        entry.included = False
        entry.reason = "does not run here: " + "; ".join(converted.reasons)
    return converted.task, entry


def _json_files(directory: Path) -> list[Path]:
    """The ``*.json`` files under ``directory`` (symlinked directories are not followed).

    Raises:
        TaskFileError: more than :data:`MAX_SCANNED_FILES` files (not an examples directory).
    """
    found, seen = [], 0
    for root, dirs, files in os.walk(directory):
        dirs.sort()
        seen += len(files)
        if seen > MAX_SCANNED_FILES:
            raise TaskFileError(
                directory,
                f"more than {MAX_SCANNED_FILES:,} files under this directory: point at an "
                "OSWorld examples directory (evaluation_examples/examples or one app's)",
            )
        found += [Path(root, name) for name in files if name.endswith(".json")]
    return sorted(p for p in found if p.is_file())


def _example_rows(path: Path) -> list[tuple[Path, Row]]:
    if path.is_dir():
        files = _json_files(path)
        rows: list[tuple[Path, Row]] = []
        for file in files:
            data = read_json(file)
            if is_osworld_example(data):
                rows.append((file, Row(data=data, index=len(rows))))
        if not rows:
            raise TaskFileError(
                path, "no OSWorld example (*.json with 'instruction' and 'config'/'evaluator') in this directory"
            )
        return rows
    data = read_json(path)
    if isinstance(data, dict):
        return [(path, Row(data=data, index=0))]
    if isinstance(data, list):
        rows = []
        for i, item in enumerate(data):
            if not isinstance(item, dict):
                raise TaskFileError(path, f"an example must be an object, got {type(item).__name__}", index=i)
            rows.append((path, Row(data=item, index=i)))
        return rows
    raise TaskFileError(path, f"expected an OSWorld example or a list of them, got {type(data).__name__}")


def convert_osworld(path: str | Path) -> tuple[TaskSet, ConversionReport]:
    """Convert OSWorld examples: one example file, a JSON list of examples, or a directory
    searched recursively for example files. See the module docstring for what maps.

    Returns:
        The task set of the examples that map, and the report of every example (what did not
        map, why an example was skipped, what changed).

    Raises:
        TaskFileError: a malformed example (naming the file, the index and the field).
    """
    path = Path(path)
    report = ConversionReport(format="osworld", path=str(path))
    tasks, rows = [], []
    for file, row in _example_rows(path):
        data, entry = _convert_example(file, row)
        report.tasks.append(entry)
        if data is not None:
            tasks.append(build_task(file, data, index=row.index, line=row.line))
            rows.append(row)
    check_unique_ids(path, tasks, rows)
    name = path.name if path.is_dir() else path.stem
    return TaskSet(tasks=tasks, id=f"osworld-{name}", description=f"OSWorld examples from {path} (mapped ones)"), report
