"""The host side of the browser's element keys, without a browser: ``obs["axtree"]``'s text
(whole nodes within its cap, always the text space's characters, always JSON), the set-of-marks
drawing, and the bounding of what a page's scan returned."""

from __future__ import annotations

import json

import numpy as np

from hud_gym.controllers.browser.accessibility import bounded_elements, marks_of
from hud_gym.envs.browser_nodes import AXTREE_CHARS, axtree_text, draw_marks, node_spaces
from hud_gym.spaces import TEXT_CHARSET


def test_axtree_text_keeps_whole_nodes_within_its_cap() -> None:
    nodes = [{"id": i, "role": "button", "name": "n" * 150 + "\U0001f600\x07\r"} for i in range(2000)]
    text, truncated = axtree_text(nodes)
    assert truncated and len(text) <= AXTREE_CHARS
    parsed = json.loads(text)
    assert [node["id"] for node in parsed] == list(range(len(parsed))) and len(parsed) > 100
    assert set(text) <= TEXT_CHARSET
    assert node_spaces(True, False, 10, 10)["axtree"].contains(text)


def test_draw_marks_draws_on_a_copy() -> None:
    pixels = np.full((60, 80, 3), 255, np.uint8)
    drawn = draw_marks(pixels, [{"id": 42, "bbox": [10.0, 10.0, 30.0, 20.0]}])
    assert (pixels == 255).all() and drawn.shape == pixels.shape and drawn.dtype == np.uint8
    assert (drawn[29, 10:40] != 255).any() and (drawn[50:, :] == 255).all()


def test_what_a_page_returns_is_bounded_and_checked() -> None:
    raw = [
        {"tag": "p", "text": "x" * 100_000, "bbox": [0, 0, 5, 5]},
        {"tag": "div", "bbox": [0, 0, "5", 5]},
        "not an element",
        {"tag": "div", "bbox": [0, 0, float("nan"), 5]},
    ] + [{"tag": "b", "text": "", "bbox": [1, 2, 3, 4]}] * 50
    elements = bounded_elements(raw, 10)
    assert len(elements) <= 10 and len(elements[0]["text"]) < 9000 and elements[0]["bbox"] == [0.0, 0.0, 5.0, 5.0]
    assert bounded_elements({"not": "a list"}, 10) == []
    marks = marks_of(
        [
            (7, {"mark": True, "tag": "t" * 10_000, "text": 3, "bbox": [1, 2, 3, 4]}),
            (8, {"tree": True, "bbox": [1, 2, 3, 4]}),
        ]
    )
    assert marks == [{"id": 7, "tag": "t" * 200, "text": "", "bbox": [1.0, 2.0, 3.0, 4.0]}]


def test_a_cap_of_one_element_keeps_that_elements_fields() -> None:
    """``max_elements=1`` cut each element to one key too (its box lost: an env_error over a
    controller server); an element whose box is past the key cap (a page's own keys first) is
    left out, never kept without its box."""
    raw = [{"tag": "button", "text": "a", "id": "x", "bbox": [1, 2, 3, 4]}, {"tag": "button", "bbox": [5, 6, 7, 8]}]
    assert bounded_elements(raw, 1) == [{"tag": "button", "text": "a", "id": "x", "bbox": [1.0, 2.0, 3.0, 4.0]}]
    padded = {**{f"k{i}": i for i in range(200)}, "bbox": [1, 2, 3, 4]}
    assert bounded_elements([padded], 5) == []
    assert bounded_elements([{"bbox": [1, 2, 3, 4], **padded}], 5)[0]["bbox"] == [1.0, 2.0, 3.0, 4.0]
