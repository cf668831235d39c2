"""The office families' evaluators: the saved spreadsheet's cells, values, formulas and number
formats (``openpyxl``), the saved text document's paragraphs and styles (``python-docx``).

They read the file through :class:`~hud_gym.controllers.ubuntu.homefs.HomeFiles` (descriptor-
relative, no link out of the home), at most :data:`MAX_FILE_BYTES`, and parse it in memory only
after its zip directory says it unpacks to at most :data:`MAX_UNPACKED` bytes in at most
:data:`MAX_PARTS` parts (no zip bomb reaches the parser; XML entities are not expanded:
``openpyxl`` uses ``defusedxml`` when installed, ``python-docx`` a parser that resolves none). A
missing file, or one that is not a readable document of its kind (the agent saved another format,
or garbage), is :class:`~hud_gym.evaluation.TargetAbsent`: the task's failure, reward 0.

Example:
    >>> format_kind("0.00%"), format_kind("[$$-409]#,##0.00"), format_kind("MM/DD/YY")
    ('percent', 'currency', 'date')
"""

from __future__ import annotations

import datetime
import io
import math
import zipfile
from pathlib import Path
from typing import Any

from hud_gym.controllers.ubuntu.functions import _checked, _resolve
from hud_gym.evaluation import FunctionContext, Grade, TargetAbsent, evaluate_function

__all__ = ["MAX_FILE_BYTES", "MAX_PARTS", "MAX_UNPACKED", "format_kind"]

MAX_FILE_BYTES = 20 * 1024 * 1024
"""Largest document read."""
MAX_UNPACKED = 64 * 1024 * 1024
"""Most bytes a document's parts may unpack to."""
MAX_PARTS = 2000
"""Most parts of a document's zip."""
_SHOWN = 8


def _document(ctx: FunctionContext, path: str) -> io.BytesIO:
    """The bytes of the document ``path``, checked to be a reasonable zip."""
    resolved, home = _resolve(ctx, path, graded=True)
    with _checked(path):
        if home.kind(Path(resolved)) != "file":
            raise TargetAbsent(f"{path!r} does not exist or is not a file")
        data = home.read_bytes(Path(resolved), MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise TargetAbsent(f"{path!r} is larger than {MAX_FILE_BYTES} bytes")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            parts = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise TargetAbsent(f"{path!r} is not an office document: {str(exc)[:200]}") from exc
    if len(parts) > MAX_PARTS or sum(p.file_size for p in parts) > MAX_UNPACKED:
        raise TargetAbsent(f"{path!r} unpacks to more than {MAX_UNPACKED} bytes or {MAX_PARTS} parts")
    return io.BytesIO(data)


def format_kind(number_format: str) -> str:
    """``"percent"``, ``"currency"``, ``"date"`` or ``"general"``: what a number format shows."""
    from openpyxl.styles.numbers import is_date_format

    if "%" in number_format:
        return "percent"
    if any(symbol in number_format for symbol in "$€£¥¤"):
        return "currency"
    if is_date_format(number_format):
        return "date"
    return "general"


def _same(actual: Any, wanted: Any) -> bool:
    if isinstance(actual, (datetime.datetime, datetime.date)) and isinstance(wanted, (int, float)):
        from openpyxl.utils.datetime import to_excel

        actual = to_excel(actual)  # a day number shown as a date is still that number
    if isinstance(wanted, (int, float)) and not isinstance(wanted, bool):
        return isinstance(actual, (int, float)) and math.isclose(actual, wanted, rel_tol=1e-9, abs_tol=1e-6)
    if wanted is None or wanted == "":
        return actual is None or actual == ""
    return isinstance(actual, str) and actual.strip() == str(wanted)


def _sheets(ctx: FunctionContext, path: str, sheet: str | None) -> tuple[Any, Any]:
    """The sheet (by name, else the first) of the workbook, with its values, then with its formulas."""
    import openpyxl

    data = _document(ctx, path)
    try:
        values = openpyxl.load_workbook(data, data_only=True)
        data.seek(0)
        formulas = openpyxl.load_workbook(data)
    except Exception as exc:
        raise TargetAbsent(f"{path!r} is not a readable spreadsheet: {type(exc).__name__}: {str(exc)[:200]}") from exc
    name = sheet or values.sheetnames[0]
    if name not in values.sheetnames:
        raise TargetAbsent(f"{path!r} has no sheet {name!r}")
    return values[name], formulas[name]


@evaluate_function("ubuntu")
def xlsx_cells(
    ctx: FunctionContext,
    path: str,
    cells: dict[str, Any],
    sheet: str | None = None,
    formulas: list[str] | None = None,
    formats: dict[str, str] | None = None,
) -> Grade:
    """Reward 1 when, in the spreadsheet ``path`` (``.xlsx``; its sheet ``sheet``, else the
    first), every cell of ``cells`` (``"B3"`` -> value: a number within 1e-6, a text, or
    ``None`` for empty) shows its value, every cell of ``formulas`` holds a formula (not a typed
    number), and every cell of ``formats`` has a number format of that kind (``"percent"``,
    ``"currency"``, ``"date"``: :func:`format_kind`)."""
    values, formula_sheet = _sheets(ctx, path, sheet)
    problems = []
    for ref, wanted in cells.items():
        actual = values[ref].value
        if not _same(actual, wanted):
            problems.append(f"{ref} is {str(actual)[:40]!r}, wanted {wanted!r}")
    for ref in formulas or ():
        if not str(formula_sheet[ref].value or "").startswith("="):
            problems.append(f"{ref} holds no formula")
    for ref, kind in (formats or {}).items():
        actual_kind = format_kind(str(values[ref].number_format))
        if actual_kind != kind:
            problems.append(
                f"{ref} is formatted {actual_kind} ({str(values[ref].number_format)[:40]!r}), wanted {kind}"
            )
    summary = "as expected" if not problems else "; ".join(problems[:_SHOWN])
    return Grade(reward=float(not problems), content=f"{path!r}: {summary}", info={"problems": len(problems)})


@evaluate_function("ubuntu")
def docx_paragraphs(
    ctx: FunctionContext, path: str, paragraphs: list[str], styles: dict[str, str] | None = None
) -> Grade:
    """Reward 1 when the non-empty paragraphs of the text document ``path`` (``.docx``) are
    ``paragraphs`` (each stripped), and the paragraphs numbered in ``styles`` (``"0"`` is the first;
    value: a style name such as ``"Heading 1"``) have those styles while every other one has no
    heading style."""
    import docx

    data = _document(ctx, path)
    try:
        document = docx.Document(data)
        found = [(p.text.strip(), str(p.style.name if p.style is not None else "")) for p in document.paragraphs]
    except Exception as exc:
        raise TargetAbsent(f"{path!r} is not a readable text document: {type(exc).__name__}: {str(exc)[:200]}") from exc
    found = [(text, style) for text, style in found if text]
    problems = []
    texts = [text for text, _ in found]
    if texts != [p.strip() for p in paragraphs]:
        problems.append(f"the paragraphs are {[t[:40] for t in texts[:_SHOWN]]!r}")
    elif styles is not None:
        for index, (_, style) in enumerate(found):
            wanted = styles.get(str(index))
            if (wanted is not None and style.casefold() != wanted.casefold()) or (
                wanted is None and style.casefold().startswith(("heading", "title"))
            ):
                problems.append(f"paragraph {index} has the style {style!r}, wanted {wanted or 'no heading'!r}")
    summary = "as expected" if not problems else "; ".join(problems[:_SHOWN])
    return Grade(reward=float(not problems), content=f"{path!r}: {summary}", info={"paragraphs": len(texts)})
