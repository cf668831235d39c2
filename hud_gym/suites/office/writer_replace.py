"""``writer-replace``: replace words everywhere in a text document.

- difficulty 1: one word, in three paragraphs;
- difficulty 2: two words, in four paragraphs;
- difficulty 3: three words, in five paragraphs.

Graded by the saved document's paragraphs (every one exactly as after the replacements). The
oracle uses Find and Replace (Ctrl+H: the word, Tab to the replacement, Tab to Replace All,
Enter) for each word, then saves keeping the format.

Example:
    >>> len(plan(1, 2)[1])
    2
"""

from __future__ import annotations

from hud_gym.actions import CLAAction, PressAction, TypeAction, WaitAction
from hud_gym.suites.files.script import family_random
from hud_gym.suites.office.common import office_task
from hud_gym.suites.office.keys import KeyScript, Until, open_document, save_keeping_format
from hud_gym.task import Task

__all__ = ["generate", "oracle", "plan"]

FAMILY = "writer-replace"
DOCUMENT = "memo.docx"
_NAMES = ("Falcon", "Osprey", "Heron", "Kestrel", "Pelican", "Condor", "Puffin", "Magpie", "Starling", "Lapwing")
_TEMPLATES = (
    "The {0} team met on Monday to plan the next release.",
    "Everyone agreed that {0} needs more tests before it ships.",
    "Questions about {0} go to the project channel.",
    "The budget for {0} stays as it was last quarter.",
    "A demo of {0} is planned for the end of the month.",
    "Thanks to all who helped with {0} this week.",
)
_TABS_TO_REPLACE = 4
"""Tabs from the Find box to the Replace box of the Find and Replace dialog."""
_TABS_TO_REPLACE_ALL = 6
"""Tabs from the Replace box to its Replace All button."""


def plan(seed: int, difficulty: int) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    """The paragraphs, the replacements (old, new), and the paragraphs after them."""
    rng = family_random(FAMILY, seed, difficulty)
    words = rng.sample(_NAMES, 2 * difficulty)
    pairs = [(words[2 * i], words[2 * i + 1]) for i in range(difficulty)]
    olds = [old for old, _ in pairs]
    keep = [word for word in _NAMES if word not in words]
    paragraphs = []
    for index, template in enumerate(rng.sample(_TEMPLATES, 2 + difficulty)):
        paragraphs.append(template.format(olds[index % len(olds)] if index < 2 * difficulty else rng.choice(keep)))
    after = list(paragraphs)
    for old, new in pairs:
        after = [p.replace(old, new) for p in after]
    return paragraphs, pairs, after


def generate(seed: int, difficulty: int) -> Task:
    """The task for ``seed`` and ``difficulty``."""
    paragraphs, pairs, after = plan(seed, difficulty)
    listed = "; ".join(f"every {old} with {new}" for old, new in pairs)
    return office_task(
        family=FAMILY,
        seed=seed,
        difficulty=difficulty,
        prompt=f"The document {DOCUMENT} is open in LibreOffice Writer. Replace {listed}, leaving the rest of the text as it is.",
        document=DOCUMENT,
        content=paragraphs,
        evaluate=[("docx_paragraphs", f"Documents/{DOCUMENT}", after)],
    )


def _dialog(observation: dict, info: dict) -> bool:
    return any(str(title) == "Find and Replace" for title in info.get("windows") or ())


def oracle(task: Task) -> KeyScript:
    """Find and Replace for each word, then saves."""
    meta = task.metadata or {}
    _, pairs, _ = plan(meta["seed"], meta["difficulty"])
    steps: list[CLAAction | Until] = [*open_document(DOCUMENT)]
    for old, new in pairs:
        steps += [PressAction(keys=["ctrl", "h"]), Until(_dialog, timeout=30.0), WaitAction(time=1000)]
        steps += [PressAction(keys=["ctrl", "a"]), TypeAction(text=old)]
        steps += [PressAction(keys=["tab"])] * _TABS_TO_REPLACE + [
            PressAction(keys=["ctrl", "a"]),
            TypeAction(text=new),
        ]
        steps += [PressAction(keys=["tab"])] * _TABS_TO_REPLACE_ALL + [
            PressAction(keys=["enter"]),
            WaitAction(time=1500),
        ]
        steps += [
            PressAction(keys=["escape"]),
            Until(lambda o, i: not _dialog(o, i), timeout=30.0),
            WaitAction(time=500),
        ]
    return KeyScript([*steps, *save_keeping_format(DOCUMENT)])
