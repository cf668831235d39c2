"""``files-organise``: sort the files of ``~/inbox`` into folders by a rule.

- difficulty 1: move the files of one extension into a folder named after it;
- difficulty 2: every file into a folder named after its extension;
- difficulty 3: every file into a folder named after the year it was last modified.

Graded by the whole tree of ``~/inbox`` (each file where the rule puts it, unchanged, nothing
else). The oracle types ``mkdir``/``mv`` commands into the task's terminal.

Example:
    >>> generate(3, 2).metadata["family"]
    'files-organise'
"""

from __future__ import annotations

import calendar
import time
from dataclasses import dataclass

from hud_gym.suites.files.script import ScriptOracle, family_random, family_task, shell_script
from hud_gym.task import Task

__all__ = ["generate", "oracle", "plan"]

FAMILY = "files-organise"
_EXTENSIONS = ("txt", "csv", "pdf", "jpg", "md", "log")
_STEMS = ("report", "budget", "notes", "photo", "draft", "summary", "invoice", "agenda", "scan", "memo", "plan", "list")
_YEARS = (2020, 2021, 2022, 2023)


@dataclass(frozen=True)
class Plan:
    """The inbox's files (name -> (text, modification time)) and where each must end up."""

    files: dict[str, tuple[str, int]]
    destination: dict[str, str]
    rule: str


def plan(seed: int, difficulty: int) -> Plan:
    """The family's parameters for ``seed`` and ``difficulty``."""
    rng = family_random(FAMILY, seed, difficulty)
    extensions = rng.sample(_EXTENSIONS, 2 + difficulty)
    stems = rng.sample(_STEMS, 3 + 2 * difficulty)
    files: dict[str, tuple[str, int]] = {}
    for index, stem in enumerate(stems):
        name = f"{stem}{rng.randrange(1, 99)}.{extensions[index % len(extensions)]}"
        year = rng.choice(_YEARS)
        mtime = calendar.timegm((year, rng.randrange(1, 13), rng.randrange(1, 28), 12, 0, 0))
        files[name] = (f"{stem} {rng.randrange(10**6)}\n", mtime)
    if difficulty == 1:
        chosen = extensions[0]
        destination = {n: f"{chosen}/{n}" if n.endswith(f".{chosen}") else n for n in files}
        rule = f"Move every .{chosen} file of ~/inbox into a new folder ~/inbox/{chosen}; leave the other files where they are."
    elif difficulty == 2:
        destination = {n: f"{n.rsplit('.', 1)[1]}/{n}" for n in files}
        rule = "Sort the files of ~/inbox into folders by extension: each file goes into ~/inbox/<extension> (e.g. a.txt into ~/inbox/txt)."
    else:
        destination = {n: f"{_year(mtime)}/{n}" for n, (_, mtime) in files.items()}
        rule = "Sort the files of ~/inbox into folders by the year they were last modified: each file goes into ~/inbox/<year> (e.g. ~/inbox/2021)."
    return Plan(files, destination, rule)


def _year(mtime: int) -> int:
    return time.gmtime(mtime).tm_year


def generate(seed: int, difficulty: int) -> Task:
    """The task for ``seed`` and ``difficulty``."""
    p = plan(seed, difficulty)
    tree = {name: {"text": text, "mtime": mtime} for name, (text, mtime) in p.files.items()}
    expected = {p.destination[name]: text for name, (text, _) in p.files.items()}
    return family_task(
        suite="files",
        family=FAMILY,
        seed=seed,
        difficulty=difficulty,
        prompt=f"{p.rule} Keep the files' names and contents. A terminal is open.",
        setup=[("write_tree", "inbox", tree), ("launch", "xterm")],
        evaluate=[("tree_equals", "inbox", expected)],
    )


def oracle(task: Task) -> ScriptOracle:
    """Types the ``mkdir`` and ``mv`` commands that carry out the rule."""
    meta = task.metadata or {}
    p = plan(meta["seed"], meta["difficulty"])
    moves = {name: dest for name, dest in p.destination.items() if dest != name}
    folders = sorted({dest.split("/")[0] for dest in moves.values()})
    commands = ["cd ~/inbox", f"mkdir -p {' '.join(folders)}"]
    commands += [f"mv {name} {dest.split('/')[0]}/" for name, dest in sorted(moves.items())]
    return shell_script(commands)
