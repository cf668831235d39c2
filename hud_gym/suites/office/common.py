"""What the office families share: their word lists and the task that opens a generated document.

Example:
    >>> task = office_task(family="calc-table", seed=1, difficulty=1, prompt="p", document="a.xlsx",
    ...                    content=[["x"]], evaluate=[])
    >>> task.setup[1].args[0]
    'libreoffice-calc'
"""

from __future__ import annotations

import re
from typing import Any

from hud_gym.suites.files.script import family_task
from hud_gym.task import FunctionConfig, Task

__all__ = ["FRUITS", "PEOPLE", "TEAMS", "office_task"]

FRUITS = (
    "Apple",
    "Banana",
    "Cherry",
    "Damson",
    "Elderberry",
    "Fig",
    "Grape",
    "Kiwi",
    "Lemon",
    "Mango",
    "Orange",
    "Papaya",
    "Quince",
)
"""Item names (none is the start of another, so Calc's AutoInput completes none into another)."""
PEOPLE = ("Alice", "Bruno", "Chen", "Dmitri", "Esther", "Farah", "Goran", "Hiro", "Ines", "Jonas", "Kemal", "Lucia")
"""People's names (prefix-free, as :data:`FRUITS`)."""
TEAMS = ("Red", "Blue", "Green")
"""Team names (prefix-free)."""

_APPS = {"xlsx": "libreoffice-calc", "docx": "libreoffice-writer"}
LAUNCH_TIMEOUT = 120.0
"""Seconds a task's setup waits for the document's window (a cold LibreOffice on a loaded box)."""


def office_task(
    *,
    family: str,
    seed: int,
    difficulty: int,
    prompt: str,
    document: str,
    content: list[Any],
    evaluate: list[Any],
) -> Task:
    """The task: ``~/Documents/<document>`` made from ``content`` and opened in its LibreOffice app."""
    kind = document.rsplit(".", 1)[-1]
    path = f"Documents/{document}"
    setup = [
        FunctionConfig(function="office_document", args=[path, kind, content]),
        FunctionConfig(
            function="launch",
            args=[_APPS[kind], [path]],
            kwargs={"wait": re.escape(document), "timeout": LAUNCH_TIMEOUT},
        ),
    ]
    return family_task(
        suite="office",
        family=family,
        seed=seed,
        difficulty=difficulty,
        prompt=f"{prompt} Save the file in its format (~/{path}).",
        setup=setup,
        evaluate=evaluate,
    )
