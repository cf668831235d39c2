"""OSWorld's ``compare_pptx_files`` (``metrics/slides.py``), with OSWorld's semantics: two
presentations read by python-pptx, slide by slide, shape by shape (zipped: extra shapes, slides of
one deck past the other's end, are not compared unless ``examine_number_of_slides``), 1 when
nothing examined differs, else 0.

The options (``examine_*``, OSWorld's defaults) choose what is compared: the slide count, the
notes' text, each shape's box (``examine_shape``; the position variants OSWorld's tasks use:
``examine_title_bottom_position`` ... ``examine_modify_height``, with their fixed slides and EMU
thresholds), each text shape's text, its paragraphs' alignment, level and text, and their runs'
font (name, size, bold, italic, RGB colour, underline, strike-through) and the slide's bullets.
OSWorld's background-colour check never fails (its ``fill.background()`` *sets* the fill to the
background and returns ``None``), so it is not repeated here. OSWorld is Apache-2.0; the parity is
measured by ``tests/osworld/test_parity.py``. A file that is not a presentation raises (the grading
scores it 0).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

__all__ = ["compare_pptx_files"]

_DEFAULTS = {
    "examine_number_of_slides": True,
    "examine_shape": True,
    "examine_text": True,
    "examine_indent": True,
    "examine_font_name": True,
    "examine_font_size": True,
    "examine_font_bold": True,
    "examine_font_italic": True,
    "examine_color_rgb": True,
    "examine_font_underline": True,
    "examine_strike_through": True,
    "examine_alignment": True,
    "examine_title_bottom_position": False,
    "examine_table_bottom_position": False,
    "examine_right_position": False,
    "examine_top_position": False,
    "examine_shape_for_shift_size": False,
    "examine_image_size": False,
    "examine_modify_height": False,
    "examine_bullets": True,
    "examine_note": True,
}
_NS = {"a": "http://schemas.openxmlformats.org/drawingml/2006/main"}
_PICTURE, _TABLE, _PLACEHOLDER = 13, 19, 5  # MSO_SHAPE_TYPE values OSWorld compares with


def _box_differs(s1: Any, s2: Any) -> bool:
    return bool(s1.left != s2.left or s1.top != s2.top or s1.width != s2.width or s1.height != s2.height)


def _same_text(s1: Any, s2: Any) -> bool:
    return hasattr(s1, "text") and hasattr(s2, "text") and s1.text == s2.text


def _moved_fails(s1: Any, s2: Any, index: int, o: dict[str, Any]) -> bool:
    """The "moved to the bottom / right / top" options of OSWorld's position tasks."""
    if o["examine_title_bottom_position"]:
        if _same_text(s1, s2):
            if s1.text == "Product Comparison" and (s1.top <= s2.top or s1.top < 3600000):
                return True
        elif _box_differs(s1, s2):
            return True
    if o["examine_table_bottom_position"]:
        if index == 3 and s1.shape_type == _TABLE and s2.shape_type == _TABLE:
            if s1.top <= s2.top or s1.top < 3600000:
                return True
        elif _box_differs(s1, s2):
            return True
    pictures = index == 2 and not hasattr(s1, "text") and not hasattr(s2, "text")
    if o["examine_right_position"] and pictures and (s1.left <= s2.left or s1.left < 4320000):
        return True
    if o["examine_top_position"]:
        if index == 2 and s1.shape_type == _PICTURE and s2.shape_type == _PICTURE:
            if s1.top >= s2.top or s1.top > 1980000:
                return True
        elif _box_differs(s1, s2):
            return True
    return False


def _sized_fails(s1: Any, s2: Any, o: dict[str, Any]) -> bool:
    """The box checks: shifted or resized shapes (and OSWorld's size-only variants)."""
    kept = _same_text(s1, s2) and s1.text == "Elaborate on what you want to discuss."
    if o["examine_shape_for_shift_size"] and _box_differs(s1, s2) and not kept:
        return True
    if _box_differs(s1, s2) and o["examine_shape"]:
        return True
    if o["examine_image_size"]:
        if s1.shape_type == _PICTURE and s2.shape_type == _PICTURE:
            if s1.width != s2.width or s1.height != s2.height:
                return True
        elif _box_differs(s1, s2):
            return True
    if o["examine_modify_height"]:
        text_less = not hasattr(s1, "text") and not hasattr(s2, "text")
        if text_less or s1.shape_type == _PLACEHOLDER and s2.shape_type == _PLACEHOLDER:
            if s1.height != s2.height:
                return True
        elif _box_differs(s1, s2):
            return True
    return False


