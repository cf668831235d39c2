"""Telling task-file formats apart by their content, and reading any of them.

Formats: ``native`` (hud-gym's own JSON/JSONL/YAML), ``hud`` (HUD SDK task JSON),
``webvoyager``, ``gaia`` and ``osworld``. Detection looks at the shape, not the file name: the
first row of a JSONL file or JSON list, or the keys of a JSON object; a directory holding
``metadata.jsonl`` is GAIA, any other directory OSWorld examples.

Example:
    >>> detect_format("WebVoyager_data.jsonl")  # doctest: +SKIP
    'webvoyager'
    >>> taskset, report = convert("tasks.json")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from hud_gym.formats.common import ConversionReport, TaskConversion, check_task_calls
from hud_gym.formats.gaia import convert_gaia, is_gaia_row
from hud_gym.formats.hud import convert_hud, looks_like_hud
from hud_gym.formats.osworld import convert_osworld, is_osworld_example
from hud_gym.formats.webvoyager import convert_webvoyager, is_webvoyager_row
from hud_gym.task import TaskFileError, TaskSet
from hud_gym.task_files import parse_json, read_text

__all__ = ["FORMATS", "TaskFormat", "convert", "detect_format", "read_taskset"]

TaskFormat = Literal["native", "hud", "webvoyager", "gaia", "osworld"]
FORMATS: tuple[str, ...] = ("native", "hud", "webvoyager", "gaia", "osworld")
"""The task-file formats :func:`convert` reads."""

_NATIVE_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml")


def _classify_row(data: Any) -> str:
    if is_osworld_example(data):
        return "osworld"
    if is_webvoyager_row(data):
        return "webvoyager"
    if is_gaia_row(data):
        return "gaia"
    if looks_like_hud([data]):
        return "hud"
    return "native"


def _first_jsonl_row(path: Path, text: str) -> Any:
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            return parse_json(path, line, line=number)
    return None


def detect_format(path: str | Path) -> str:
    """The format of the task file or directory ``path`` (one of :data:`FORMATS`).

    A file that is not acceptable JSON is ``native`` (whose loader reports the error with its line).

    Raises:
        TaskFileError: the path does not exist, has an unknown file type, cannot be read, is too
            large or is not UTF-8.
    """
    path = Path(path)
    if path.is_dir():
        return "gaia" if (path / "metadata.jsonl").is_file() else "osworld"
    if not path.is_file():
        raise TaskFileError(path, "no such file or directory")
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        return "native"
    if suffix not in (".json", ".jsonl"):
        raise TaskFileError(path, f"unknown task file type {suffix!r}; use .json, .jsonl, .yaml, .yml or a directory")
    text = read_text(path)
    try:
        if suffix == ".jsonl":
            return _classify_row(_first_jsonl_row(path, text))
        data = parse_json(path, text)
    except TaskFileError:
        return "native"
    if isinstance(data, list):
        if data and _classify_row(data[0]) in ("osworld", "webvoyager", "gaia"):
            return _classify_row(data[0])
        return "hud" if looks_like_hud(data) else "native"
    if is_osworld_example(data):
        return "osworld"
    return "hud" if looks_like_hud(data) else "native"


def _native(path: Path) -> tuple[TaskSet, ConversionReport]:
    if path.is_dir():
        raise TaskFileError(
            path, "a directory is not a hud-gym task file (it may hold GAIA or OSWorld files: pass format=)"
        )
    taskset = TaskSet.load(path)
    for index, task in enumerate(taskset):  # an unknown function fails here, at load, not at reset
        check_task_calls(path, task, index=index)
    report = ConversionReport(
        format="native", path=str(path), tasks=[TaskConversion(index=i, id=t.id) for i, t in enumerate(taskset)]
    )
    return taskset, report


_CONVERTERS: dict[str, Callable[[Path], tuple[TaskSet, ConversionReport]]] = {
    "native": _native,
    "hud": convert_hud,
    "webvoyager": convert_webvoyager,
    "gaia": convert_gaia,
    "osworld": convert_osworld,
}


def convert(path: str | Path, format: str | None = None) -> tuple[TaskSet, ConversionReport]:
    """Read the task file or directory ``path`` in ``format`` (detected when None).

    Returns:
        The task set and the conversion report (what did not map, what was skipped and why).

    Raises:
        ValueError: an unknown ``format``.
        TaskFileError: the file is malformed or holds unknown functions (naming file, line/index, field).
    """
    if format is not None and format not in _CONVERTERS:
        raise ValueError(f"unknown task format {format!r}; expected one of {', '.join(FORMATS)}")
    path = Path(path)
    chosen = format or detect_format(path)
    return _CONVERTERS[chosen](path)


def read_taskset(path: str | Path, format: str | None = None) -> TaskSet:
    """:func:`convert`'s task set; a :class:`~hud_gym.formats.common.ConversionWarning` lists
    the skipped rows (the full report comes from :func:`convert` or the format's converter)."""
    taskset, report = convert(path, format)
    report.warn_if_skipped()
    return taskset
