"""``compare_table``'s rules over a sheet's openpyxl properties (OSWorld's ``metrics/table.py`` and
``metrics/utils.py``), with OSWorld's semantics:

- ``freeze`` ``{sheet_idx0, sheet_idx1}``: the two sheets' frozen panes (``freeze_panes``) are equal;
- ``zoom`` ``{sheet_idx, method, ref}``: the sheet's zoom (``zoomScale``, 100 when unset) matches
  the rule (:func:`match_value_to_rule`);
- ``row_props`` / ``col_props`` ``{sheet_idx0, sheet_idx1, props}``: the two sheets' row (column)
  dimensions, each ``props`` attribute of each row (column) that has one (``hidden``,
  ``height``, ...), are equal.

Each rule gets the two openpyxl books and a sheet namer (``compare_table``'s ``_sheet_name``); a
sheet that is not there is OSWorld's ``None``: 0 when it is the first (``freeze``, ``zoom``), else an
error (OSWorld's ``AttributeError``: the grading scores it 0).
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable
from typing import Any

__all__ = ["SHEET_RULES", "match_value_to_rule"]

Namer = Callable[[Any], tuple[str, str]]
"""A rule's sheet index (``0``, ``"RI0"``, ``"ENSheet1"``, ...) as ``(book, sheet name)``."""


def match_value_to_rule(value: Any, rule: dict[str, Any]) -> bool:
    """OSWorld's ``_match_value_to_rule``: ``method`` ``re[.FLAG...]`` (a regex search), ``eq`` /
    ``ne`` / ``lt`` / ``le`` / ``gt`` / ``ge`` (against ``ref``), ``approx:T`` (within ``T`` of
    ``ref``), ``range.XY`` (``ref[0] <X value <Y ref[1]``, ``t`` for ``<``, ``e`` for ``<=``).

    Raises:
        ValueError: a method OSWorld does not have (or ``spreadsheet_range``: not here).
    """
    method = str(rule["method"])
    if method.startswith("re"):
        flags = (getattr(re, name) for name in method.split(".")[1:])
        flag = functools.reduce(operator.or_, flags, re.RegexFlag(0))
        return re.search(rule["ref"], value, flag) is not None
    if method in {"eq", "ne", "le", "lt", "ge", "gt"}:
        return bool(getattr(operator, method)(value, rule["ref"]))
    if method.startswith("approx"):
        threshold = float(method.split(":")[1])
        try:
            number = float(value)
        except (ValueError, TypeError):
            return False
        return abs(number - rule["ref"]) <= threshold
    if method.startswith("range."):
        left, right = method[6], method[7]
        return bool(
            getattr(operator, "l" + left)(rule["ref"][0], value)
            and getattr(operator, "l" + right)(value, rule["ref"][1])
        )
    raise ValueError(f"compare_table: match method {method[:50]!r} is not supported here")


def _sheet(books: dict[str, Any], place: tuple[str, str]) -> Any:
    """OSWorld's ``_load_sheet`` of an openpyxl book: the sheet, or ``None``."""
    book = books.get(place[0])
    try:
        return book[place[1]] if book is not None else None
    except KeyError:
        return None


def _freeze(books: dict[str, Any], name: Namer, rule: dict[str, Any]) -> bool:
    first = _sheet(books, name(rule["sheet_idx0"]))
    if first is None:
        return False
    second = _sheet(books, name(rule["sheet_idx1"]))
    return bool(first.freeze_panes == second.freeze_panes)  # a missing second sheet raises, as OSWorld's


def _zoom(books: dict[str, Any], name: Namer, rule: dict[str, Any]) -> bool:
    sheet = _sheet(books, name(rule["sheet_idx"]))
    if sheet is None:
        return False
    return match_value_to_rule(sheet.sheet_view.zoomScale or 100.0, rule)


def _dimensions(books: dict[str, Any], place: tuple[str, str], obj: str, props: list[str]) -> dict[Any, Any]:
    """OSWorld's ``load_rows_or_cols``: ``{row or column: {prop: value}}``."""
    sheet = _sheet(books, place)
    if sheet is None:
        return {}
    dimensions = getattr(sheet, f"{obj}_dimensions")
    return {key: {prop: getattr(value, prop) for prop in set(props)} for key, value in dimensions.items()}


def _props(obj: str) -> Callable[[dict[str, Any], Namer, dict[str, Any]], bool]:
    def check(books: dict[str, Any], name: Namer, rule: dict[str, Any]) -> bool:
        props = list(rule.get("props", []))
        first = _dimensions(books, name(rule["sheet_idx0"]), obj, props)
        return first == _dimensions(books, name(rule["sheet_idx1"]), obj, props)

    return check


SHEET_RULES: dict[str, Callable[[dict[str, Any], Namer, dict[str, Any]], bool]] = {
    "freeze": _freeze,
    "zoom": _zoom,
    "row_props": _props("row"),
    "col_props": _props("column"),
}
"""The openpyxl rules of ``compare_table``, by type: ``(books, namer, rule) -> holds``."""