def _bullets(xml: bytes) -> list[tuple[Any, Any, Any, Any]]:
    """Each paragraph of a slide's XML: (level, bullet character, text, bullet colour)."""
    bullets = []
    for paragraph in ET.fromstring(xml.decode("utf-8")).findall(".//a:p", _NS):
        properties = paragraph.find("a:pPr", _NS)
        level: str | None = "No Level"
        char: str | None = "No Bullet"
        color: str | None = "No Color"
        if properties is not None:
            level = properties.get("lvl")
            bullet = properties.find("a:buChar", _NS)
            char = bullet.get("char") if bullet is not None else "No Bullet"
            colour = properties.find("a:buClr/a:srgbClr", _NS)
            color = colour.get("val") if colour is not None else "No Color"
        texts = [t.text for t in paragraph.findall(".//a:t", _NS)]
        bullets.append((level, char, "".join(texts), color))  # type: ignore[arg-type]  # an empty <a:t> raises, as OSWorld's
    return bullets


def _run_fails(r1: Any, r2: Any, o: dict[str, Any]) -> bool:
    f1, f2 = r1.font, r2.font
    checks = [
        ("examine_font_name", f1.name != f2.name),
        ("examine_font_size", f1.size != f2.size),
        ("examine_font_bold", f1.bold != f2.bold),
        ("examine_font_italic", f1.italic != f2.italic),
    ]
    if any(o[key] and differs for key, differs in checks):
        return True
    if (
        hasattr(f1.color, "rgb")
        and hasattr(f2.color, "rgb")
        and f1.color.rgb != f2.color.rgb
        and o["examine_color_rgb"]
    ):
        return True
    if f1.underline != f2.underline and o["examine_font_underline"]:
        return True
    strikes = [f._element.attrib.get("strike", "noStrike") for f in (f1, f2)]
    if strikes[0] != strikes[1] and o["examine_strike_through"]:
        return True
    return bool(o["examine_bullets"] and _bullets(r1.part.blob) != _bullets(r2.part.blob))


def _text_fails(s1: Any, s2: Any, o: dict[str, Any]) -> bool:
    if s1.text.strip() != s2.text.strip() and o["examine_text"]:
        return True
    for p1, p2 in zip(s1.text_frame.paragraphs, s2.text_frame.paragraphs, strict=False):
        if p1.alignment != p2.alignment and o["examine_alignment"]:
            return True
        if p1.text != p2.text and o["examine_text"]:
            return True
        if p1.level != p2.level and o["examine_indent"]:
            return True
        if any(_run_fails(r1, r2, o) for r1, r2 in zip(p1.runs, p2.runs, strict=False)):
            return True
    return False


def _slide_fails(slide1: Any, slide2: Any, index: int, o: dict[str, Any]) -> bool:
    notes = [s.notes_slide.notes_text_frame.text.strip() for s in (slide1, slide2)]  # read even when not examined
    if notes[0] != notes[1] and o["examine_note"]:
        return True
    for s1, s2 in zip(slide1.shapes, slide2.shapes, strict=False):
        if _moved_fails(s1, s2, index, o) or _sized_fails(s1, s2, o):
            return True
        if hasattr(s1, "text") and hasattr(s2, "text") and _text_fails(s1, s2, o):
            return True
    return False


def compare_pptx_files(file1: str | None, file2: str | None, **options: Any) -> float:
    """OSWorld's ``compare_pptx_files`` (see the module docstring); ``None`` (a missing file) is 0."""
    from pptx import Presentation

    if not file1 or not file2:
        return 0.0
    first, second = Presentation(file1), Presentation(file2)
    chosen = {key: options.get(key, default) for key, default in _DEFAULTS.items()}
    if len(first.slides) != len(second.slides) and chosen["examine_number_of_slides"]:
        return 0.0
    for index, (slide1, slide2) in enumerate(zip(first.slides, second.slides, strict=False), start=1):
        if _slide_fails(slide1, slide2, index, chosen):
            return 0.0
    return 1.0
