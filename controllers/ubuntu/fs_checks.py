"""File-system setup and evaluate functions of the desktop gym for task families (issue 26).

Beyond :mod:`hud_gym.controllers.ubuntu.functions`: a tree of files laid down in one call with
their times and permission bits, and graders of a whole folder tree, of a file's permission
bits, of an archive's members and of a file's lines. They run on the host (often as root) under
the same safety contract: every path resolves inside the env's home and is opened through
:class:`~hud_gym.controllers.ubuntu.homefs.HomeFiles` (descriptor-relative, no link out of the
home followed); what is read is bounded (:data:`MAX_READ_BYTES` of a file, :data:`MAX_ENTRIES`
entries of a tree, :data:`MAX_MEMBERS` members and :data:`MAX_UNPACKED` unpacked bytes of an
archive); a checked path the episode removed, swapped or made unreadable is
:class:`~hud_gym.evaluation.TargetAbsent` (the task's failure, reward 0), never an evaluator
error. Registered by the suites that use them (``Suite.function_modules``).
"""

from __future__ import annotations

import base64
import io
import stat
import tarfile
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from hud_gym.controllers.ubuntu.functions import _checked, _resolve, read_task_file
from hud_gym.controllers.ubuntu.homefs import HomeFiles
from hud_gym.evaluation import FunctionContext, Grade, TargetAbsent, evaluate_function, setup_function

__all__ = ["MAX_ENTRIES", "MAX_MEMBERS", "MAX_READ_BYTES", "MAX_UNPACKED", "normalise_lines"]

MAX_READ_BYTES = 10 * 1024 * 1024
"""Largest file (or archive) read."""
MAX_ENTRIES = 2000
"""Most entries of a tree walked (more: the tree is graded as not matching)."""
MAX_DEPTH = 8
"""Deepest folder of a tree walked."""
MAX_MEMBERS = 1000
"""Most members of an archive read."""
MAX_UNPACKED = 32 * 1024 * 1024
"""Most bytes an archive's members may unpack to (declared sizes, summed)."""
MAX_SETUP_FILES = 500
"""Most files one :func:`write_tree` lays down."""
_SHOWN = 8


def _mode(value: str | int) -> int:
    """A permission mode given as an octal string (``"644"``) or an int."""
    mode = int(value, 8) if isinstance(value, str) else int(value)
    if not 0 <= mode <= 0o7777:
        raise ValueError(f"a permission mode is 0-7777 (octal), got {value!r}")
    return mode


# ------------------------------------------------------------------------------- setup


@setup_function("ubuntu")
def write_tree(ctx: FunctionContext, root: str, files: Mapping[str, Any]) -> int:
    """Lay down files under ``root`` (a folder of the home, created): ``files`` maps a relative
    path to its text, or to ``{"text": ..., "mode": "755", "mtime": <epoch seconds>}``; a path
    ending in ``/`` is an (empty) folder. Returns the number of entries written."""
    if len(files) > MAX_SETUP_FILES:
        raise ValueError(f"write_tree lays down at most {MAX_SETUP_FILES} files, got {len(files)}")
    base, home = _resolve(ctx, root)
    home.mkdir(base)
    for relative, spec in files.items():
        target, _ = _resolve(ctx, f"{root.rstrip('/')}/{relative}")
        if relative.endswith("/"):
            home.mkdir(target)
            continue
        entry = spec if isinstance(spec, Mapping) else {"text": spec}
        home.write_bytes(target, str(entry.get("text", "")).encode("utf-8"))
        mode = entry.get("mode")
        mtime = entry.get("mtime")
        if mode is not None or mtime is not None:
            home.set_attributes(target, None if mode is None else _mode(mode), None if mtime is None else float(mtime))
    return len(files)


@setup_function("ubuntu")
def write_base64(ctx: FunctionContext, path: str, data: str) -> int:
    """Write the bytes ``data`` (base64; at most :data:`MAX_READ_BYTES` of them) to ``path``,
    creating its parent folders. Returns the number of bytes."""
    if len(data) > MAX_READ_BYTES * 4 // 3 + 4:
        raise ValueError(f"write_base64 writes at most {MAX_READ_BYTES} bytes")
    content = base64.b64decode(data, validate=True)
    target, home = _resolve(ctx, path)
    home.write_bytes(target, content)
    return len(content)


