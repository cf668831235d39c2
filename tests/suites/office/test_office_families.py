"""The ``office`` task families (hud_gym/suites/office): deterministic generation, the documents
they make, and, on a live desktop with the real LibreOffice, each family's oracle (keyboard only)
scoring 1 at the hardest level (the longest script: a superset of the easier levels' steps; every
level over 100 seeds is ``make bench-families``), and the untouched document scoring 0.

The oracle episodes start LibreOffice each (tens of seconds on a loaded machine): ``slow`` and
``e2e``. The do-nothing grades skip the app (the document as made is what an agent that does
nothing leaves) and share one env.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import docx
import openpyxl
import pytest

import hud_gym
from hud_gym import ResponseAction
from hud_gym.core.family import families, generate_task, make_oracle
from hud_gym.suites.office.checks import format_kind
from hud_gym.suites.office.documents import document_bytes

pytestmark = pytest.mark.timeout(900)

FAMILIES = [family.name for family in families("office")]


def test_six_office_families_are_registered() -> None:
    assert len(FAMILIES) >= 6
    taskset = hud_gym.load_taskset("office", split="train", n=12)
    assert sorted({task.metadata["family"] for task in taskset.tasks}) == sorted(FAMILIES)
    assert all(task.metadata["benchmark"] == "office" and task.metadata["seed"] < 10**9 for task in taskset.tasks)


@pytest.mark.parametrize("name", FAMILIES)
def test_generation_is_deterministic_and_harder_levels_take_more_steps(name: str) -> None:
    for difficulty in (1, 2, 3):
        first = generate_task(name, 42, difficulty)
        assert first == generate_task(name, 42, difficulty)
        assert first.to_dict() != generate_task(name, 43, difficulty).to_dict()
        assert first.metadata == {"benchmark": "office", "family": name, "seed": 42, "difficulty": difficulty}
    steps = [len(make_oracle(generate_task(name, 5, d)).steps) for d in (1, 3)]  # type: ignore[attr-defined]
    assert steps[0] < steps[1], steps


def test_documents_are_made_and_read_back() -> None:
    book = openpyxl.load_workbook(io.BytesIO(document_bytes("xlsx", [["Item", "Qty"], ["Fig", 3]])))
    assert [[c.value for c in row] for row in book.active.iter_rows()] == [["Item", "Qty"], ["Fig", 3]]
    document = docx.Document(io.BytesIO(document_bytes("docx", ["One.", "Two."])))
    assert [p.text for p in document.paragraphs] == ["One.", "Two."]
    with pytest.raises(ValueError, match="at most"):
        document_bytes("xlsx", [["x"] * 100] * 200)
    with pytest.raises(ValueError, match="'xlsx' or 'docx'"):
        document_bytes("pptx", [])
    assert [format_kind(f) for f in ("0%", "[$€-407]0.00", "YYYY-MM-DD", "General")] == [
        "percent",
        "currency",
        "date",
        "general",
    ]


def test_the_untouched_documents_score_0(desktop: Any) -> None:
    for name in FAMILIES:
        for difficulty in (1, 3):
            task = generate_task(name, 9, difficulty)
            untouched = task.model_copy(update={"setup": [c for c in task.setup or () if c.function != "launch"]})
            desktop.reset(options={"task": untouched})
            _, reward, _, _, info = desktop.step(ResponseAction(text="done"))
            assert info["status"] == "ok" and reward == 0.0, (name, difficulty, info.get("grade"))


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "difficulty"), [(2, 3)], ids=["hardest"])
@pytest.mark.parametrize("name", FAMILIES)
def test_oracle_solves_with_the_keyboard(
    desktop: Any, play: Callable[..., Any], name: str, seed: int, difficulty: int
) -> None:
    played = play(desktop, generate_task(name, seed, difficulty))
    assert played.reward == 1.0 and set(played.statuses) == {"ok"}, (seed, difficulty, played)
