"""The loaders that find task sets and tasks by name or path.

A task set is found by, in order: an existing file path (``.json``, ``.jsonl``, ``.yaml``), or a
registered loader (``"miniwob"``, ``"qa-basic"``: declared by the suites, :mod:`hud_gym.suites`,
and the gyms' descriptors). A task is referenced as ``"<taskset>/<task id>"``.

Files are read by the reader :func:`set_file_reader` installs: :mod:`hud_gym.formats` (hud-gym's
own format and the foreign ones it converts), installed when it is imported; this module never
imports it. Without one, files are read in hud-gym's own format only.

Example:
    >>> ts = load_taskset("qa-basic")
    >>> get_task("qa-basic/capital-france").target
    'Paris'
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from functools import lru_cache
from importlib import import_module, resources
from pathlib import Path
from typing import Any

from hud_gym.task import Task, TaskSet

__all__ = [
    "HUB_TASKSETS",
    "FileReader",
    "available_tasksets",
    "get_task",
    "load_taskset",
    "missing_task_message",
    "packaged_taskset",
    "register_taskset",
    "resolve_task",
    "resolve_taskset",
    "set_file_reader",
]

FileReader = Callable[[Path, "str | None"], TaskSet]
"""Reads a task file or directory in a format (``None``: detect it)."""

_LOADERS: dict[str, Callable[..., TaskSet] | str] = {}
_OSWORLD = (
    "get OSWorld's evaluation_examples/ (github.com/xlang-ai/OSWorld) and load its examples directory "
    "with load_taskset(path, format='osworld')"
)
HUB_TASKSETS: dict[str, str] = {
    "osworld-verified": _OSWORLD,
    "osworld": _OSWORLD,
    "gaia": "download GAIA's metadata.jsonl (huggingface.co/datasets/gaia-benchmark/GAIA) and load it with "
    "load_taskset(path, format='gaia')",
    "webvoyager": "download WebVoyager_data.jsonl (github.com/MinorJerry/WebVoyager) and load it with "
    "load_taskset(path, format='webvoyager')",
    "mind2web": "write the tasks as a hud-gym task file (.json/.jsonl/.yaml) and load it with load_taskset(path)",
    "hud-samples": "export the tasks as HUD task JSON and load it with load_taskset(path, format='hud')",
    "sheetbench": "export the tasks as HUD task JSON and load it with load_taskset(path, format='hud')",
}
"""HUD's hosted task sets (``load_taskset("GAIA")`` downloads them in HUD), by lower-case name:
how to load each from a local file instead."""
_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml")


def _read_native(path: Path, format: str | None) -> TaskSet:
    if format not in (None, "native") or path.is_dir():
        raise ValueError(f"reading {format or 'this'} task files needs hud_gym.formats")
    return TaskSet.load(path)


_reader: list[FileReader] = [_read_native]


def set_file_reader(reader: FileReader) -> None:
    """Read task files with ``reader`` (installed by :mod:`hud_gym.formats`)."""
    _reader[0] = reader


def register_taskset(name: str, loader: Callable[..., TaskSet] | str) -> None:
    """Make ``load_taskset(name)`` call ``loader`` (for generated sets such as MiniWoB++): a
    function, or its import path ``"package.module:function"`` (imported when the set is first
    asked for; a gym's descriptor declares its sets this way). ``load_taskset(name, **options)``
    passes the options to it as keyword arguments (a family's ``split``, ``n``, ``difficulty``)."""
    _LOADERS[name] = loader
    _load_named.cache_clear()


def packaged_taskset(package: str, filename: str) -> TaskSet:
    """The task set in file ``filename`` of ``package`` (hud-gym's own format), its id the file's
    name without the suffix: the loader of a suite's bundled file."""
    with resources.as_file(resources.files(package) / filename) as path:
        taskset = TaskSet.load(path)
    taskset.id = filename.rsplit(".", 1)[0]
    return taskset


def available_tasksets() -> list[str]:
    """Names :func:`load_taskset` accepts besides file paths."""
    return sorted(_LOADERS)


@lru_cache(maxsize=32)
def _load_named(name: str, options: tuple[tuple[str, Any], ...] = ()) -> TaskSet:
    loader = _LOADERS.get(name)
    if isinstance(loader, str):
        module, attribute = loader.split(":")
        loader = getattr(import_module(module), attribute)
    if loader is None:
        raise KeyError(name)
    if options:
        _check_options(name, loader, dict(options))
    return loader(**dict(options))


def _check_options(name: str, loader: Callable[..., TaskSet], options: dict[str, Any]) -> None:
    """Raise one clear ValueError when ``loader`` takes no such keyword options."""
    try:
        parameters = inspect.signature(loader).parameters
    except (TypeError, ValueError):
        return
    accepted = [p for p, v in parameters.items() if v.kind in (v.KEYWORD_ONLY, v.POSITIONAL_OR_KEYWORD)]
    if any(v.kind is v.VAR_KEYWORD for v in parameters.values()):
        return
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        takes = f"it takes {', '.join(accepted)}" if accepted else "it takes none"
        raise ValueError(f"task set {name!r} has no option {', '.join(map(repr, unknown))}; {takes}")


def load_taskset(name_or_path: str | Path, format: str | None = None, **options: Any) -> TaskSet:
    """Load a task set from a file path (or directory) or by registered name.

    ``options`` go to a registered loader as keyword arguments (a task family's ``split``,
    ``n``, ``difficulty``, ``start``: ``load_taskset("webapps", split="test", n=200)``).

    Files may be in hud-gym's own format or in another one (:mod:`hud_gym.formats`: ``"hud"``,
    ``"webvoyager"``, ``"gaia"``, ``"osworld"``); ``format=None`` detects it from the content, a
    name forces it (``"native"`` is hud-gym's own). Rows that cannot be converted are skipped
    with a ``ConversionWarning``; ``hud_gym.formats.convert`` gives the full report.

    Raises:
        ValueError: neither a file nor a known name (the message lists the known names), an
            unknown format, or options the named loader does not take (or given with a file).
        TaskFileError: the file is malformed, or a task names an unknown gym, setup or evaluate
            function, or arguments that do not bind (checked at load, not at reset; the message
            names the file, the task index and id, and the call).
    """
    read_taskset = _reader[0]
    path = Path(name_or_path)
    if options:
        if str(name_or_path) not in _LOADERS or format not in (None, "native"):
            raise ValueError(
                f"options {', '.join(sorted(options))} are for a registered task set; {str(name_or_path)[:200]!r} is not one"
            )
        return _load_named(str(name_or_path), tuple(sorted(options.items()))).model_copy(deep=True)
    if path.suffix.lower() in _SUFFIXES and path.is_file():
        return read_taskset(path, format)
    name = str(name_or_path)
    if format in (None, "native"):
        try:
            return _load_named(name).model_copy(deep=True)
        except KeyError:
            pass
    if path.is_dir():
        return read_taskset(path, format)
    if format not in (None, "native"):
        raise ValueError(f"format={format!r} needs a task file or directory; {name!r} is neither")
    if path.suffix.lower() in _SUFFIXES:
        raise ValueError(f"task file {name!r} does not exist")
    hub = HUB_TASKSETS.get(name.lower())
    if hub is not None:
        raise ValueError(f"{name!r} is a HUD hub task set, which hud-gym does not download (it runs offline): {hub}")
    raise ValueError(
        f"unknown task set {name!r}; known task sets: {', '.join(available_tasksets())} (or a .json/.jsonl/.yaml path)"
    )


def get_task(reference: str) -> Task:
    """The task ``"<taskset>/<task id>"``.

    Raises:
        ValueError: the reference has no ``/``, or the task set or the task does not exist.
    """
    if "/" not in reference:
        raise ValueError(f"a task reference looks like '<taskset>/<task id>', got {reference!r}")
    set_name, task_id = reference.split("/", 1)
    try:
        taskset = _load_named(set_name)
    except KeyError:
        taskset = load_taskset(set_name)
    try:
        return taskset.get(task_id).model_copy(deep=True)
    except KeyError:
        raise ValueError(missing_task_message(set_name, task_id, [t.id for t in taskset if t.id])) from None


def missing_task_message(set_name: str, task_id: str, ids: Sequence[str], shown: int = 40) -> str:
    """``task set S has no task T (did you mean ...?); its N tasks: ...``: the closest ids first,
    then the others in order, the first ``shown`` of them (the close ones are never cut off)."""
    import difflib

    close = difflib.get_close_matches(task_id, list(ids), n=3, cutoff=0.6)
    quoted = [repr(c) for c in close]
    hint = (
        f" (did you mean {', '.join(quoted[:-1]) + ' or ' if len(quoted) > 1 else ''}{quoted[-1] if quoted else ''}?)"
    )
    ordered = [*close, *(i for i in ids if i not in close)]
    listed = ", ".join(ordered[:shown]) + (f" ... ({len(ids) - shown} more)" if len(ids) > shown else "")
    return f"task set {set_name!r} has no task {task_id[:200]!r}{hint if close else ''}; its {len(ids)} tasks: {listed}"


def resolve_task(task: Task | dict[str, Any] | str) -> Task:
    """A :class:`Task` from a Task, a dict, or a ``"<taskset>/<task id>"`` reference."""
    if isinstance(task, Task):
        return task
    if isinstance(task, dict):
        return Task.model_validate(task)
    if isinstance(task, str):
        return get_task(task)
    raise TypeError(f"a task is a Task, a dict or a '<taskset>/<task id>' string, got {type(task).__name__}")


def resolve_taskset(taskset: TaskSet | Sequence[Task | dict[str, Any]] | str | Path) -> TaskSet:
    """A :class:`TaskSet` from a TaskSet, a list of tasks, a name or a path."""
    if isinstance(taskset, TaskSet):
        return taskset
    if isinstance(taskset, (str, Path)):
        return load_taskset(taskset)
    return TaskSet(tasks=[resolve_task(t) for t in taskset])