# ------------------------------------------------------------------------------- evaluate


def _walk(home: HomeFiles, base: Path, prefix: str = "", depth: int = 0) -> Iterator[tuple[str, str]]:
    """``(relative path, kind)`` of every entry under ``base`` (hidden ones skipped), depth first."""
    for name in sorted(home.listdir(base)):
        if name.startswith("."):
            continue
        relative = f"{prefix}{name}"
        kind = home.kind(base / name)
        yield relative, kind or "other"
        if kind == "dir" and depth < MAX_DEPTH:
            yield from _walk(home, base / name, f"{relative}/", depth + 1)


def _tree(home: HomeFiles, base: Path, path: str) -> dict[str, str]:
    """The files (``"file"``) and other non-folder entries under ``base``, by relative path."""
    with _checked(path):
        if home.kind(base) != "dir":
            raise TargetAbsent(f"{path!r} is not a folder")
        found: dict[str, str] = {}
        for count, (relative, kind) in enumerate(_walk(home, base)):
            if count >= MAX_ENTRIES:
                raise TargetAbsent(f"{path!r} holds more than {MAX_ENTRIES} entries")
            if kind != "dir":
                found[relative] = kind
        return found


def _compare(expected: Mapping[str, str | None], actual: Mapping[str, str | None], exact: bool) -> list[str]:
    """What differs between the expected and the actual contents (``None``: any content)."""
    missing = sorted(name for name in expected if name not in actual)
    unexpected = sorted(name for name in actual if name not in expected) if exact else []
    wrong = sorted(
        name
        for name, text in expected.items()
        if name in actual and text is not None and normalise_text(actual[name]) != normalise_text(text)
    )
    problems = []
    for label, names in (("missing", missing), ("unexpected", unexpected), ("wrong content", wrong)):
        if names:
            shown = [_clip(name) for name in names[:_SHOWN]]
            problems.append(f"{label} {shown!r}{' ...' if len(names) > _SHOWN else ''}")
    return problems


def _clip(name: str, limit: int = 120) -> str:
    """A name the episode chose (a member of an archive: any length), bounded for a grade."""
    return name if len(name) <= limit else name[:limit] + "..."


def normalise_text(text: str | None) -> str | None:
    """``text`` with its line ends normalised and trailing white space dropped."""
    return None if text is None else "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").split("\n")).strip()


@evaluate_function("ubuntu")
def tree_equals(ctx: FunctionContext, path: str, files: Mapping[str, str | None], exact: bool = True) -> Grade:
    """Reward 1 when the folder ``path`` holds every file of ``files`` (relative path -> its text,
    trailing white space aside, or ``None`` for any content) and, with ``exact``, no other file
    (hidden ones aside; empty folders do not count)."""
    base, home = _resolve(ctx, path, graded=True)
    tree = _tree(home, base, path)
    actual: dict[str, str | None] = {}
    for relative, kind in tree.items():
        if kind != "file":
            actual[relative] = None if files.get(relative) is None else "\0(not a regular file)"
        elif files.get(relative) is not None:
            actual[relative] = read_task_file(home, f"{path}/{relative}", base / relative, MAX_READ_BYTES)
        else:
            actual[relative] = None
    problems = _compare(files, actual, exact)
    summary = "; ".join(problems) if problems else "as expected"
    return Grade(reward=float(not problems), content=f"{path!r}: {summary}", info={"entries": sorted(tree)[:100]})


@evaluate_function("ubuntu")
def file_mode(ctx: FunctionContext, path: str, mode: str | int) -> Grade:
    """Reward 1 when the permission bits of ``path`` (a file or folder) are ``mode`` (octal: ``"640"``)."""
    wanted = _mode(mode)
    resolved, home = _resolve(ctx, path, graded=True)
    with _checked(path):
        if home.kind(resolved) is None:
            raise TargetAbsent(f"{path!r} does not exist")
        actual = stat.S_IMODE(home.status(resolved).st_mode)
    ok = actual == wanted
    return Grade(
        reward=float(ok), content=f"{path!r} has mode {actual:o} (wanted {wanted:o})", info={"mode": f"{actual:o}"}
    )


