"""Grading parity: OSWorld's own metric functions (``desktop-env`` 1.0.2, run in the
``.venv-osworld`` overlay venv by ``osworld_metrics_runner.py``) and hud-gym's
(:mod:`hud_gym.suites.osworld.support`'s ``METRICS``) give the same score on the same files and
values: at least a pass, a fail and an edge case per supported metric (``docs/osworld.md`` has the table).

``make install`` creates ``.venv-osworld`` (scripts/overlay-venv.sh: ``desktop-env`` without its
dependencies, plus only what the compared metric modules import; its pins never reach the main venv).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hud_gym.suites.osworld.support import METRICS
from tests.osworld.parity_cases import apps_cases, sheet_rule_cases, slides_cases

ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).with_name("osworld_metrics_runner.py")
MODULES = {
    "exact_match": "general",
    "is_in_list": "general",
    "check_include_exclude": "general",
    "literal_match": "general",
    "check_direct_json_object": "general",
    "diff_text_file": "general",
    "check_csv": "general",
    "check_list": "general",
    "check_image_size": "gimp",
    "compare_csv": "table",
    "compare_table": "table",
    "compare_docx_files": "docs",
    "compare_pptx_files": "slides",
    "check_transition": "slides",
    "check_config_status": "gimp",
}
"""Where each supported metric lives in OSWorld's ``desktop_env/evaluators/metrics``."""

openpyxl = pytest.importorskip("openpyxl")
docx = pytest.importorskip("docx")
pytest.importorskip("odf")
pytest.importorskip("pptx")


def _overlay_python() -> Path:
    venv = Path(sys.prefix)
    for candidate in (venv.parent / f"{venv.name}-osworld", ROOT / ".venv-osworld"):
        if (candidate / "bin" / "python").exists():
            return candidate / "bin" / "python"
    pytest.skip("no .venv-osworld (make install creates it)")


def _xlsx(path: Path, rows: list[list[Any]], title: str = "Sheet1", extra: str | None = None) -> str:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = title
    for row in rows:
        sheet.append(row)
    if extra:
        book.create_sheet(extra).append(["x"])
    book.save(path)
    return str(path)


def _docx(path: Path, paragraphs: list[str]) -> str:
    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    document.save(path)
    return str(path)


def _odt(path: Path, paragraphs: list[str]) -> str:
    from odf.opendocument import OpenDocumentText
    from odf.text import P

    document = OpenDocumentText()
    for text in paragraphs:
        document.text.addElement(P(text=text))
    document.save(str(path))
    return str(path)


def _text(path: Path, content: str) -> str:
    path.write_text(content, encoding="utf-8")
    return str(path)


