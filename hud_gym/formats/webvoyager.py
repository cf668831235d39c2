"""WebVoyager task files (``WebVoyager_data.jsonl``) as browser tasks.

Each row ``{"web_name", "id", "ques", "web"}`` becomes a ``hud-browser`` task whose setup opens
``web`` and whose prompt is ``ques``.

WebVoyager has no automatic evaluator: its tasks are judged by a person or a multimodal model
looking at the trajectory. So, honestly:

- without reference answers the evaluation is :func:`~hud_gym.evaluation.benchmarks.ungraded`:
  the response is recorded and the grade is an error grade saying it was not graded;
- with WebVoyager's ``reference_answer.json`` (``{web_name: {"answers": [{"id", "type", "ans"}]}}``,
  given as ``reference_answers`` or found next to the data file), a ``golden`` answer is checked
  by :func:`~hud_gym.evaluation.benchmarks.webvoyager_answer` (the response must contain it) and a
  ``possible`` one is attached to an ungraded grade. ``task.target`` is the reference answer.

Example:
    >>> taskset, report = convert_webvoyager("WebVoyager_data.jsonl")  # doctest: +SKIP
    >>> taskset[0].setup[0].function, taskset[0].gym
    ('goto', 'hud-browser')
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hud_gym.formats.common import (
    ConversionReport,
    Row,
    TaskConversion,
    build_task,
    check_unique_ids,
    read_json,
    read_rows,
    require_str,
    source_metadata,
)
from hud_gym.task import TaskFileError, TaskSet

__all__ = ["REFERENCE_FILE", "WEBVOYAGER_FIELDS", "convert_webvoyager", "is_webvoyager_row", "read_reference_answers"]

WEBVOYAGER_FIELDS = frozenset({"web_name", "id", "ques", "web"})
"""The fields of a WebVoyager row."""

REFERENCE_FILE = "reference_answer.json"
"""The name WebVoyager gives its reference answers; used when found next to the data file."""

UNGRADED_REASON = "WebVoyager tasks are judged by a person or a model (no reference answer was supplied)"


def is_webvoyager_row(data: Any) -> bool:
    """Whether ``data`` looks like a WebVoyager row (it has ``ques`` and ``web``)."""
    return isinstance(data, dict) and {"ques", "web"} <= set(data)


def read_reference_answers(path: str | Path) -> dict[tuple[str, int], dict[str, str]]:
    """WebVoyager's reference answers by ``(web_name, number)``: ``{"type", "ans"}``.

    Raises:
        TaskFileError: the file is not of the shape ``{web_name: {"answers": [{"id", "type", "ans"}]}}``.
    """
    path = Path(path)
    data = read_json(path)
    if not isinstance(data, dict):
        raise TaskFileError(path, f"expected an object of websites, got {type(data).__name__}")
    answers: dict[tuple[str, int], dict[str, str]] = {}
    for web_name, entry in data.items():
        items = entry.get("answers") if isinstance(entry, dict) else None
        if not isinstance(items, list):
            raise TaskFileError(path, "expected {'answers': [...]}", field=f"{web_name}.answers")
        for position, item in enumerate(items):
            field = f"{web_name}.answers[{position}]"
            if (
                not isinstance(item, dict)
                or not isinstance(item.get("id"), int)
                or not isinstance(item.get("ans"), str)
            ):
                raise TaskFileError(path, "an answer needs an integer 'id' and a string 'ans'", field=field)
            kind = item.get("type", "golden")
            if kind not in ("golden", "possible"):
                raise TaskFileError(path, f"'type' must be 'golden' or 'possible', got {kind!r}", field=field)
            answers[(web_name, item["id"])] = {"type": kind, "ans": item["ans"]}
    return answers


def _number(task_id: str) -> int | None:
    """The ``12`` of ``"Allrecipes--12"``."""
    suffix = task_id.rsplit("--", 1)[-1]
    return int(suffix) if suffix.isascii() and suffix.isdigit() and len(suffix) <= 9 else None


def _convert_row(
    path: Path, row: Row, references: dict[tuple[str, int], dict[str, str]] | None, reference_file: Path | None
) -> tuple[dict[str, Any], TaskConversion]:
    task_id = require_str(path, row, "id")
    question = require_str(path, row, "ques")
    web = require_str(path, row, "web")
    web_name = row.data.get("web_name")
    if web_name is not None and not isinstance(web_name, str):
        raise TaskFileError(
            path, f"expected a string, got {type(web_name).__name__}", line=row.line, index=row.index, field="web_name"
        )
    entry = TaskConversion(index=row.index, id=task_id, line=row.line)
    reference = None
    if references is not None:
        number = _number(task_id)
        name = web_name or task_id.rsplit("--", 1)[0]
        reference = references.get((name, number)) if number is not None else None
    if reference is None:
        evaluate: list[Any] = [["ungraded", UNGRADED_REASON]]
        entry.notes.append("ungraded: no reference answer" + (f" in {reference_file.name}" if reference_file else ""))
    else:
        evaluate = [
            {"function": "webvoyager_answer", "args": [reference["ans"]], "kwargs": {"kind": reference["type"]}}
        ]
        if reference["type"] == "possible":
            entry.notes.append("ungraded: the reference is a 'possible' answer (judged by a person or a model)")
        else:
            entry.notes.append("graded: the response must contain the golden answer")
    extra = {"reference": reference, "reference_file": str(reference_file)} if reference else {}
    task = {
        "id": task_id,
        "prompt": question,
        "gym": "hud-browser",
        "setup": [["goto", web]],
        "evaluate": evaluate,
        "target": reference["ans"] if reference else None,
        "metadata": {"web_name": web_name, **source_metadata("webvoyager", row.data, **extra)},
    }
    return task, entry


def convert_webvoyager(
    path: str | Path, reference_answers: str | Path | None = None
) -> tuple[TaskSet, ConversionReport]:
    """Convert a WebVoyager ``.jsonl`` (or ``.json`` list) file; see the module docstring.

    Args:
        path: the WebVoyager data file.
        reference_answers: WebVoyager's ``reference_answer.json``; default: that file next to
            ``path`` when it exists, else none (every task ungraded).

    Raises:
        TaskFileError: a malformed row (naming the file, the line and the field), or a malformed
            reference file.
    """
    path = Path(path)
    candidate = Path(reference_answers) if reference_answers is not None else path.with_name(REFERENCE_FILE)
    references = None
    reference_file: Path | None = None
    if reference_answers is not None or candidate.is_file():
        references = read_reference_answers(candidate)
        reference_file = candidate
    report = ConversionReport(format="webvoyager", path=str(path))
    tasks, rows = [], []
    for row in read_rows(path):
        data, entry = _convert_row(path, row, references, reference_file)
        tasks.append(build_task(path, data, index=row.index, line=row.line))
        rows.append(row)
        report.tasks.append(entry)
    check_unique_ids(path, tasks, rows)
    return TaskSet(tasks=tasks, id=path.stem, description=f"WebVoyager tasks from {path.name}"), report
