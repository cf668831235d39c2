"""Parity cases of ``compare_pptx_files`` and of ``compare_table``'s openpyxl rules (``freeze``,
``zoom``, ``row_props``, ``col_props``), for ``test_parity.py``: files built here with python-pptx
and openpyxl, each case ``(metric, args, options)``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

Case = tuple[str, list[Any], dict[str, Any]]


def _deck(path: Path, **change: Any) -> str:
    """A two-slide deck (a title and a body on each); ``change`` alters one thing of it."""
    from pptx import Presentation
    from pptx.util import Emu, Pt

    deck = Presentation()
    for number in range(change.get("slides", 2)):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = change.get("title", "Quarterly report") if number == 0 else f"Part {number}"
        body = slide.placeholders[1].text_frame
        body.text = "Revenue grew"
        run = body.paragraphs[0].runs[0]
        run.font.size = Pt(change.get("size", 24))
        run.font.bold = change.get("bold", False)
        if number == 0 and "left" in change:
            slide.shapes.title.left = Emu(change["left"])
        if number == 0 and "note" in change:
            slide.notes_slide.notes_text_frame.text = change["note"]
    deck.save(path)
    return str(path)


def slides_cases(d: Path) -> list[Case]:
    gold = _deck(d / "gold.pptx")
    same = _deck(d / "same.pptx")
    retitled = _deck(d / "retitled.pptx", title="Annual report")
    moved = _deck(d / "moved.pptx", left=100000)
    bigger = _deck(d / "bigger.pptx", size=28)
    bold = _deck(d / "bold.pptx", bold=True)
    three = _deck(d / "three.pptx", slides=3)
    noted = _deck(d / "noted.pptx", note="Say hello")
    broken = d / "broken.pptx"
    broken.write_text("not a presentation")
    return [
        ("compare_pptx_files", [same, gold], {}),
        ("compare_pptx_files", [retitled, gold], {}),
        ("compare_pptx_files", [retitled, gold], {"examine_text": False}),
        ("compare_pptx_files", [moved, gold], {}),
        ("compare_pptx_files", [moved, gold], {"examine_shape": False}),
        ("compare_pptx_files", [bigger, gold], {}),
        ("compare_pptx_files", [bigger, gold], {"examine_font_size": False}),
        ("compare_pptx_files", [bold, gold], {}),
        ("compare_pptx_files", [three, gold], {}),
        ("compare_pptx_files", [three, gold], {"examine_number_of_slides": False}),  # the first two compared
        ("compare_pptx_files", [noted, gold], {}),
        ("compare_pptx_files", [noted, gold], {"examine_note": False}),
        ("compare_pptx_files", [str(broken), gold], {}),  # both raise (the grading scores it 0)
    ]


def _book(path: Path, freeze: str | None = None, zoom: int | None = None, hidden: int | None = None) -> str:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    for i in range(1, 8):
        sheet.append([f"r{i}", i, i * 2])
    sheet.freeze_panes = freeze
    if zoom is not None:
        sheet.sheet_view.zoomScale = zoom
    if hidden is not None:
        sheet.row_dimensions[hidden].hidden = True
        sheet.column_dimensions["B"].hidden = True
    book.save(path)
    return str(path)


def sheet_rule_cases(d: Path) -> list[Case]:
    frozen = _book(d / "frozen.xlsx", freeze="C2")
    frozen_gold = _book(d / "frozen_gold.xlsx", freeze="C2")
    plain = _book(d / "plain.xlsx")
    other = _book(d / "other_freeze.xlsx", freeze="B3")
    small = _book(d / "small.xlsx", zoom=80)
    big = _book(d / "big.xlsx", zoom=150)
    hidden = _book(d / "hidden.xlsx", hidden=4)
    hidden_gold = _book(d / "hidden_gold.xlsx", hidden=4)

    def rule(kind: str, **extra: Any) -> dict[str, Any]:
        return {"rules": [{"type": kind, "sheet_idx0": 0, "sheet_idx1": "EI0", **extra}]}

    def zoom(method: str, ref: Any) -> dict[str, Any]:
        return {"rules": [{"type": "zoom", "sheet_idx": 0, "method": method, "ref": ref}]}

    rows = rule("row_props", props=["hidden"])
    return [
        ("compare_table", [frozen, frozen_gold], rule("freeze")),
        ("compare_table", [plain, frozen_gold], rule("freeze")),
        ("compare_table", [other, frozen_gold], {"rules": [*rule("freeze")["rules"], *rule("sheet_data")["rules"]]}),
        (
            "compare_table",
            [frozen, frozen_gold],
            {"rules": [{"type": "freeze", "sheet_idx0": "RI5", "sheet_idx1": "EI0"}]},
        ),
        ("compare_table", [small, plain], zoom("lt", 100)),
        ("compare_table", [big, plain], zoom("lt", 100)),
        ("compare_table", [plain, plain], zoom("le", 100)),  # unset: 100
        ("compare_table", [small, plain], zoom("approx:5", 78)),
        ("compare_table", [small, plain], zoom("range.te", [50, 80])),
        ("compare_table", [hidden, hidden_gold], rows),
        ("compare_table", [plain, hidden_gold], rows),
        ("compare_table", [hidden, hidden_gold], rule("col_props", props=["hidden"])),
        ("compare_table", [plain, hidden_gold], rule("col_props", props=["hidden"])),
        (
            "compare_table",
            [hidden, hidden_gold],
            {"rules": [{"type": "row_props", "sheet_idx0": "RNNone", "sheet_idx1": "EI0", "props": ["hidden"]}]},
        ),
    ]


def _transition_deck(path: Path, transition: str | None, wrapped: bool = False) -> str:
    """A two-slide deck whose first slide has ``transition`` (``p:<name>``), as LibreOffice writes
    it when ``wrapped`` (inside ``mc:AlternateContent``)."""
    from pptx import Presentation
    from pptx.oxml import parse_xml

    deck = Presentation()
    for title in ("One", "Two"):
        deck.slides.add_slide(deck.slide_layouts[5]).shapes.title.text = title
    if transition is not None:
        p = 'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"'
        xml = f"<p:transition {p}><p:{transition}/></p:transition>"
        if wrapped:
            mc = 'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"'
            xml = f"<mc:AlternateContent {mc}><mc:Fallback>{xml}</mc:Fallback></mc:AlternateContent>"
        deck.slides[0]._element.append(parse_xml(xml))
    deck.save(path)
    return str(path)


def apps_cases(d: Path) -> list[Case]:
    """``check_transition`` on decks, ``check_config_status`` on GIMP ``gimprc`` files."""
    dissolve = _transition_deck(d / "dissolve.pptx", "dissolve")
    wrapped = _transition_deck(d / "wrapped.pptx", "dissolve", wrapped=True)
    plain = _transition_deck(d / "plain.pptx", None)
    rule = {"slide_idx": 0, "transition_type": "dissolve"}

    def gimprc(name: str, text: str) -> str:
        (d / name).write_text(text, encoding="utf-8")
        return str(d / name)

    light = gimprc("light", '# GIMP gimprc\n\n(check-updates no)\n(theme "Light")\n(module-load "jpeg" yes)\n')
    dark = gimprc("dark", '(theme "Dark")\n')
    commented = gimprc("commented", '# (theme "Light")\n(single-window-mode yes)\n')
    blank = gimprc("blank", '(check-updates no)\n   \n(theme "Light")\n')
    theme = {"key": "theme", "value": '"Light"'}
    return [
        ("check_transition", [dissolve, rule], {}),
        ("check_transition", [wrapped, rule], {}),
        ("check_transition", [dissolve, {**rule, "transition_type": "fade"}], {}),
        ("check_transition", [plain, rule], {}),
        ("check_transition", [dissolve, {**rule, "slide_idx": 1}], {}),
        ("check_transition", [dissolve, {**rule, "slide_idx": 7}], {}),  # no such slide
        ("check_transition", [None, rule], {}),  # both raise (the grading scores it 0)
        ("check_config_status", [light, theme], {}),
        ("check_config_status", [dark, theme], {}),
        ("check_config_status", [commented, theme], {}),
        ("check_config_status", [light, {"key": ["module-load", '"jpeg"'], "value": "yes"}], {}),
        ("check_config_status", [light, {"key": ["module-load", '"png"'], "value": "yes"}], {}),
        ("check_config_status", [blank, theme], {}),  # a line of spaces: both raise
        ("check_config_status", [None, theme], {}),
    ]
