"""Real OSWorld Calc tasks about the sheet's view and names (``tests/data/osworld``, unchanged), on
the real desktop (see ``desktop_tasks.py``): freeze the header cells (``compare_table``'s
``freeze`` rule), zoom out of oversized cells (its ``zoom`` rule: the zoom slider's button), rename the sheet
(``sheet_name``). Each is solved with CLA actions only: keys, typing, and LibreOffice's own
command search (Shift+Esc, Help > Search Commands), as an agent would use it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hud_gym import ClickAction, PressAction, TypeAction, WaitAction
from tests.osworld.desktop_tasks import TASKS, need_desktop, run_task, saved, serve, task_urls, until_still

openpyxl = pytest.importorskip("openpyxl")

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1500)]

FREEZE = "4188d3a4-077d-46b7-9c86-23e1a036f6c1"  # Calc: freeze A1:B1 to keep the headers visible
ZOOM = "1334ca3e-f9e3-4db8-9ca7-b4c653be7d17"  # Calc: the cells are too big: zoom out
RENAME = "39aa4e37-dc91-482e-99af-132a612d40f3"  # Calc: rename Sheet1 "LARS_Science_Assessment"
ROWS = [["Name", "Grade", "Score"], ["Ann", "A", 91], ["Ben", "B", 84], ["Cid", "A", 95], ["Dee", "C", 72]]


def _book(path: Path, *, title: str = "Sheet1", freeze: str | None = None, zoom: int | None = None) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = title
    for row in ROWS:
        sheet.append(row)
    sheet.freeze_panes = freeze
    if zoom is not None:
        sheet.sheet_view.zoomScale = zoom
    book.save(path)


def command(name: str) -> list[Any]:
    """Run LibreOffice's menu command ``name`` through its command search (Shift+Esc)."""
    return [
        PressAction(keys=["shift", "Escape"]),
        WaitAction(time=1500),
        TypeAction(text=name),
        WaitAction(time=1500),
        PressAction(keys=["Return"]),
        WaitAction(time=1500),
    ]


def test_calc_freeze_the_header_cells(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    need_desktop()
    source, gold = task_urls(TASKS[FREEZE])
    serve(tmp_path, monkeypatch, {source: _book, gold: lambda p: _book(p, freeze="C2")})
    # From A1 to C2 (rows above, columns left of the cursor freeze), then the menu's command.
    solution: list[Any] = [
        PressAction(keys=["ctrl", "Home"]),
        PressAction(keys=["Right"]),
        PressAction(keys=["Right"]),
        PressAction(keys=["Down"]),
        *command("Freeze Rows and Columns"),
        until_still(),
        *saved("~/Freeze_row_column.xlsx"),
    ]
    assert run_task(TASKS[FREEZE], "Freeze_row_column.xlsx", solution) == (0.0, 1.0)


def test_calc_zoom_out_of_oversized_cells(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    need_desktop()
    source, gold = task_urls(TASKS[ZOOM])
    serve(tmp_path, monkeypatch, {source: lambda p: _book(p, zoom=300), gold: _book})
    # The "-" of the zoom slider at the status bar's right end (1280x720), a few steps down.
    solution: list[Any] = [a for _ in range(4) for a in (ClickAction(point=(1098, 709)), WaitAction(time=1000))]
    solution += [until_still(), *saved("~/Zoom_Out_Oversized_Cells.xlsx")]
    assert run_task(TASKS[ZOOM], "Zoom_Out_Oversized_Cells.xlsx", solution) == (0.0, 1.0)


def test_calc_rename_the_sheet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    need_desktop()
    source, gold = task_urls(TASKS[RENAME])
    serve(tmp_path, monkeypatch, {source: _book, gold: lambda p: _book(p, title="LARS_Science_Assessment")})
    solution = [
        *command("Rename Sheet"),
        PressAction(keys=["ctrl", "a"]),
        TypeAction(text="LARS_Science_Assessment"),
        PressAction(keys=["Return"]),
        until_still(),
        *saved("~/LARS_Science_Assessment_Resource_List_7-30-21.xlsx"),
    ]
    assert run_task(TASKS[RENAME], "LARS_Science_Assessment_Resource_List_7-30-21.xlsx", solution) == (0.0, 1.0)
