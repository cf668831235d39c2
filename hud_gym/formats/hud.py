"""HUD SDK task files (the ``hud-python`` 0.2 ``Task``/``TaskSet`` JSON) as hud-gym tasks.

A HUD task is ``{"id", "prompt", "setup", "evaluate", "gym", "target", "choices", "files",
"metadata", "config"}`` plus, in later 0.2 releases, ``system_prompt``, ``description``,
``sensitive_data`` (and ``image_uri`` in uploads). ``setup``/``evaluate`` use HUD's function-config
grammar (a name, ``[name, *args]``, ``{"function", "args"}`` or a list of them), which hud-gym
reads as is. A file holds a list of tasks, ``{"id", "name", "description", "tasks"}``, the
platform's ``{"evalset": [...]}``, or one task per line (``.jsonl``).

The fields hud-gym's Task lacks go to ``task.metadata`` (``system_prompt``, ``description``,
``sensitive_data``, ``image_uri``). Every gym and every setup/evaluate name is checked against
hud-gym's registry when the file is read: an unknown gym (a HUD ``CustomGym``, a remote-only gym
such as ``OSWorld-Ubuntu``) or function (e.g. ``sheets_from_xlsx``) is a :class:`TaskFileError`
naming the file, the task index and the name. HUD 0.4+ MCP tasks (``mcp_config``,
``setup_tool``...) are a different model and are rejected with that reason.

Example:
    >>> taskset, report = convert_hud("hud_tasks.json")  # doctest: +SKIP
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
    source_metadata,
)
from hud_gym.task import TaskFileError, TaskSet

__all__ = ["HUD_EXTRA_FIELDS", "HUD_TASK_FIELDS", "convert_hud", "looks_like_hud"]

_NATIVE_FIELDS = frozenset(
    {"id", "prompt", "setup", "evaluate", "gym", "target", "choices", "files", "metadata", "config"}
)
HUD_EXTRA_FIELDS = frozenset({"system_prompt", "description", "sensitive_data", "image_uri"})
"""HUD task fields hud-gym keeps in ``task.metadata``."""
HUD_TASK_FIELDS = _NATIVE_FIELDS | HUD_EXTRA_FIELDS
"""Every field of a HUD 0.2 task."""
_MCP_FIELDS = frozenset({"mcp_config", "setup_tool", "evaluate_tool", "agent_tools", "agent_config"})
_SET_KEYS = frozenset({"id", "name", "description", "tasks", "evalset"})


def _task_list(data: Any) -> tuple[list[Any] | None, dict[str, Any]]:
    if isinstance(data, list):
        return data, {}
    if isinstance(data, dict) and ("tasks" in data or "evalset" in data) and set(data) <= _SET_KEYS:
        tasks = data.get("tasks", data.get("evalset"))
        return (tasks if isinstance(tasks, list) else None), data
    return None, {}


def looks_like_hud(data: Any) -> bool:
    """Whether parsed JSON is a HUD task file that hud-gym's own loader would not read: a HUD-only
    key at the top (``evalset``, ``name``) or in a task (``system_prompt``, ``mcp_config``...), or
    a ``CustomGym`` object as a task's gym."""
    if isinstance(data, dict) and "prompt" in data:
        tasks: list[Any] | None = [data]
        header: dict[str, Any] = {}
    else:
        tasks, header = _task_list(data)
    if tasks is None:
        return False
    if {"evalset", "name"} & set(header):
        return True
    for task in tasks:
        if isinstance(task, dict) and (
            (HUD_EXTRA_FIELDS | _MCP_FIELDS) & set(task) or isinstance(task.get("gym"), dict)
        ):
            return True
    return False


def _convert_task(path: Path, data: Any, index: int, line: int | None) -> tuple[dict[str, Any], TaskConversion]:
    if not isinstance(data, dict):
        raise TaskFileError(path, f"a task must be an object, got {type(data).__name__}", line=line, index=index)
    mcp = sorted(_MCP_FIELDS & set(data))
    if mcp:
        raise TaskFileError(
            path,
            f"a HUD 0.4+ MCP task ({', '.join(mcp)}) is not a HUD 0.2 task; hud-gym runs its own gyms, not MCP servers",
            line=line,
            index=index,
            field=mcp[0],
        )
    unknown = sorted(set(data) - HUD_TASK_FIELDS)
    if unknown:
        raise TaskFileError(
            path,
            f"unknown HUD task field (known: {', '.join(sorted(HUD_TASK_FIELDS))})",
            line=line,
            index=index,
            field=unknown[0],
        )
    gym = data.get("gym")
    if isinstance(gym, dict):
        raise TaskFileError(
            path,
            f"a HUD CustomGym ({gym.get('image_or_build_context') or gym.get('dockerfile') or gym}) "
            "has no hud-gym equivalent; use gym 'qa', 'hud-browser' or 'hud-ubuntu'",
            line=line,
            index=index,
            field="gym",
        )
    if isinstance(gym, str) and gym.lower().startswith("osworld"):
        raise TaskFileError(
            path,
            f"unknown gym {gym!r}: HUD's remote OSWorld gym takes OSWorld configs; convert OSWorld "
            "example files with format='osworld'",
            line=line,
            index=index,
            field="gym",
        )
    entry = TaskConversion(index=index, id=data.get("id") if isinstance(data.get("id"), str) else None, line=line)
    task = {k: v for k, v in data.items() if k in _NATIVE_FIELDS}
    metadata = dict(data["metadata"]) if isinstance(data.get("metadata"), dict) else {}
    for field in sorted(HUD_EXTRA_FIELDS & set(data)):
        if data[field] is not None:
            metadata[field] = data[field]
            entry.notes.append(f"'{field}' kept in task.metadata")
    metadata.update(source_metadata("hud", data))
    task["metadata"] = metadata if "metadata" not in data or isinstance(data["metadata"], dict) else data["metadata"]
    return task, entry


def convert_hud(path: str | Path) -> tuple[TaskSet, ConversionReport]:
    """Convert a HUD task file (``.json`` or ``.jsonl``); see the module docstring.

    Raises:
        TaskFileError: a malformed file or task, an unknown gym or function (naming the file, the
            task index or line, and the field or name).
    """
    path = Path(path)
    header: dict[str, Any] = {}
    if path.suffix.lower() == ".jsonl":
        rows = list(read_rows(path))
    else:
        data = read_json(path)
        if isinstance(data, dict) and "prompt" in data:
            items: list[Any] | None = [data]
        else:
            items, header = _task_list(data)
        if items is None:
            raise TaskFileError(
                path,
                "expected a HUD task, a list of tasks, {'tasks': [...]} or {'evalset': [...]}; "
                f"got {type(data).__name__} with keys {sorted(data) if isinstance(data, dict) else []}",
            )
        rows = [Row(data=item, index=i) for i, item in enumerate(items)]
    report = ConversionReport(format="hud", path=str(path))
    tasks = []
    for row in rows:
        task_data, entry = _convert_task(path, row.data, row.index, row.line)
        tasks.append(build_task(path, task_data, index=row.index, line=row.line))
        report.tasks.append(entry)
    check_unique_ids(path, tasks, rows)
    set_id = header.get("id") or header.get("name") or path.stem
    return TaskSet(tasks=tasks, id=str(set_id), description=header.get("description")), report
