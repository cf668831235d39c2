"""``files-archive``: pack and unpack archives.

- difficulty 1: pack the folder ``~/project`` into ``~/project.tar.gz`` (members ``project/...``);
- difficulty 2: pack only the ``.md`` files of ``~/project`` into ``~/docs.zip`` (members named
  as the files, no folder);
- difficulty 3: unpack ``~/incoming.tar.gz`` into a new folder ``~/restore``, then pack its
  ``.txt`` files into ``~/texts.zip``.

Graded by the archive's members and their contents (and, at 3, the tree of ``~/restore``). The
oracle types ``tar`` and ``python3 -m zipfile`` commands (the desktop has no ``zip`` program).

Example:
    >>> "project/README.md" in plan(2, 1).files
    False
"""

from __future__ import annotations

import base64
import io
import tarfile
from dataclasses import dataclass
from typing import Any

from hud_gym.suites.files.script import ScriptOracle, family_random, family_task, shell_script
from hud_gym.task import Task

__all__ = ["generate", "oracle", "plan"]

FAMILY = "files-archive"
_NAMES = ("README", "CHANGES", "notes", "todo", "design", "usage", "setup", "intro")
_EXTENSIONS = ("md", "txt", "py", "csv")


@dataclass(frozen=True)
class Plan:
    """The files (path relative to the folder -> text)."""

    files: dict[str, str]


def plan(seed: int, difficulty: int) -> Plan:
    """The family's parameters for ``seed`` and ``difficulty``."""
    rng = family_random(FAMILY, seed, difficulty)
    names = rng.sample(_NAMES, 3 + difficulty)
    files = {}
    for index, name in enumerate(names):
        extension = ("md", "txt")[index] if index < 2 else rng.choice(_EXTENSIONS)
        files[f"{name}.{extension}"] = f"{name} {rng.randrange(10**9)}\n"
    return Plan(files)


def _tar_gz(files: dict[str, str]) -> str:
    """A ``.tar.gz`` of ``files`` (reproducible: fixed times), base64."""
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz", format=tarfile.PAX_FORMAT) as archive:
        for name, text in sorted(files.items()):
            content = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(content), 1_600_000_000, 0o644
            archive.addfile(info, io.BytesIO(content))
    raw = bytearray(data.getvalue())
    raw[4:8] = b"\0\0\0\0"  # the gzip header's time: reproducible bytes
    return base64.b64encode(bytes(raw)).decode()


def generate(seed: int, difficulty: int) -> Task:
    """The task for ``seed`` and ``difficulty``."""
    p = plan(seed, difficulty)
    texts = {name: text for name, text in p.files.items() if name.endswith(".txt")}
    if difficulty == 1:
        goal = "Pack the folder ~/project into the gzip-compressed tar archive ~/project.tar.gz (its members named project/...)."
        setup: list[tuple[Any, ...]] = [("write_tree", "project", dict(p.files))]
        checks: list[tuple[Any, ...]] = [
            ("archive_members", "project.tar.gz", {f"project/{n}": t for n, t in p.files.items()})
        ]
    elif difficulty == 2:
        goal = "Pack only the Markdown (.md) files of ~/project into the zip archive ~/docs.zip, each stored under its own name (no folder)."
        setup = [("write_tree", "project", dict(p.files))]
        checks = [("archive_members", "docs.zip", {n: t for n, t in p.files.items() if n.endswith(".md")})]
    else:
        goal = "Unpack the archive ~/incoming.tar.gz into a new folder ~/restore, then pack the .txt files of ~/restore into the zip archive ~/texts.zip, each stored under its own name (no folder)."
        setup = [("write_base64", "incoming.tar.gz", _tar_gz(p.files))]
        checks = [("tree_equals", "restore", dict(p.files)), ("archive_members", "texts.zip", texts)]
    return family_task(
        suite="files",
        family=FAMILY,
        seed=seed,
        difficulty=difficulty,
        prompt=f"{goal} A terminal is open.",
        setup=[*setup, ("launch", "xterm")],
        evaluate=checks,
    )


def oracle(task: Task) -> ScriptOracle:
    """Types the ``tar`` / ``python3 -m zipfile`` commands."""
    meta = task.metadata or {}
    p = plan(meta["seed"], meta["difficulty"])
    if meta["difficulty"] == 1:
        return shell_script(["tar czf project.tar.gz project"])
    if meta["difficulty"] == 2:
        return shell_script(["cd ~/project && python3 -m zipfile -c ~/docs.zip *.md"])
    texts = " ".join(sorted(name for name in p.files if name.endswith(".txt")))
    return shell_script(
        [
            "mkdir -p restore && tar xzf incoming.tar.gz -C restore",
            f"cd ~/restore && python3 -m zipfile -c ~/texts.zip {texts}",
        ]
    )