def _zip_members(data: bytes) -> dict[str, bytes]:
    members: dict[str, bytes] = {}
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = [i for i in archive.infolist() if not i.is_dir()]
        if len(infos) > MAX_MEMBERS or sum(i.file_size for i in infos) > MAX_UNPACKED:
            raise TargetAbsent(f"the archive holds more than {MAX_MEMBERS} members or {MAX_UNPACKED} bytes")
        for info in infos:
            with archive.open(info) as member:
                members[info.filename] = member.read(MAX_UNPACKED + 1)[:MAX_UNPACKED]
    return members


def _tar_members(data: bytes) -> dict[str, bytes]:
    members: dict[str, bytes] = {}
    unpacked = 0
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
        for count, info in enumerate(archive):
            unpacked += max(info.size, 0)
            if count >= MAX_MEMBERS or unpacked > MAX_UNPACKED:
                raise TargetAbsent(f"the archive holds more than {MAX_MEMBERS} members or {MAX_UNPACKED} bytes")
            if info.isfile():
                extracted = archive.extractfile(info)
                members[info.name] = extracted.read() if extracted is not None else b""
            elif not info.isdir():
                members[info.name] = b"\0(not a regular file)"
    return members


def _archive_members(data: bytes, path: str) -> dict[str, bytes]:
    """The members of the zip or tar (plain or compressed) archive ``data``, by normalised name."""
    try:
        raw = _zip_members(data) if zipfile.is_zipfile(io.BytesIO(data)) else _tar_members(data)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
        raise TargetAbsent(f"{path!r} is not a readable zip or tar archive: {str(exc)[:200]}") from exc
    members: dict[str, bytes] = {}
    for name, content in raw.items():
        clean = name
        while clean.startswith("./"):
            clean = clean[2:]
        members[clean.lstrip("/")] = content
    return members


@evaluate_function("ubuntu")
def archive_members(ctx: FunctionContext, path: str, files: Mapping[str, str | None], exact: bool = True) -> Grade:
    """Reward 1 when ``path`` is a zip or tar (``.tar``, ``.tar.gz``, ``.tar.bz2``, ``.tar.xz``)
    archive holding every file of ``files`` (member path -> its text, or ``None``: any) and, with
    ``exact``, no other file (folders aside). A leading ``./`` of a member's name is ignored."""
    resolved, home = _resolve(ctx, path, graded=True)
    with _checked(path):
        if home.kind(resolved) != "file":
            raise TargetAbsent(f"{path!r} is not a file")
        data = home.read_bytes(resolved, MAX_READ_BYTES + 1)
    if len(data) > MAX_READ_BYTES:
        raise TargetAbsent(f"{path!r} is larger than {MAX_READ_BYTES} bytes")
    members = _archive_members(data, path)
    actual = {name: content.decode("utf-8", errors="replace") for name, content in members.items()}
    problems = _compare(files, actual, exact)
    summary = "; ".join(problems) if problems else "as expected"
    return Grade(
        reward=float(not problems),
        content=f"{path!r}: {summary}",
        info={"members": [_clip(m) for m in sorted(members)[:100]]},
    )


def normalise_lines(text: str) -> list[str]:
    """The non-empty lines of ``text``, each stripped with its runs of white space made one space."""
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


@evaluate_function("ubuntu")
def file_lines(ctx: FunctionContext, path: str, lines: list[str], ordered: bool = True) -> Grade:
    """Reward 1 when the non-empty lines of the file ``path`` are ``lines`` (white space runs made
    one space, ends stripped: ``uniq -c``'s padding does not count); ``ordered=False``: in any order."""
    resolved, home = _resolve(ctx, path, graded=True)
    actual = normalise_lines(read_task_file(home, path, resolved, MAX_READ_BYTES))
    wanted = normalise_lines("\n".join(lines))
    ok = actual == wanted if ordered else sorted(actual) == sorted(wanted)
    shown = actual[:_SHOWN]
    return Grade(
        reward=float(ok),
        content=f"{path!r}: {'as expected' if ok else f'lines {shown!r} (wanted {wanted[:_SHOWN]!r})'}",
        info={"lines": len(actual)},
    )
