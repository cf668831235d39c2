"""OSWorld's metric functions over office files, with OSWorld's semantics: ``compare_table``
(``metrics/table.py``: the rule types in :data:`TABLE_RULES`), ``compare_docx_files``
(``metrics/docs.py``) (``compare_pptx_files``: :mod:`.metrics_slides`; the rest are not yet:
see ``docs/osworld.md``). OSWorld is Apache-2.0; the parity is measured
by ``tests/osworld/test_parity.py``.

The libraries are OSWorld's own (openpyxl, pandas, python-docx, odfpy, RapidFuzz: the
``osworld`` extra), imported when a metric first runs. The files are copies the getters made
of the desktop's files (size-bounded); a file that does not parse scores 0, as in OSWorld.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from hud_gym.suites.osworld.metrics_sheets import SHEET_RULES

__all__ = ["TABLE_RULES", "compare_docx_files", "compare_table"]

TABLE_RULES = frozenset({"sheet_name", "sheet_data", *SHEET_RULES})
"""The ``compare_table`` rule types supported (``freeze``, ``zoom``, ``row_props``, ``col_props``:
:mod:`.metrics_sheets`; OSWorld's others: ``chart``, ``pivot_table``, ``check_cell``,
``sheet_print``, ``sheet_fuzzy``, ``style``, ``data_validation``, ``filter``, are not yet: a task
using one does not run here)."""


def _sheet_name(index: int | str, result_names: list[str], expected_names: list[str] | None) -> tuple[str, str]:
    """``(book, name)`` of a sheet index: ``0`` / ``"RI0"`` / ``"RNSheet1"`` of the result,
    ``"EI0"`` / ``"ENSheet1"`` of the expected book (OSWorld's ``_parse_sheet_idx``)."""

    def pick(names: list[str] | None, i: str) -> str:
        try:
            return (names or [])[int(i)]
        except (IndexError, ValueError):
            return ""

    if isinstance(index, int):
        return "result", pick(result_names, str(index))
    for prefix, book in (("RI", "result"), ("EI", "expected")):
        if index.startswith(prefix):
            return book, pick(result_names if book == "result" else expected_names, index[2:])
    for prefix, book in (("RN", "result"), ("EN", "expected")):
        if index.startswith(prefix):
            return book, index[2:]
    raise ValueError(f"compare_table: unrecognized sheet index {index!r}")


def _sheet_data(books: dict[str, Any], name: Callable[[Any], tuple[str, str]], rule: dict[str, Any]) -> bool:
    """``sheet_data``: the two sheets read by pandas, rounded to ``precision`` (4) decimals, are equal
    (a missing sheet is OSWorld's ``None``: never equal)."""
    import pandas as pd

    sheets = []
    for key in ("sheet_idx0", "sheet_idx1"):
        book, sheet = name(rule[key])
        try:
            sheets.append(pd.read_excel(books[book], sheet))
        except Exception:  # noqa: BLE001  (OSWorld's _load_sheet: a missing sheet is None)
            sheets.append(None)
    if sheets[0] is None or sheets[1] is None:
        return False
    precision = rule.get("precision", 4)
    return bool(sheets[0].round(precision).equals(sheets[1].round(precision)))


def compare_table(result: str | None, expected: str | None = None, **options: Any) -> float:
    """1 when every rule holds (0 at the first that fails), as OSWorld's ``compare_table``:
    ``sheet_name``: the two books' sheet names are equal; ``sheet_data``: the two sheets read by
    pandas, rounded to ``precision`` (4) decimals, are equal."""
    import openpyxl
    import pandas as pd

    if result is None:
        return 0.0
    try:
        sheets_of: dict[str, Any] = {"result": openpyxl.load_workbook(filename=result)}
        books: dict[str, Any] = {"result": pd.ExcelFile(result)}
    except Exception:  # noqa: BLE001  (a result that is not a workbook scores 0)
        return 0.0
    result_names = list(books["result"].sheet_names)
    expected_names = None
    if expected is not None:
        sheets_of["expected"] = openpyxl.load_workbook(filename=expected)
        books["expected"] = pd.ExcelFile(expected)
        expected_names = list(books["expected"].sheet_names)

    def name(index: int | str) -> tuple[str, str]:
        return _sheet_name(index, result_names, expected_names)

    for rule in options["rules"]:
        kind = rule["type"]
        if kind in SHEET_RULES:
            ok = SHEET_RULES[kind](sheets_of, name, rule)
        elif kind == "sheet_name":
            ok = result_names == expected_names
        elif kind == "sheet_data":
            ok = _sheet_data(books, name, rule)
        else:
            raise NotImplementedError(f"compare_table: rule type {kind!r} is not supported here")
        if not ok:
            return 0.0
    return 1.0


def _odt_paragraphs(path: str) -> list[str]:
    from odf.opendocument import load
    from odf.text import P

    texts = []
    for paragraph in load(path).getElementsByType(P):
        parts = []
        for node in paragraph.childNodes:
            if node.nodeType == node.TEXT_NODE:
                parts.append(node.data)
            elif node.nodeType == node.ELEMENT_NODE and node.tagName == "text:span":
                parts.extend(c.data for c in node.childNodes if c.nodeType == c.TEXT_NODE)
        texts.append("".join(parts))
    return texts


def _paragraphs(file1: str, file2: str) -> tuple[list[str], list[str]] | None:
    if file1.endswith(".docx") and file2.endswith(".docx"):
        from docx import Document

        try:
            return [p.text for p in Document(file1).paragraphs], [p.text for p in Document(file2).paragraphs]
        except Exception:  # noqa: BLE001  (OSWorld: a document that does not open scores 0)
            return None
    if file1.endswith(".odt") and file2.endswith(".odt"):
        try:
            return _odt_paragraphs(file1), _odt_paragraphs(file2)
        except Exception:  # noqa: BLE001
            return None
    return None


def _joined(paragraphs: list[str], fold: bool) -> str:
    text = re.sub(r"\s+", " ", "\n".join(paragraphs)).strip()
    return text.lower() if fold else text


def compare_docx_files(file1: str | None, file2: str | None, **options: Any) -> float:
    """OSWorld's ``compare_docx_files``: the paragraphs' text of two ``.docx`` (or two ``.odt``)
    files; ``ignore_blanks`` (default) compares the whitespace-collapsed text, else paragraph by
    paragraph; ``ignore_case``; ``ignore_order`` sorts the paragraphs; ``content_only`` scores the
    RapidFuzz ratio of the texts."""
    if not file1 or not file2:
        return 0.0
    found = _paragraphs(file1, file2)
    if found is None:
        return 0.0
    first, second = found
    fold = options.get("ignore_case", False)
    if options.get("ignore_order", False):
        first, second = sorted(first), sorted(second)
    if options.get("content_only", False):
        from rapidfuzz import fuzz

        return float(fuzz.ratio(_joined(first, fold), _joined(second, fold)) / 100.0)
    if options.get("ignore_blanks", True):
        return float(_joined(first, fold) == _joined(second, fold))
    if len(first) != len(second):
        return 0.0
    return float(all((a.lower() == b.lower()) if fold else a == b for a, b in zip(first, second, strict=True)))
