"""Real OSWorld task files (``tests/data/osworld``, unchanged) on the real desktop: their input
files built here with openpyxl / python-docx and served from an offline mirror
(``HUD_GYM_OSWORLD_FILES``, ``by-url/<sha256 of the URL>``) at the tasks' own URLs; setup runs
(download, open in LibreOffice); the untouched desktop grades 0; a scripted solution made of CLA
actions only (keys and typing, as an agent would) grades 1; an infeasible task grades 1 only for
the agent's ``FAIL``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium
import pytest

from hud_gym import ClickAction, PressAction, ResponseAction, TypeAction, WaitAction
from tests.osworld.desktop_tasks import TASKS, need_desktop, run_task, serve, task_urls

openpyxl = pytest.importorskip("openpyxl")
docx = pytest.importorskip("docx")

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1500)]

SEQ = "7efeb4b1-3d19-4762-b163-63328d66303b"  # Calc: fill "Seq No." as "No. #"
LOWER = "d53ff5ee-3b1a-431e-b2be-30ed2673079b"  # Writer: upper case to lower case
SPARK = "2bd59342-0664-4ccb-ba87-79379096cc08"  # Calc, infeasible: sparkline charts
SORT = "51b11269-2ca8-4b2a-9163-f21758420e78"  # Calc: sort the records by amount, ascending
TITLE = "e528b65e-1107-4b8c-8988-490e4fece599"  # Writer: capitalize the first letter of each word
RECORDS = [("Dora", 40), ("Bob", 10), ("Eve", 30), ("Carl", 20)]


def _seq_book(path: Path, filled: bool) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Seq No.", "Order ID", "Sales"])
    for i in range(1, 5):
        sheet.append([f"No. {i}" if filled else None, f"O-{i}", 100 * i])
    book.save(path)


def _records_book(path: Path, ordered: bool) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Name", "Amount"])
    for row in sorted(RECORDS, key=lambda r: r[1]) if ordered else RECORDS:
        sheet.append(list(row))
    book.save(path)


def _title_doc(path: Path, gold: bool) -> None:
    document = docx.Document()
    for text in ("the old town", "a walk by the sea"):
        document.add_paragraph(text.title() if gold else text)
    document.save(path)


def _lower_doc(path: Path, gold: bool) -> None:
    document = docx.Document()
    for text in ("The MEETING is at NOON.", "Bring the NOTES."):
        document.add_paragraph(text.lower().capitalize() if gold else text)
    document.save(path)


def test_calc_fill_sequence_numbers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    need_desktop()
    source, gold = task_urls(TASKS[SEQ])
    serve(tmp_path, monkeypatch, {source: lambda p: _seq_book(p, False), gold: lambda p: _seq_book(p, True)})
    # Click A2 (Calc's layout at 1280x720, once its menu bar is up), type down the column.
    typing: list[Any] = [ClickAction(point=(70, 208)), WaitAction(time=1000)]
    for i in range(1, 5):
        typing += [TypeAction(text=f"No. {i}"), PressAction(keys=["Return"])]
    assert run_task(TASKS[SEQ], "Order_Sales_Serial#.xlsx", typing) == (0.0, 1.0)


def test_writer_upper_case_to_lower_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    need_desktop()
    source, gold = task_urls(TASKS[LOWER])
    serve(tmp_path, monkeypatch, {source: lambda p: _lower_doc(p, False), gold: lambda p: _lower_doc(p, True)})
    typing = [
        ClickAction(point=(640, 400)),  # into the page
        WaitAction(time=1000),
        PressAction(keys=["ctrl", "a"]),
        TypeAction(text="The meeting is at noon."),
        PressAction(keys=["Return"]),
        TypeAction(text="Bring the notes."),
    ]
    assert run_task(TASKS[LOWER], "presentation_instruction_2023_Feb.docx", typing) == (0.0, 1.0)


def test_calc_sort_records_by_amount(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    need_desktop()
    source, gold = task_urls(TASKS[SORT])
    serve(tmp_path, monkeypatch, {source: lambda p: _records_book(p, False), gold: lambda p: _records_book(p, True)})
    # Retype the records in order from A2: Tab to the next column, Enter back to column A.
    typing: list[Any] = [ClickAction(point=(70, 208)), WaitAction(time=1000)]
    for name, amount in sorted(RECORDS, key=lambda r: r[1]):
        typing += [TypeAction(text=name), PressAction(keys=["tab"]), TypeAction(text=str(amount))]
        typing.append(PressAction(keys=["Return"]))
    assert run_task(TASKS[SORT], "Arrang_Value_min_to_max.xlsx", typing) == (0.0, 1.0)


def test_writer_capitalize_each_word(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    need_desktop()
    source, gold = task_urls(TASKS[TITLE])
    serve(tmp_path, monkeypatch, {source: lambda p: _title_doc(p, False), gold: lambda p: _title_doc(p, True)})
    typing = [
        ClickAction(point=(640, 400)),
        WaitAction(time=1000),
        PressAction(keys=["ctrl", "a"]),
        TypeAction(text="The Old Town"),
        PressAction(keys=["Return"]),
        TypeAction(text="A Walk By The Sea"),
    ]
    assert run_task(TASKS[TITLE], "Geography_And_Magical_Realism.docx", typing) == (0.0, 1.0)


def test_an_infeasible_task_grades_the_agents_fail() -> None:
    need_desktop()
    env = gymnasium.make("hud/Ubuntu-v0", task=TASKS[SPARK], in_container=False)
    try:
        env.reset(seed=0)
        assert env.unwrapped.evaluate().reward == 0.0  # no answer yet
        _, reward, terminated, _, _ = env.step(ResponseAction(text="FAIL"))
        assert terminated and reward == 1.0
        env.reset(seed=1)
        _, reward, _, _, _ = env.step(ResponseAction(text="Done: I made the sparklines."))
        assert reward == 0.0
    finally:
        env.close()
