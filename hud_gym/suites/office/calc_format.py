"""``calc-format``: give a table's number columns their formats (Rate, Price, Due).

- difficulty 1: the rates as percentages;
- difficulty 2: the rates as percentages and the prices as currency;
- difficulty 3: as 2, and the due dates (day numbers) as dates.

Graded by the number format of every data cell of those columns (its kind: percent, currency,
date), and by the values left unchanged. The oracle selects each column's cells with
Shift+Down and presses Calc's format shortcuts (Ctrl+Shift+5, 4, 3).

Example:
    >>> plan(2, 3)[0]
    ['Rate', 'Price', 'Due']
"""

from __future__ import annotations

from typing import Any

from hud_gym.actions import PressAction
from hud_gym.suites.files.script import family_random
from hud_gym.suites.office.common import office_task
from hud_gym.suites.office.keys import KeyScript, Step, goto_cell, open_document, save_keeping_format
from hud_gym.task import Task

__all__ = ["generate", "oracle", "plan"]

FAMILY = "calc-format"
DOCUMENT = "prices.xlsx"
_KINDS = ("percent", "currency", "date")
_SHORTCUT = {"percent": "5", "currency": "4", "date": "3"}
_WHAT = {
    "percent": "the rates (column A) as percentages",
    "currency": "the prices (column B) as currency",
    "date": "the due days (column C, day numbers) as dates",
}


def plan(seed: int, difficulty: int) -> list[list[Any]]:
    """The sheet: the header and the rows (rate, price, due day number)."""
    rng = family_random(FAMILY, seed, difficulty)
    rows: list[list[Any]] = [["Rate", "Price", "Due"]]
    for _ in range(2 + difficulty):
        rows.append([rng.randrange(1, 100) / 100, rng.randrange(100, 99999) / 100, 45000 + rng.randrange(900)])
    return rows


def generate(seed: int, difficulty: int) -> Task:
    """The task for ``seed`` and ``difficulty``."""
    rows = plan(seed, difficulty)
    kinds = _KINDS[:difficulty]
    cells = {f"{'ABC'[c]}{r + 1}": value for r, row in enumerate(rows) for c, value in enumerate(row)}
    formats = {f"{'ABC'[c]}{r}": kind for c, kind in enumerate(kinds) for r in range(2, len(rows) + 1)}
    return office_task(
        family=FAMILY,
        seed=seed,
        difficulty=difficulty,
        prompt=f"The spreadsheet {DOCUMENT} is open in LibreOffice Calc. Format {', and '.join(_WHAT[k] for k in kinds)}, without changing the values.",
        document=DOCUMENT,
        content=rows,
        evaluate=[("xlsx_cells", f"Documents/{DOCUMENT}", cells, None, None, formats)],
    )


def oracle(task: Task) -> KeyScript:
    """Selects each column's data cells and presses its format shortcut, then saves."""
    meta = task.metadata or {}
    rows = plan(meta["seed"], meta["difficulty"])
    actions: list[Step] = []
    for column, kind in enumerate(_KINDS[: meta["difficulty"]]):
        actions += goto_cell(f"{'ABC'[column]}2")
        actions += [PressAction(keys=["shift", "down"])] * (len(rows) - 2)
        actions.append(PressAction(keys=["ctrl", "shift", _SHORTCUT[kind]]))
    return KeyScript([*open_document(DOCUMENT), *actions, *save_keeping_format(DOCUMENT)])
