"""``files-find``: find the notes that mention a reference code, anywhere under ``~/notes``.

- difficulty 1: one note mentions it: write its path (relative to ``~/notes``) into ``~/found.txt``;
- difficulty 2: several notes, in nested folders: their paths, one per line (in any order);
- difficulty 3: several notes: copy them into a new folder ``~/found`` (flat, names kept).

Other notes mention other codes of the same shape. Graded by ``~/found.txt``'s lines or the tree
of ``~/found``. The oracle types ``grep -rl`` pipelines.

Example:
    >>> len(plan(5, 1).matches)
    1
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hud_gym.suites.files.script import ScriptOracle, family_random, family_task, shell_script
from hud_gym.task import Task

__all__ = ["generate", "oracle", "plan"]

FAMILY = "files-find"
_FOLDERS = ("work", "home", "travel", "projects", "archive", "misc")
_WORDS = ("meeting", "call", "order", "delivery", "visit", "payment", "review", "ticket", "plan", "draft")


@dataclass(frozen=True)
class Plan:
    """The notes (path relative to ``~/notes`` -> text), the code, and the notes that mention it."""

    notes: dict[str, str]
    code: str
    matches: tuple[str, ...]


def plan(seed: int, difficulty: int) -> Plan:
    """The family's parameters for ``seed`` and ``difficulty``."""
    rng = family_random(FAMILY, seed, difficulty)
    codes = [f"REF-{n}" for n in rng.sample(range(1000, 9999), 4)]
    code = codes[0]
    count = 4 + 3 * difficulty
    hits = 1 if difficulty == 1 else 2 + difficulty
    folders = rng.sample(_FOLDERS, 1 + difficulty)
    names = rng.sample(_WORDS, len(_WORDS))
    notes: dict[str, str] = {}
    matches = []
    for index in range(count):
        depth = rng.randrange(0, min(difficulty, 2) + 1)
        parts = [rng.choice(folders) for _ in range(depth)]
        name = f"{names[index % len(names)]}-{index}.txt"
        path = "/".join([*parts, name])
        mentioned = code if index < hits else rng.choice(codes[1:])
        notes[path] = f"Notes on the {names[index % len(names)]}.\nSee {mentioned} for details.\n"
        if index < hits:
            matches.append(path)
    return Plan(notes, code, tuple(sorted(matches)))


def generate(seed: int, difficulty: int) -> Task:
    """The task for ``seed`` and ``difficulty``."""
    p = plan(seed, difficulty)
    if difficulty < 3:
        what = "the note" if difficulty == 1 else "every note"
        goal = f"write the path of {what} (relative to ~/notes, e.g. work/call-3.txt) into ~/found.txt" + (
            "" if difficulty == 1 else ", one per line"
        )
        check: tuple[Any, ...] = ("file_lines", "found.txt", list(p.matches), False)
    else:
        goal = "copy every such note into a new folder ~/found (directly in it, keeping each file's name)"
        check = ("tree_equals", "found", {path.rsplit("/", 1)[-1]: p.notes[path] for path in p.matches})
    return family_task(
        suite="files",
        family=FAMILY,
        seed=seed,
        difficulty=difficulty,
        prompt=f"Among the notes under ~/notes (and its subfolders), find those that mention {p.code}, and {goal}. A terminal is open.",
        setup=[("write_tree", "notes", dict(p.notes)), ("launch", "xterm")],
        evaluate=[check],
    )


def oracle(task: Task) -> ScriptOracle:
    """Types a ``grep -rl`` pipeline."""
    meta = task.metadata or {}
    p = plan(meta["seed"], meta["difficulty"])
    if meta["difficulty"] < 3:
        return shell_script([f"cd ~/notes && grep -rl {p.code} . | cut -c3- > ~/found.txt"])
    return shell_script(["mkdir -p ~/found", f"grep -rl {p.code} ~/notes | xargs -I{{}} cp {{}} ~/found/"])
