"""Reading task files as untrusted data: every malformed file is one :class:`TaskFileError`
naming the file, the line or task index, and the problem (never a ``RecursionError``, a
``UnicodeDecodeError`` or a hang).

What a task file may hold:

- at most :data:`MAX_FILE_BYTES` bytes (files are read whole; the environment variable
  ``HUD_GYM_MAX_TASK_FILE_BYTES`` raises the limit), UTF-8 text (a BOM is allowed);
- standard JSON: no ``NaN``/``Infinity`` (nor a number too large for a float, nor an integer of
  thousands of digits); YAML: one document, no ``.nan``/``.inf`` either;
- values nested at most :data:`MAX_DEPTH` lists/objects deep;
- YAML aliases that do not contain themselves (a recursive structure) and that expand to at most
  :data:`MAX_YAML_VALUES` values and add at most :data:`MAX_YAML_ALIAS_CHARS` characters of
  scalars (an alias bomb; counted on the composed graph, before any value is built);
- task ids that are unique in the file (the error names both occurrences).

(One module of ~420 lines on purpose: every limit on untrusted task files in one place, to audit together.)

Example:
    >>> parse_json(Path("tasks.json"), '[{"prompt": "p", "metadata": {"x": NaN}}]')
    Traceback (most recent call last):
    ...
    hud_gym.task_files.TaskFileError: tasks.json, task 0, field 'metadata.x': NaN is not a JSON value (JSON has no NaN or Infinity)
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hud_gym.errors import HudGymError

__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_YAML_ALIAS_CHARS",
    "MAX_YAML_VALUES",
    "TaskFileError",
    "check_unique_ids",
    "check_values",
    "jsonl_records",
    "max_file_bytes",
    "parse_json",
    "parse_yaml",
    "read_text",
]

MAX_FILE_BYTES = 128 * 1024 * 1024
"""Largest task file read (``HUD_GYM_MAX_TASK_FILE_BYTES`` overrides it)."""
MAX_DEPTH = 64
"""Deepest nesting of lists and objects in a task file."""
TOO_DEEP = f"values nested deeper than {MAX_DEPTH} lists/objects"
"""The error for a task file nested deeper than :data:`MAX_DEPTH`."""
MAX_YAML_VALUES = 1_000_000
"""Most values a YAML task file may expand to once its aliases are resolved."""
MAX_YAML_ALIAS_CHARS = 16 * 1024 * 1024
"""Most characters of scalars that aliases may add to a YAML task file, beyond its own text
(a 1 MB scalar aliased 300 times is 300 MB of task data)."""

MAX_MESSAGE_CHARS = 400
"""Longest problem text in a :class:`TaskFileError` (one line; values from the file are cut)."""

_MAX_BYTES_ENV = "HUD_GYM_MAX_TASK_FILE_BYTES"
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
_LARGE_EXPONENT = re.compile(r"[eE][+-]?0*[0-9]{3,}")  # a float that may overflow to infinity
_HUGE_INT = re.compile(r"[0-9]{4000,}")


class TaskFileError(HudGymError, ValueError):
    """A task file that cannot be read. The message names the file, the line or index (and the
    task's id when it has one), and the field."""

    def __init__(
        self,
        path: str | Path,
        message: str,
        *,
        line: int | None = None,
        index: int | None = None,
        field: str | None = None,
        task_id: str | None = None,
    ) -> None:
        self.path = str(path)
        self.line = line
        self.index = index
        self.field = field
        self.task_id = task_id
        message = " ".join(part.strip() for part in message.splitlines() if part.strip())
        if len(message) > MAX_MESSAGE_CHARS:
            message = message[:MAX_MESSAGE_CHARS] + f"... ({len(message)} characters)"
        self.problem = message
        where = [self.path]
        if line is not None:
            where.append(f"line {line}")
        if index is not None:
            where.append(f"task {index}" + (f" ({task_id!r})" if task_id else ""))
        if field is not None:
            where.append(f"field '{field}'")
        super().__init__(f"{', '.join(where)}: {message}")

    def __reduce__(self) -> Any:
        return _rebuild, (self.path, self.problem, self.line, self.index, self.field, self.task_id)


def _rebuild(
    path: str, problem: str, line: int | None, index: int | None, field: str | None, task_id: str | None = None
) -> TaskFileError:
    return TaskFileError(path, problem, line=line, index=index, field=field, task_id=task_id)


# ---------------------------------------------------------------------- bytes and text


def max_file_bytes() -> int:
    """The size limit in force (:data:`MAX_FILE_BYTES` or ``$HUD_GYM_MAX_TASK_FILE_BYTES``)."""
    configured = os.environ.get(_MAX_BYTES_ENV, "").strip()
    return int(configured) if configured.isdigit() else MAX_FILE_BYTES


def read_text(path: Path) -> str:
    """The file's text (UTF-8, an optional BOM removed).

    Raises:
        TaskFileError: unreadable, larger than the limit, or not UTF-8 (naming the line).
    """
    limit = max_file_bytes()
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise TaskFileError(path, f"cannot read the file ({exc.strerror or exc})") from None
    except ValueError as exc:  # a path with a NUL byte
        raise TaskFileError(path, f"not a usable file name ({exc})") from None
    if len(data) > limit:
        raise TaskFileError(
            path,
            f"the file is larger than {_size(limit)}; task files are read whole (set "
            f"{_MAX_BYTES_ENV} to allow larger ones)",
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise TaskFileError(
            path,
            f"not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start} "
            f"({exc.reason}); save the file as UTF-8",
            line=line,
        ) from None


def _size(n: int) -> str:
    return f"{n / 2**20:.0f} MiB" if n >= 2**20 else f"{n} bytes"


# ---------------------------------------------------------------------- JSON


class _Bad:
    """A JSON literal refused by the parser hooks, reported by :func:`check_values` with its place."""

    __slots__ = ("problem",)

    def __init__(self, problem: str) -> None:
        self.problem = problem


def _constant(name: str) -> _Bad:
    return _Bad(f"{name} is not a JSON value (JSON has no NaN or Infinity)")


_DECODER = json.JSONDecoder(parse_constant=_constant)


def _loads(path: Path, text: str, line: int | None) -> Any:
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise TaskFileError(
            path, f"invalid JSON: {exc.msg} (column {exc.colno})", line=line if line is not None else exc.lineno
        ) from None
    except RecursionError:
        raise TaskFileError(
            path,
            TOO_DEEP,
            line=line if line is not None else _deep_line(text),
        ) from None
    except ValueError:  # an integer longer than Python converts (4300 digits)
        skeleton = _blank_strings(text)  # strict JSON strings hold no newline: the line numbers stay
        match = _HUGE_INT.search(skeleton)
        raise TaskFileError(
            path,
            "an integer too long to be a number a task can use",
            line=line if line is not None or match is None else _line_at(skeleton, match.start()),
        ) from None


def parse_json(path: Path, text: str, *, line: int | None = None) -> Any:
    """Parse ``text`` (the whole file, or the JSONL line ``line``) and check its values.

    Raises:
        TaskFileError: invalid JSON (naming the line and column), nesting deeper than
            :data:`MAX_DEPTH`, NaN/Infinity, a number too large; naming the task index and field.
    """
    data = _loads(path, text, line)
    if _may_be_refused(text):
        check_values(path, data, line=line)
    return data


def jsonl_records(path: Path, text: str) -> list[tuple[int, Any]]:
    """``(line number, value)`` of each non-empty line of a JSONL file, checked as :func:`parse_json`."""
    records = [
        (number, _loads(path, line, number)) for number, line in enumerate(text.splitlines(), start=1) if line.strip()
    ]
    if _may_be_refused(text):
        for number, data in records:
            check_values(path, data, line=number)
    return records


def _blank_strings(text: str) -> str:
    """``text`` with every JSON string literal emptied: what is left holds no quoted text."""
    return _JSON_STRING.sub('""', text)


def _may_be_refused(text: str) -> bool:
    """Whether parsed JSON ``text`` may hold what :func:`check_values` refuses: a quick look at the
    text outside its strings (NaN, Infinity, a large exponent, deep brackets), so that the slow,
    precise walk over the values runs only then."""
    skeleton = _blank_strings(text)
    if "NaN" in skeleton or "Infinity" in skeleton or _LARGE_EXPONENT.search(skeleton):
        return True
    raw = skeleton.encode("utf-8")
    depth, chunk = 0, 1 << 23
    for start in range(0, len(raw), chunk):
        codes = np.frombuffer(raw, np.uint8, count=min(chunk, len(raw) - start), offset=start)
        steps = (codes == 91).astype(np.int32) + (codes == 123) - (codes == 93) - (codes == 125)  # [ { ] }
        running = np.cumsum(steps) + depth
        if running.size and running.max() > MAX_DEPTH:
            return True
        depth = int(running[-1]) if running.size else depth
    return False


def _deep_line(text: str) -> int | None:
    """The line where JSON ``text`` first nests deeper than :data:`MAX_DEPTH`."""
    depth = 0
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return _line_at(text, match.start())
        elif token in "]}":
            depth -= 1
    return None


# ---------------------------------------------------------------------- values


def check_values(path: Path, data: Any, *, line: int | None = None, lines: Sequence[int] | None = None) -> None:
    """Refuse NaN, infinities, refused literals and nesting deeper than :data:`MAX_DEPTH`.

    The error names the task (the index in a top-level list, or in a ``tasks`` list) and the
    field; ``lines`` gives each task's line when known (YAML), ``line`` the line of all of ``data``
    (a JSONL row, whose index is then not known here).
    """
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(data, ())]
    while stack:
        value, where = stack.pop()
        problem = None
        if isinstance(value, _Bad):
            problem = value.problem
        elif isinstance(value, float) and not math.isfinite(value):
            problem = f"{value} is not allowed (NaN and infinities are not numbers a task can use)"
        elif isinstance(value, (dict, list)):
            if len(where) >= MAX_DEPTH:
                problem = TOO_DEEP
            else:
                items = value.items() if isinstance(value, dict) else enumerate(value)
                stack.extend((child, (*where, key)) for key, child in reversed(list(items)))
        if problem is not None:
            raise _located(path, problem, where, line=line, lines=lines)


def _located(
    path: Path, problem: str, where: tuple[str | int, ...], *, line: int | None, lines: Sequence[int] | None
) -> TaskFileError:
    index = None
    rest = where
    if where and isinstance(where[0], int):
        index, rest = where[0], where[1:]
    elif len(where) >= 2 and where[0] == "tasks" and isinstance(where[1], int):
        index, rest = where[1], where[2:]
    if line is None and index is not None and lines and index < len(lines):
        line = lines[index]
    return TaskFileError(path, problem, line=line, index=index, field=field_path(rest) or None)


def field_path(parts: Iterable[str | int]) -> str:
    """``("metadata", "x", 0)`` as ``metadata.x[0]``."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def check_unique_ids(path: Path, entries: Iterable[tuple[str | None, int, int | None]]) -> None:
    """Refuse two tasks with one id; ``entries`` are ``(id, index, line)``.

    Raises:
        TaskFileError: at the second occurrence, naming the first one too.
    """
    seen: dict[str, tuple[int, int | None]] = {}
    for task_id, index, line in entries:
        if task_id is None:
            continue
        if task_id in seen:
            first, first_line = seen[task_id]
            at = f"task {first}" + (f", line {first_line}" if first_line is not None else "")
            raise TaskFileError(path, f"duplicate task id {task_id!r} (also {at})", line=line, index=index, field="id")
        seen[task_id] = (index, line)


# ---------------------------------------------------------------------- YAML


def parse_yaml(path: Path, text: str) -> tuple[Any, list[int] | None]:
    """The YAML document in ``text`` and the line of each task (when it holds a list of tasks).

    Raises:
        TaskFileError: invalid YAML, several documents, a recursive alias, an alias bomb, nesting
            deeper than :data:`MAX_DEPTH`, ``.nan``/``.inf`` (naming the line).
    """
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        _check_yaml_graph(path, node, len(text) + MAX_YAML_ALIAS_CHARS)
        data = loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else None
        if isinstance(exc, yaml.reader.ReaderError):  # a character YAML does not allow
            problem, line = f"character {exc.character!r} is not allowed ({exc.reason})", _line_at(text, exc.position)
        else:
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        if "nesting depth" in problem:  # PyYAML >= 6.0.4 bounds the depth while parsing
            raise TaskFileError(path, TOO_DEEP, line=line) from None
        raise TaskFileError(path, f"invalid YAML: {problem}", line=line) from None
    except RecursionError:  # a guard: the graph check bounds the depth first
        raise TaskFileError(path, TOO_DEEP) from None
    finally:
        loader.dispose()
    lines = _task_lines(node)
    check_values(path, data, lines=lines)
    return data, lines


def _line_at(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def _children(node: Any) -> list[Any]:
    import yaml

    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_yaml_graph(path: Path, root: Any, max_chars: int) -> None:
    """Depth, expanded size (values, and ``max_chars`` characters of scalars) and cycles of the
    composed node graph (aliases are shared nodes)."""
    import yaml

    open_nodes: set[int] = set()
    size: dict[int, int] = {}
    chars: dict[int, int] = {}
    depth: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        line = node.start_mark.line + 1
        if finished:
            children = _children(node)
            open_nodes.discard(key)
            size[key] = 1 + sum(size[id(child)] for child in children)
            chars[key] = len(node.value) if isinstance(node, yaml.ScalarNode) else sum(chars[id(c)] for c in children)
            if chars[key] > max_chars:
                raise TaskFileError(
                    path,
                    f"aliases expand this value to more than {max_chars:,} characters (an alias bomb?)",
                    line=line,
                )
            depth[key] = (
                0 if isinstance(node, yaml.ScalarNode) else 1 + max((depth[id(child)] for child in children), default=0)
            )
            if depth[key] > MAX_DEPTH:
                raise TaskFileError(path, TOO_DEEP, line=line)
            if size[key] > MAX_YAML_VALUES:
                raise TaskFileError(
                    path,
                    f"aliases expand this value to more than {MAX_YAML_VALUES:,} values (an alias bomb?)",
                    line=line,
                )
            continue
        if key in size:
            continue
        if len(open_nodes) > MAX_DEPTH:
            raise TaskFileError(path, TOO_DEEP, line=line)
        open_nodes.add(key)
        stack.append((node, True))
        for child in reversed(_children(node)):
            if id(child) in open_nodes:
                raise TaskFileError(
                    path,
                    "an alias refers to a value that contains it (a recursive structure)",
                    line=child.start_mark.line + 1,
                )
            if id(child) not in size:
                stack.append((child, False))


def _task_lines(node: Any) -> list[int] | None:
    import yaml

    seq = node
    if isinstance(node, yaml.MappingNode):
        seq = next((v for k, v in node.value if getattr(k, "value", None) == "tasks"), None)
    if isinstance(seq, yaml.SequenceNode):
        return [item.start_mark.line + 1 for item in seq.value]
    return None
