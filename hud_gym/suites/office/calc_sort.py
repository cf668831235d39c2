"""``calc-sort``: put a score table's rows in order.

- difficulty 1: four rows (Name, Score) by name, A to Z;
- difficulty 2: six rows by score, highest first;
- difficulty 3: eight rows (Name, Team, Score) by team, A to Z, then by score, highest first.

Graded by every cell of the table: each row kept whole, in the order asked. The oracle types
the rows again in that order (an agent may as well use Data > Sort).

Example:
    >>> len(plan(3, 1)[1])
    4
"""

from __future__ import annotations

from typing import Any

from hud_gym.suites.files.script import family_random
from hud_gym.suites.office.common import PEOPLE, TEAMS, office_task
from hud_gym.suites.office.keys import KeyScript, open_document, save_keeping_format, type_rows
from hud_gym.task import Task

__all__ = ["generate", "oracle", "plan"]

FAMILY = "calc-sort"
DOCUMENT = "scores.xlsx"
_ORDERS = {
    1: "by Name, from A to Z",
    2: "by Score, highest first",
    3: "by Team, from A to Z, and within a team by Score, highest first",
}


def plan(seed: int, difficulty: int) -> tuple[list[str], list[list[Any]], list[list[Any]]]:
    """The header, the rows as given, and the rows in the order asked (scores all differ)."""
    rng = family_random(FAMILY, seed, difficulty)
    names = rng.sample(PEOPLE, 2 + 2 * difficulty)
    scores = rng.sample(range(10, 100), len(names))
    if difficulty < 3:
        header = ["Name", "Score"]
        rows: list[list[Any]] = [[name, score] for name, score in zip(names, scores, strict=True)]
        ordered = sorted(rows) if difficulty == 1 else sorted(rows, key=lambda row: -row[1])
    else:
        header = ["Name", "Team", "Score"]
        rows = [[name, TEAMS[i % len(TEAMS)], score] for i, (name, score) in enumerate(zip(names, scores, strict=True))]
        ordered = sorted(rows, key=lambda row: (row[1], -row[2]))
    while rows == ordered:
        rng.shuffle(rows)
    return header, rows, ordered


def generate(seed: int, difficulty: int) -> Task:
    """The task for ``seed`` and ``difficulty``."""
    header, rows, ordered = plan(seed, difficulty)
    cells = {f"{'ABC'[c]}{r + 2}": value for r, row in enumerate(ordered) for c, value in enumerate(row)}
    cells.update({f"{'ABC'[c]}1": name for c, name in enumerate(header)})
    return office_task(
        family=FAMILY,
        seed=seed,
        difficulty=difficulty,
        prompt=f"The spreadsheet {DOCUMENT} is open in LibreOffice Calc: a table with the columns {', '.join(header)}. Sort its rows (keeping each row together, the header on top) {_ORDERS[difficulty]}.",
        document=DOCUMENT,
        content=[header, *rows],
        evaluate=[("xlsx_cells", f"Documents/{DOCUMENT}", cells)],
    )


def oracle(task: Task) -> KeyScript:
    """Types the rows again in order, from A2, and saves."""
    meta = task.metadata or {}
    _, _, ordered = plan(meta["seed"], meta["difficulty"])
    return KeyScript([*open_document(DOCUMENT), *type_rows("A2", ordered), *save_keeping_format(DOCUMENT)])