def _table_cases(d: Path) -> list[tuple[str, list[Any], dict[str, Any]]]:
    data = [["name", "score"], ["a", 1.0], ["b", 2.5]]
    same = _xlsx(d / "same.xlsx", data)
    gold = _xlsx(d / "gold.xlsx", data)
    changed = _xlsx(d / "changed.xlsx", [["name", "score"], ["a", 1.0], ["b", 2.6]])
    close = _xlsx(d / "close.xlsx", [["name", "score"], ["a", 1.00001], ["b", 2.5]])
    renamed = _xlsx(d / "renamed.xlsx", data, title="Data")
    two = _xlsx(d / "two.xlsx", data, extra="Notes")
    broken = _text(d / "broken.xlsx", "not a workbook")
    rule = {"rules": [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]}
    return [
        ("compare_table", [same, gold], rule),
        ("compare_table", [changed, gold], rule),
        ("compare_table", [close, gold], rule),  # equal at the default precision (4 decimals)
        (
            "compare_table",
            [close, gold],
            {"rules": [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0", "precision": 6}]},
        ),
        ("compare_table", [renamed, gold], {"rules": [{"type": "sheet_name"}]}),
        ("compare_table", [two, gold], {"rules": [{"type": "sheet_name"}, *rule["rules"]]}),
        (
            "compare_table",
            [renamed, gold],
            {"rules": [{"type": "sheet_data", "sheet_idx0": "RNData", "sheet_idx1": "ENSheet1"}]},
        ),
        ("compare_table", [same, gold], {"rules": [{"type": "sheet_data", "sheet_idx0": "RI3", "sheet_idx1": "EI0"}]}),
        ("compare_table", [broken, gold], rule),
        ("compare_table", [None, gold], rule),
    ]


def _docx_cases(d: Path) -> list[tuple[str, list[Any], dict[str, Any]]]:
    gold = _docx(d / "gold.docx", ["Hello world", "Second line"])
    same = _docx(d / "same.docx", ["Hello world", "Second line"])
    spaced = _docx(d / "spaced.docx", ["Hello   world", "", "Second line"])
    other = _docx(d / "other.docx", ["Hello World", "Second line!"])
    swapped = _docx(d / "swapped.docx", ["Second line", "Hello world"])
    odt_a, odt_b = _odt(d / "a.odt", ["One", "Two"]), _odt(d / "b.odt", ["One", "Two"])
    odt_c = _odt(d / "c.odt", ["One", "Three"])
    return [
        ("compare_docx_files", [same, gold], {}),
        ("compare_docx_files", [other, gold], {}),
        ("compare_docx_files", [spaced, gold], {}),  # blanks ignored by default
        ("compare_docx_files", [spaced, gold], {"ignore_blanks": False}),
        ("compare_docx_files", [other, gold], {"ignore_case": True}),
        ("compare_docx_files", [swapped, gold], {"ignore_order": True}),
        ("compare_docx_files", [other, gold], {"content_only": True}),
        ("compare_docx_files", [odt_a, odt_b], {}),
        ("compare_docx_files", [odt_c, odt_b], {}),
        ("compare_docx_files", [odt_a, gold], {}),  # two kinds of document
        ("compare_docx_files", [None, gold], {}),
    ]


def _text_cases(d: Path) -> list[tuple[str, list[Any], dict[str, Any]]]:
    a = _text(d / "a.csv", "name,score\na,1\nb,2\n")
    b = _text(d / "b.csv", "name,score\na,1\nb,2\n")
    c = _text(d / "c.csv", "name,score\na,1\nb,3\n")
    loose = _text(d / "loose.csv", " Name,Score \na,1\nb,2\n")
    return [
        ("exact_match", ["moved\n", {"expected": "moved\n"}], {}),
        ("exact_match", ["moved", {"expected": "moved\n"}], {}),
        ("exact_match", [None, {"expected": None}], {}),
        ("is_in_list", [["a", "b"], {"expected": "a"}], {}),
        ("is_in_list", [["a", "b"], {"expected": "c"}], {}),
        ("is_in_list", ["abc", {"expected": "b"}], {}),  # a string result: a substring counts
        ("check_include_exclude", ["notes.txt\n", {"include": ["notes.txt"], "exclude": ["No such"]}], {}),
        ("check_include_exclude", ["No such file", {"include": [], "exclude": ["No such"]}], {}),
        ("check_include_exclude", [None, {"include": []}], {}),
        ("check_include_exclude", ["anything", {}], {}),
        ("literal_match", ["Abc", "Abc"], {}),
        ("literal_match", ["Abc", "abc"], {}),
        ("literal_match", ["Abc", "abc"], {"ignore_case": True}),
        ("literal_match", [["a", 1], ["a", "1"]], {"type": "list"}),
        ("literal_match", [["a"], ["a", "b"]], {"type": "list"}),
        ("literal_match", ["a", ["a"]], {"type": "list"}),
        ("check_direct_json_object", [{"a": 1, "b": 2}, {"expected": {"a": 1}}], {}),
        ("check_direct_json_object", [{"a": 2}, {"expected": {"a": 1}}], {}),
        ("check_direct_json_object", ["{'a': 'x'}", {"expected": {"a": "x"}}], {}),
        ("check_direct_json_object", [{"a": "hello"}, {"expected": {"a": "ell"}, "expect_in_result": True}], {}),
        (
            "check_direct_json_object",
            [{"a": ["x", "y"]}, {"expected": {"a": ["z", "y"]}, "expect_in_result": True}],
            {},
        ),
        ("check_direct_json_object", [{"a": 1}, {"expected": {"a": 1}, "expect_in_result": True}], {}),
        ("check_direct_json_object", [{}, {"expected": {"a": None}}], {}),
        ("diff_text_file", [a, b], {}),
        ("diff_text_file", [c, b], {}),
        ("diff_text_file", [None, b], {}),
        ("compare_csv", [a, b], {}),
        ("compare_csv", [c, b], {}),
        ("compare_csv", [loose, b], {}),
        ("compare_csv", [loose, b], {"strict": False, "ignore_case": True}),
        ("compare_csv", [None, b], {}),
        ("check_csv", [a, {"expect": [{"name": "a", "score": "1"}]}], {}),
        ("check_csv", [a, {"expect": [{"name": "a"}], "unexpect": [{"score": "2"}]}], {}),
        ("check_csv", [a, {"expect": [{"name": "z"}]}], {}),
        ("check_csv", [None, {"expect": []}], {}),
        ("check_list", [a, {"expect": [r"^a,\d", "b,2"], "unexpect": ["^z"]}], {}),
        ("check_list", [a, {"expect": ["a,1"], "unexpect": [r"b,\d"]}], {}),
        ("check_list", [a, {"expect": ["nowhere"]}], {}),
        ("check_list", [None, {"expect": []}], {}),
        ("check_list", [a, {}], {}),
    ]


def _image_cases(d: Path) -> list[tuple[str, list[Any], dict[str, Any]]]:
    from PIL import Image

    png = d / "image.png"
    Image.new("RGB", (40, 30), "red").save(png)
    return [
        ("check_image_size", [str(png), {"width": 40, "height": 30}], {}),
        ("check_image_size", [str(png), {"width": 41}], {}),
        ("check_image_size", [str(png), {"height": 30}], {}),
        ("check_image_size", [str(png), {}], {}),
        ("check_image_size", [None, {"width": 40}], {}),
    ]


def _ours(func: str, args: list[Any], kwargs: dict[str, Any]) -> float | dict[str, str]:
    try:
        return float(METRICS[func](*args, **kwargs))
    except Exception as exc:
        return {"error": type(exc).__name__}


@pytest.mark.timeout(600)
def test_our_metrics_score_as_osworlds_own(tmp_path: Path) -> None:
    python = _overlay_python()
    cases = _text_cases(tmp_path) + _table_cases(tmp_path) + _docx_cases(tmp_path) + _image_cases(tmp_path)
    for name, more in (("slides", slides_cases), ("sheets", sheet_rule_cases), ("apps", apps_cases)):
        (tmp_path / name).mkdir()
        cases += more(tmp_path / name)
    payload = [{"module": MODULES[f], "func": f, "args": a, "kwargs": k} for f, a, k in cases]
    done = subprocess.run(
        [str(python), str(RUNNER)], input=json.dumps(payload), capture_output=True, text=True, timeout=500, check=True
    )
    theirs = json.loads(done.stdout)
    rows, mismatches = [], []
    for (func, args, kwargs), their in zip(cases, theirs, strict=True):
        our = _ours(func, args, kwargs)
        if isinstance(their, dict):  # OSWorld raised: ours must raise too
            same = isinstance(our, dict)
        else:
            same = not isinstance(our, dict) and abs(our - their) < 1e-9
        rows.append((func, our, their))
        if not same:
            mismatches.append(
                f"{func}{[Path(x).name if isinstance(x, str) and '/' in x else x for x in args]} {kwargs}: ours {our}, OSWorld's {their}"
            )
    assert not mismatches, "\n".join(mismatches)
    # Every supported metric is covered by a pass, a fail and another case.
    for func in METRICS:
        scores = [our for f, our, _ in rows if f == func]
        assert len(scores) >= 3 and 1.0 in scores and 0.0 in scores, func
