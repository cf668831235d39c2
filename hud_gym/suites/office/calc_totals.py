"""``calc-totals``: add formulas to an order sheet (Item, Quantity, Price).

- difficulty 1: under the last row, ``Total`` in column A and the total quantity (a formula) in B;
- difficulty 2: a column D headed ``Amount`` with each row's quantity times price (formulas);
- difficulty 3: both: the amounts, and under them ``Total`` in A and the total amount in D.

Graded by the values the saved sheet shows and by those cells holding formulas (a typed number
does not pass). The oracle types ``=SUM(...)`` and ``=B2*C2`` formulas.

Example:
    >>> plan(1, 2)[0]
    ['Item', 'Quantity', 'Price']
"""

from __future__ import annotations

from typing import Any

from hud_gym.actions import TypeAction
from hud_gym.suites.files.script import family_random
from hud_gym.suites.office.common import FRUITS, office_task
from hud_gym.suites.office.keys import KeyScript, Step, goto_cell, open_document, save_keeping_format
from hud_gym.task import Task

__all__ = ["generate", "oracle", "plan"]

FAMILY = "calc-totals"
DOCUMENT = "order.xlsx"


def plan(seed: int, difficulty: int) -> list[list[Any]]:
    """The sheet: the header row and the order's rows."""
    rng = family_random(FAMILY, seed, difficulty)
    rows: list[list[Any]] = [["Item", "Quantity", "Price"]]
    for item in rng.sample(FRUITS, 2 + difficulty):
        rows.append([item, rng.randrange(1, 50), rng.randrange(5, 500) / 10])
    return rows


def _expected(rows: list[list[Any]], difficulty: int) -> tuple[dict[str, Any], list[str]]:
    """The cells to check and those that must hold formulas."""
    total = len(rows) + 1
    cells: dict[str, Any] = {}
    formulas: list[str] = []
    if difficulty != 2:
        cells[f"A{total}"] = "Total"
    if difficulty == 1:
        cells[f"B{total}"] = sum(row[1] for row in rows[1:])
        formulas.append(f"B{total}")
    if difficulty >= 2:
        cells["D1"] = "Amount"
        for index, row in enumerate(rows[1:], start=2):
            cells[f"D{index}"] = row[1] * row[2]
            formulas.append(f"D{index}")
    if difficulty == 3:
        cells[f"D{total}"] = sum(row[1] * row[2] for row in rows[1:])
        formulas.append(f"D{total}")
    return cells, formulas


_GOALS = {
    1: "In the row under the last item, type Total in column A and, in column B, a formula giving the total quantity.",
    2: "Add a column D headed Amount (in D1) where each item's row has a formula giving its quantity times its price.",
    3: "Add a column D headed Amount (in D1) where each item's row has a formula giving its quantity times its price; in the row under the last item, type Total in column A and, in column D, a formula giving the total amount.",
}


def generate(seed: int, difficulty: int) -> Task:
    """The task for ``seed`` and ``difficulty``."""
    rows = plan(seed, difficulty)
    cells, formulas = _expected(rows, difficulty)
    return office_task(
        family=FAMILY,
        seed=seed,
        difficulty=difficulty,
        prompt=f"The spreadsheet {DOCUMENT} is open in LibreOffice Calc: an order with the columns Item, Quantity and Price. {_GOALS[difficulty]} Use formulas, not typed numbers.",
        document=DOCUMENT,
        content=rows,
        evaluate=[("xlsx_cells", f"Documents/{DOCUMENT}", cells, None, formulas)],
    )


def oracle(task: Task) -> KeyScript:
    """Types the formulas and saves."""
    meta = task.metadata or {}
    difficulty = meta["difficulty"]
    rows = plan(meta["seed"], difficulty)
    last, total = len(rows), len(rows) + 1
    actions: list[Step] = []
    if difficulty >= 2:
        amounts = "".join(f"=B{i}*C{i}\n" for i in range(2, last + 1))
        actions += [*goto_cell("D1"), TypeAction(text=f"Amount\n{amounts}")]
    if difficulty == 1:
        actions += [*goto_cell(f"A{total}"), TypeAction(text=f"Total\t=SUM(B2:B{last})\n")]
    if difficulty == 3:
        actions += [*goto_cell(f"A{total}"), TypeAction(text="Total\n")]
        actions += [*goto_cell(f"D{total}"), TypeAction(text=f"=SUM(D2:D{last})\n")]
    return KeyScript([*open_document(DOCUMENT), *actions, *save_keeping_format(DOCUMENT)])
