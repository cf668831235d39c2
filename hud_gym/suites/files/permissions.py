"""``files-permissions``: set the permission bits of files and folders.

- difficulty 1: make one script of ``~/bin`` executable (mode 755);
- difficulty 2: make the files of ``~/private`` readable and writable by their owner only (600),
  and the folder itself accessible by its owner only (700);
- difficulty 3: in ``~/shared``: the scripts (``.sh``) 750, the other files 640, the folder 750.

Graded by each path's mode bits (every one must match). The oracle types ``chmod`` commands.

Example:
    >>> list(plan(1, 1).modes.values())
    ['755']
"""

from __future__ import annotations

from dataclasses import dataclass

from hud_gym.suites.files.script import ScriptOracle, family_random, family_task, shell_script
from hud_gym.task import Task

__all__ = ["generate", "oracle", "plan"]

FAMILY = "files-permissions"
_STEMS = ("backup", "deploy", "report", "cleanup", "sync", "notes", "keys", "diary", "budget", "contacts")


@dataclass(frozen=True)
class Plan:
    """The folder, its files (name -> (text, initial mode)), and the wanted modes (path -> mode)."""

    folder: str
    files: dict[str, tuple[str, str]]
    modes: dict[str, str]
    rule: str


def plan(seed: int, difficulty: int) -> Plan:
    """The family's parameters for ``seed`` and ``difficulty``."""
    rng = family_random(FAMILY, seed, difficulty)
    stems = rng.sample(_STEMS, 2 + 2 * difficulty)
    if difficulty == 1:
        names = [f"{stem}.sh" for stem in stems]
        files = {name: (f"#!/bin/sh\necho {name}\n", "644") for name in names}
        target = rng.choice(names)
        return Plan(
            "bin", files, {f"bin/{target}": "755"}, f"Make the script ~/bin/{target} executable: mode 755 (rwxr-xr-x)."
        )
    if difficulty == 2:
        files = {
            f"{stem}.txt": (f"{stem} {rng.randrange(10**6)}\n", rng.choice(("644", "664", "666"))) for stem in stems
        }
        modes = {"private": "700", **{f"private/{name}": "600" for name in files}}
        rule = "Make every file in ~/private readable and writable by its owner only (mode 600), and the folder ~/private itself accessible by its owner only (mode 700)."
        return Plan("private", files, modes, rule)
    files = {}
    for index, stem in enumerate(stems):
        name = f"{stem}.sh" if index % 2 == 0 else f"{stem}.txt"
        files[name] = (f"{stem} {rng.randrange(10**6)}\n", rng.choice(("644", "666", "777")))
    modes = {"shared": "750", **{f"shared/{n}": "750" if n.endswith(".sh") else "640" for n in files}}
    rule = "In ~/shared: give the shell scripts (.sh) mode 750 (rwxr-x---), every other file mode 640 (rw-r-----), and the folder ~/shared itself mode 750."
    return Plan("shared", files, modes, rule)


def generate(seed: int, difficulty: int) -> Task:
    """The task for ``seed`` and ``difficulty``."""
    p = plan(seed, difficulty)
    tree = {name: {"text": text, "mode": mode} for name, (text, mode) in p.files.items()}
    return family_task(
        suite="files",
        family=FAMILY,
        seed=seed,
        difficulty=difficulty,
        prompt=f"{p.rule} A terminal is open.",
        setup=[("write_tree", p.folder, tree), ("launch", "xterm")],
        evaluate=[("file_mode", path, mode) for path, mode in sorted(p.modes.items())],
    )


def oracle(task: Task) -> ScriptOracle:
    """Types one ``chmod`` per mode."""
    meta = task.metadata or {}
    p = plan(meta["seed"], meta["difficulty"])
    by_mode: dict[str, list[str]] = {}
    for path, mode in sorted(p.modes.items()):
        by_mode.setdefault(mode, []).append(path)
    return shell_script([f"chmod {mode} {' '.join(paths)}" for mode, paths in sorted(by_mode.items())])
