"""The office families' input files: a spreadsheet or a text document made from the task's
content (``openpyxl``, ``python-docx``), written into the episode's home.

The setup function :func:`office_document` builds the file on the host from plain data (rows of
cells, paragraphs), bounded in size, and writes it through
:class:`~hud_gym.controllers.ubuntu.homefs.HomeFiles` (a fresh file given to the sandbox's uid;
a link planted at the path is replaced, never followed).

Example:
    >>> document_bytes("xlsx", [["Item", "Qty"], ["Pear", 3]])[:2]
    b'PK'
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from hud_gym.controllers.ubuntu.homefs import HomeFiles
from hud_gym.evaluation import FunctionContext, setup_function

__all__ = ["MAX_CELLS", "MAX_TEXT", "document_bytes", "office_document"]

MAX_CELLS = 10_000
"""Most cells (or paragraphs) of a document made for a task."""
MAX_TEXT = 100_000
"""Most characters of its text."""


def _check_size(content: list[Any]) -> None:
    cells = [cell for row in content for cell in (row if isinstance(row, list) else [row])]
    if len(cells) > MAX_CELLS or sum(len(str(cell)) for cell in cells) > MAX_TEXT:
        raise ValueError(f"an office document of a task has at most {MAX_CELLS} cells and {MAX_TEXT} characters")


def document_bytes(kind: str, content: list[Any]) -> bytes:
    """The bytes of an ``"xlsx"`` workbook whose first sheet holds the rows ``content`` (lists of
    cells), or of a ``"docx"`` document whose paragraphs are ``content`` (strings).

    Raises:
        ValueError: another kind, or content over :data:`MAX_CELLS` / :data:`MAX_TEXT`.
    """
    _check_size(content)
    data = io.BytesIO()
    if kind == "xlsx":
        import openpyxl

        book = openpyxl.Workbook()
        sheet = book.active
        sheet.title = "Sheet1"
        for row in content:
            sheet.append(list(row))
        book.save(data)
    elif kind == "docx":
        import docx

        document = docx.Document()
        for paragraph in content:
            document.add_paragraph(str(paragraph))
        document.save(data)
    else:
        raise ValueError(f"an office document is 'xlsx' or 'docx', got {kind!r}")
    return data.getvalue()


@setup_function("ubuntu")
def office_document(ctx: FunctionContext, path: str, kind: str, content: list[Any]) -> str:
    """Write an office document ``path`` (see :func:`document_bytes`) in the env's home,
    creating its folders; returns its path."""
    desktop = ctx.controller.desktop
    target = desktop.resolve_path(path)
    HomeFiles(Path(desktop.state.home), desktop.state.file_owner).write_bytes(target, document_bytes(kind, content))
    return str(target)
