"""``writer-headings``: give a report's title and section names heading styles.

- difficulty 1: the first paragraph (the title) gets Heading 1;
- difficulty 2: the title Heading 1, one section name Heading 2;
- difficulty 3: the title Heading 1, three section names Heading 2.

Graded by every paragraph's style (the others keep a body style) and the text left unchanged.
The oracle moves paragraph by paragraph (Ctrl+Down) and presses Ctrl+1 / Ctrl+2.

Example:
    >>> plan(4, 1)[1]
    {'0': 'Heading 1'}
"""

from __future__ import annotations

from hud_gym.actions import CLAAction, PressAction
from hud_gym.suites.files.script import family_random
from hud_gym.suites.office.common import office_task
from hud_gym.suites.office.keys import KeyScript, open_document, save_keeping_format
from hud_gym.task import Task

__all__ = ["generate", "oracle", "plan"]

FAMILY = "writer-headings"
DOCUMENT = "report.docx"
_TITLES = ("Quarterly Report", "Site Survey", "Project Review", "Annual Summary", "Field Notes", "Trip Report")
_SECTIONS = ("Background", "Method", "Results", "Costs", "Risks", "Next Steps", "Staffing", "Timeline")
_BODY = (
    "This part describes the work done so far.",
    "The figures below come from the spring survey.",
    "Most goals were met ahead of schedule.",
    "Two suppliers delivered late this quarter.",
    "The team will grow by two people next year.",
    "Costs stayed within the planned budget.",
)


def plan(seed: int, difficulty: int) -> tuple[list[str], dict[str, str]]:
    """The paragraphs, and the styles asked (paragraph index -> style)."""
    rng = family_random(FAMILY, seed, difficulty)
    sections = rng.sample(_SECTIONS, 3)
    paragraphs = [rng.choice(_TITLES)]
    styles = {"0": "Heading 1"}
    headed = {1: 0, 2: 1, 3: 3}[difficulty]
    for index, section in enumerate(sections):
        if index < headed:
            styles[str(len(paragraphs))] = "Heading 2"
        paragraphs += [section, rng.choice(_BODY)]
    return paragraphs, styles


def generate(seed: int, difficulty: int) -> Task:
    """The task for ``seed`` and ``difficulty``."""
    paragraphs, styles = plan(seed, difficulty)
    twos = [paragraphs[int(i)] for i, style in styles.items() if style == "Heading 2"]
    goal = f"Give the title ({paragraphs[0]}) the paragraph style Heading 1"
    if twos:
        goal += f", and the section name{'s' if len(twos) > 1 else ''} {', '.join(twos)} the style Heading 2"
    return office_task(
        family=FAMILY,
        seed=seed,
        difficulty=difficulty,
        prompt=f"The document {DOCUMENT} is open in LibreOffice Writer. {goal}; leave the other paragraphs' styles and all the text as they are.",
        document=DOCUMENT,
        content=paragraphs,
        evaluate=[("docx_paragraphs", f"Documents/{DOCUMENT}", paragraphs, styles)],
    )


def oracle(task: Task) -> KeyScript:
    """Ctrl+Home, then Ctrl+Down to each paragraph and its heading shortcut; saves."""
    meta = task.metadata or {}
    _, styles = plan(meta["seed"], meta["difficulty"])
    actions: list[CLAAction] = []
    for index, style in sorted(styles.items(), key=lambda item: int(item[0])):
        actions += [PressAction(keys=["ctrl", "home"]), *[PressAction(keys=["ctrl", "down"])] * int(index)]
        actions.append(PressAction(keys=["ctrl", style[-1]]))
    return KeyScript([*open_document(DOCUMENT), *actions, *save_keeping_format(DOCUMENT)])
