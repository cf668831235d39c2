"""GAIA's ``metadata.jsonl`` as QA tasks.

Each row ``{"task_id", "Question", "Level", "Final answer", "file_name", "Annotator Metadata"}``
becomes a ``qa`` task: the prompt is the question, ``target`` the final answer, and the
evaluation :func:`~hud_gym.evaluation.benchmarks.gaia_match` (GAIA's quasi-exact match). The test
split's answers are private (``"?"``): those tasks are evaluated :func:`ungraded
<hud_gym.evaluation.benchmarks.ungraded>` and have no target.

An attached file (``file_name``, resolved next to the metadata file) is listed in ``task.files``
(name to absolute path). A text file (UTF-8, at most :data:`MAX_PASSAGE_BYTES`) is also shown to
the agent with the QA gym's ``show_passage`` setup; any other file (a spreadsheet, an image, audio)
cannot be shown by the QA gym, and the conversion report says so for that task.

Example:
    >>> taskset, report = convert_gaia("2023/validation/metadata.jsonl")  # doctest: +SKIP
    >>> taskset[0].evaluate[0].function
    'gaia_match'
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
    read_rows,
    require_str,
    source_metadata,
)
from hud_gym.task import TaskFileError, TaskSet

__all__ = ["MAX_PASSAGE_BYTES", "PRIVATE_ANSWER", "convert_gaia", "is_gaia_row"]

MAX_PASSAGE_BYTES = 64 * 1024
"""Largest attached text file shown as a passage."""

PRIVATE_ANSWER = "?"
"""GAIA's ``Final answer`` on the test split, whose answers are private."""

_TEXT_SUFFIXES = frozenset(
    {
        ".txt",
        ".csv",
        ".tsv",
        ".json",
        ".jsonl",
        ".jsonld",
        ".md",
        ".py",
        ".xml",
        ".html",
        ".htm",
        ".yaml",
        ".yml",
        ".pdb",
        ".log",
        ".tex",
    }
)


def is_gaia_row(data: Any) -> bool:
    """Whether ``data`` looks like a GAIA row (it has ``Question`` and ``Final answer`` or ``task_id``)."""
    return isinstance(data, dict) and "Question" in data and ("Final answer" in data or "task_id" in data)


def _text_content(file: Path) -> str | None:
    """The file's text when it is a small UTF-8 text file, else None."""
    if file.suffix.lower() not in _TEXT_SUFFIXES or file.stat().st_size > MAX_PASSAGE_BYTES:
        return None
    raw = file.read_bytes()
    if b"\0" in raw:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _attachment(
    path: Path, row: Row, file_name: str, entry: TaskConversion
) -> tuple[dict[str, str], list[Any], dict[str, Any]]:
    """``(files, setup, metadata)`` for the row's attached file."""
    folder = path.parent.resolve()
    try:
        file = (folder / file_name).resolve()
    except (OSError, ValueError) as exc:
        raise TaskFileError(
            path, f"not a usable file name: {exc}", line=row.line, index=row.index, field="file_name"
        ) from None
    if not file.is_relative_to(folder):
        raise TaskFileError(
            path,
            f"the attached file {file_name!r} is outside {folder}; attachments are files next to the metadata file",
            line=row.line,
            index=row.index,
            field="file_name",
        )
    if not file.is_file():
        raise TaskFileError(
            path,
            f"the attached file {file_name!r} is not in {path.parent} (looked for {file})",
            line=row.line,
            index=row.index,
            field="file_name",
        )
    try:
        text = _text_content(file)
    except OSError as exc:
        raise TaskFileError(
            path,
            f"cannot read the attached file {file_name!r} ({exc.strerror or exc})",
            line=row.line,
            index=row.index,
            field="file_name",
        ) from None
    files = {file_name: str(file)}
    if text is not None:
        entry.notes.append(f"attachment {file_name!r} shown as a passage")
        return (
            files,
            [["show_passage", f"Attached file {file_name}:\n{text}"]],
            {"attachment": {"name": file_name, "path": str(file), "shown": True}},
        )
    reason = (
        f"attachment {file_name!r} ({file.suffix or 'no suffix'}, {file.stat().st_size} bytes) is not shown to the "
        "agent: the QA gym shows text only; it is listed in task.files"
    )
    entry.notes.append(reason)
    return files, [], {"attachment": {"name": file_name, "path": str(file), "shown": False, "note": reason}}


def _convert_row(path: Path, row: Row) -> tuple[dict[str, Any], TaskConversion]:
    question = require_str(path, row, "Question")
    answer = require_str(path, row, "Final answer")
    task_id = require_str(path, row, "task_id") if "task_id" in row.data else None
    file_name = row.data.get("file_name") or ""
    if not isinstance(file_name, str):
        raise TaskFileError(
            path,
            f"expected a string, got {type(file_name).__name__}",
            line=row.line,
            index=row.index,
            field="file_name",
        )
    entry = TaskConversion(index=row.index, id=task_id, line=row.line)
    files, setup, extra = _attachment(path, row, file_name, entry) if file_name.strip() else ({}, [], {})
    if answer.strip() == PRIVATE_ANSWER:
        evaluate: list[Any] = [["ungraded", "GAIA's test-split answers are private (submit to the GAIA leaderboard)"]]
        target = None
        entry.notes.append("ungraded: the answer is private ('?')")
    else:
        evaluate = [["gaia_match", answer]]
        target = answer
    task = {
        "id": task_id,
        "prompt": question,
        "gym": "qa",
        "setup": setup or None,
        "evaluate": evaluate,
        "target": target,
        "files": files or None,
        "metadata": {"level": row.data.get("Level"), **extra, **source_metadata("gaia", row.data)},
    }
    return task, entry


def convert_gaia(path: str | Path) -> tuple[TaskSet, ConversionReport]:
    """Convert GAIA's ``metadata.jsonl`` (or a directory holding it); see the module docstring.

    Raises:
        TaskFileError: a malformed row (naming the file, the line and the field), or an attached
            file that is missing.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "metadata.jsonl"
    report = ConversionReport(format="gaia", path=str(path))
    tasks, rows = [], []
    for row in read_rows(path):
        data, entry = _convert_row(path, row)
        tasks.append(build_task(path, data, index=row.index, line=row.line))
        rows.append(row)
        report.tasks.append(entry)
    check_unique_ids(path, tasks, rows)
    name = path.parent.name if path.stem == "metadata" else path.stem
    return TaskSet(tasks=tasks, id=f"gaia-{name}", description=f"GAIA questions from {path}"), report
