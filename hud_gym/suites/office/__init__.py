"""``office``: task families on LibreOffice Calc and Writer on ``hud/Ubuntu-v0`` (issue 26).

Each family generates unlimited variants from a seed (``load_taskset("office", split="test",
n=200)``, or one family by name), with three difficulty levels that add steps. A task writes its
document (``openpyxl`` / ``python-docx``, :mod:`.documents`) into ``~/Documents`` and opens it in
the real app; its evaluator reads the saved file (:mod:`.checks`). Each oracle uses the keyboard
only (:mod:`.keys`): typing, arrows, LibreOffice's shortcuts, Ctrl+S with the keep-format dialog
answered by Enter.

- ``calc-table`` (:mod:`.calc_table`): type a table under a header row;
- ``calc-totals`` (:mod:`.calc_totals`): formulas: a column total, line amounts, a grand total;
- ``calc-sort`` (:mod:`.calc_sort`): put rows in order by one or two keys;
- ``calc-format`` (:mod:`.calc_format`): percent, currency and date number formats;
- ``writer-replace`` (:mod:`.writer_replace`): replace words everywhere in a document;
- ``writer-headings`` (:mod:`.writer_headings`): give paragraphs heading styles.

Example:
    >>> [f.name for f in FAMILIES][:2]
    ['calc-table', 'calc-totals']
"""

from __future__ import annotations

from hud_gym.core.family import Family
from hud_gym.core.suite import Suite

__all__ = ["FAMILIES", "SUITE"]

SUITE = Suite(
    name="office",
    gym="ubuntu",
    function_modules=("hud_gym.suites.office.documents", "hud_gym.suites.office.checks"),
    description="task families on LibreOffice Calc and Writer (tables, formulas, sorting, formats, replace, headings)",
)
"""The ``office`` suite (its tasks are made by its families)."""

_DESCRIPTIONS = {
    "calc_table": "type a table under a spreadsheet's header row",
    "calc_totals": "formulas: a column total, line amounts, a grand total",
    "calc_sort": "put a table's rows in order by one or two keys",
    "calc_format": "percent, currency and date number formats",
    "writer_replace": "replace words everywhere in a text document",
    "writer_headings": "give a document's paragraphs heading styles",
}

ENV_OPTIONS = {"max_steps": 1000, "step_timeout": 120.0, "reset_timeout": 180.0}
"""The env the families' check plays them in (an oracle's polling waits count as steps; a reset
waits up to ``common.LAUNCH_TIMEOUT`` = 120 s for LibreOffice's window, so it may take 180 s)."""

FAMILIES: tuple[Family, ...] = tuple(
    Family(
        name=module.replace("_", "-"),
        gym="ubuntu",
        kind="office",
        generate=f"{__name__}.{module}:generate",
        oracle=f"{__name__}.{module}:oracle",
        description=description,
        attacks="hud_gym.suites.files.attacks:DESKTOP_FAMILY_ATTACKS",
        env_options=ENV_OPTIONS,
    )
    for module, description in _DESCRIPTIONS.items()
)
"""The suite's families (registered by :mod:`hud_gym.suites`)."""
