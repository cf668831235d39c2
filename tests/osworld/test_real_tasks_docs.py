"""Real OSWorld Writer and Impress tasks (``tests/data/osworld``, unchanged) on the real desktop
(see ``desktop_tasks.py``), graded by ``compare_docx_files`` and ``compare_pptx_files``: separate
the sentences of a paragraph by empty lines, add a reference and its citation (Writer), save the
slides as ``pre.pptx`` on the Desktop (Impress). Each is solved with CLA actions only.

The Impress task's input is also its expected file (the same URL): a deck made with python-pptx,
then saved once by LibreOffice (headless, a profile of its own), as OSWorld's decks were: what
LibreOffice writes again on a save is then what it read.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hud_gym import ClickAction, PressAction, TypeAction, WaitAction
from tests.osworld.desktop_tasks import (
    TASKS,
    need_desktop,
    run_task,
    saved,
    serve,
    task_urls,
    until_still,
    until_window,
)

docx = pytest.importorskip("docx")
pptx = pytest.importorskip("pptx")

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1500)]

SPLIT = "88fe4b2d-3040-4c70-9a70-546a47764b48"  # Writer: an empty line after each sentence of paragraph 1
CITE = "adf5e2c3-64c7-4644-b7b6-d2f0167927e7"  # Writer: add a reference and cite it at "<add here>"
SAVE_AS = "a097acff-6266-4291-9fbd-137af7ecd439"  # Impress: save the slides as pre.pptx on the Desktop
SENTENCES = ["Read the text before class.", "Bring two questions.", "Speak for five minutes."]
REFERENCE = (
    "Steinberg, F. M., Bearden, M. M., & Keen, C. L. (2003). Cocoa and chocolate flavonoids: Implications for "
    "cardiovascular health. Journal of the American Dietetic Association, 103(2), 215-223. doi: 10.1053/jada.2003.50028"
)


def _document(path: Path, paragraphs: list[str]) -> None:
    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    document.save(path)


def _essay(done: bool) -> list[str]:
    cited = "[2]" if done else "<add here>"
    references = ["References", "[1] Lee, A. (2010). Sweet things. Food Press."]
    return [
        "Chocolate is made from cocoa beans.",
        "It is eaten all over the world.",
        "Some say it is good for the heart.",
        f"Flavonoids in cocoa may help the heart {cited}.",
        *references,
        *([f"[2] {REFERENCE}"] if done else []),
    ]


def _typing(paragraphs: list[str], path: str) -> list[Any]:
    """Select the whole document, type ``paragraphs`` over it, save it (``path``)."""
    actions: list[Any] = [ClickAction(point=(640, 400)), WaitAction(time=1000), PressAction(keys=["ctrl", "a"])]
    for i, text in enumerate(paragraphs):
        if i:
            actions.append(PressAction(keys=["Return"]))
        if text:
            actions.append(TypeAction(text=text))
    return [*actions, until_still(), *saved(path)]


def test_writer_an_empty_line_after_each_sentence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    need_desktop()
    source, gold = task_urls(TASKS[SPLIT])
    rest = "Hand in the notes on Friday."
    spaced = [s for sentence in SENTENCES for s in (sentence, "")]
    serve(
        tmp_path,
        monkeypatch,
        {source: lambda p: _document(p, [" ".join(SENTENCES), rest]), gold: lambda p: _document(p, [*spaced, rest])},
    )
    solution = _typing([*spaced, rest], "~/Desktop/CCCH9003_Tutorial_guidelines.docx")
    assert run_task(TASKS[SPLIT], "CCCH9003_Tutorial_guidelines.docx", solution) == (0.0, 1.0)


def test_writer_add_a_reference_and_cite_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    need_desktop()
    source, gold = task_urls(TASKS[CITE])
    serve(
        tmp_path,
        monkeypatch,
        {source: lambda p: _document(p, _essay(False)), gold: lambda p: _document(p, _essay(True))},
    )
    assert run_task(
        TASKS[CITE],
        "Essay_Writing_English_for_uni.docx",
        _typing(_essay(True), "~/Desktop/Essay_Writing_English_for_uni.docx"),
    ) == (0.0, 1.0)


def _saved_by_libreoffice(path: Path) -> None:
    """A two-slide deck (python-pptx), saved once by a headless LibreOffice into ``path``."""
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[0])
    slide.shapes.title.text = "Secrets of Monetizing Video"
    slide.placeholders[1].text = "A short guide"
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Three ways"
    slide.placeholders[1].text_frame.text = "Ads"
    work = path.parent / "soffice"
    work.mkdir(exist_ok=True)
    deck.save(work / "deck.pptx")
    subprocess.run(
        ["soffice", f"-env:UserInstallation={(work / 'profile').as_uri()}", "--headless", "--convert-to", "pptx"]
        + ["--outdir", str(work / "out"), str(work / "deck.pptx")],
        check=True,
        capture_output=True,
        timeout=300,
    )
    shutil.copyfile(work / "out" / "deck.pptx", path)


def test_impress_save_the_slides_as_pre_pptx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    need_desktop()
    source, gold = task_urls(TASKS[SAVE_AS])
    assert source == gold  # the input is the expected file
    serve(tmp_path, monkeypatch, {source: _saved_by_libreoffice})
    solution: list[Any] = [
        PressAction(keys=["ctrl", "shift", "s"]),
        until_window("Save"),  # the Save As dialog (GTK's)
        PressAction(keys=["ctrl", "a"]),
        TypeAction(text="~/Desktop/pre.pptx"),
        PressAction(keys=["Return"]),
        until_window("pre.pptx - LibreOffice Impress"),  # saved: the document is pre.pptx now
    ]
    assert run_task(TASKS[SAVE_AS], "Secrets-of-Monetizing-Video.pptx", solution) == (0.0, 1.0)
