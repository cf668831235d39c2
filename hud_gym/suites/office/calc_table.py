"""``calc-table``: type a table into a spreadsheet under its header row.

- difficulty 1: two rows of two columns (item, quantity);
- difficulty 2: four rows;
- difficulty 3: six rows of three columns (item, quantity, price).

Graded by every cell of the table (and the empty row below it). The oracle types the rows
(Tab between cells, Enter after each) and saves with Ctrl+S, keeping the format.

Example:
    >>> plan(2, 1)[0]
    ['Item', 'Quantity']
"""

from __future__ import annotations

from hud_gym.suites.files.script import family_random
from hud_gym.suites.office.common import FRUITS, office_task
from hud_gym.suites.office.keys import KeyScript, open_document, save_keeping_format, type_rows
from hud_gym.task import Task

__all__ = ["generate", "oracle", "plan"]

FAMILY = "calc-table"
DOCUMENT = "stock.xlsx"


def plan(seed: int, difficulty: int) -> list[list[object]]:
    """The table: the header row, then the rows to type."""
    rng = family_random(FAMILY, seed, difficulty)
    header: list[object] = ["Item", "Quantity", "Price"] if difficulty == 3 else ["Item", "Quantity"]
    rows: list[list[object]] = [header]
    for item in rng.sample(FRUITS, 2 * difficulty):
        row: list[object] = [item, rng.randrange(1, 200)]
        if difficulty == 3:
            row.append(rng.randrange(10, 999) / 10 if rng.random() < 0.5 else rng.randrange(1, 99))
        rows.append(row)
    return rows


def _letter(index: int) -> str:
    return "ABC"[index]


def generate(seed: int, difficulty: int) -> Task:
    """The task for ``seed`` and ``difficulty``."""
    table = plan(seed, difficulty)
    listed = "; ".join(", ".join(str(c) for c in row) for row in table[1:])
    cells = {f"{_letter(c)}{r + 1}": value for r, row in enumerate(table) for c, value in enumerate(row)}
    cells.update({f"{_letter(c)}{len(table) + 1}": None for c in range(len(table[0]))})
    return office_task(
        family=FAMILY,
        seed=seed,
        difficulty=difficulty,
        prompt=f"The spreadsheet {DOCUMENT} is open in LibreOffice Calc with its header row ({', '.join(map(str, table[0]))}). Enter these rows below the header, one row per line, in this order ({', '.join(map(str, table[0]))}): {listed}.",
        document=DOCUMENT,
        content=[table[0]],
        evaluate=[("xlsx_cells", f"Documents/{DOCUMENT}", cells)],
    )


def oracle(task: Task) -> KeyScript:
    """Types the rows from A2 and saves."""
    meta = task.metadata or {}
    table = plan(meta["seed"], meta["difficulty"])
    return KeyScript([*open_document(DOCUMENT), *type_rows("A2", table[1:]), *save_keeping_format(DOCUMENT)])
