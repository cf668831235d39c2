"""``OSWorld-Ubuntu``: OSWorld's Ubuntu tasks from a local checkout, and what of them runs here.

``load_taskset("OSWorld-Ubuntu")`` reads ``$HUD_GYM_OSWORLD`` (:data:`CHECKOUT_ENV_VAR`: an
OSWorld checkout, or its ``evaluation_examples`` directory) and returns the tasks that run
here; :func:`domain_report` says per domain how many load, how many run here, and why the others
do not (``hud-gym tasksets show OSWorld-Ubuntu`` prints it).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from hud_gym.suites.osworld.mapper import convert_example
from hud_gym.task import Task, TaskFileError, TaskSet
from hud_gym.task_files import parse_json, read_text

__all__ = ["CHECKOUT_ENV_VAR", "DomainReport", "domain_report", "examples_dir", "load", "load_osworld"]

CHECKOUT_ENV_VAR = "HUD_GYM_OSWORLD"
"""The environment variable naming the local OSWorld checkout."""
_MAX_FILES = 5000


class DomainReport(BaseModel):
    """What of one OSWorld domain runs here."""

    domain: str
    total: int = 0
    loads: int = 0
    runs_here: int = 0
    why_not: dict[str, int] = Field(default_factory=dict)


def examples_dir(path: str | os.PathLike[str] | None = None) -> Path:
    """``evaluation_examples/examples`` of the checkout ``path`` (default ``$HUD_GYM_OSWORLD``).

    Raises:
        ValueError: no path given and the variable is not set, or no examples directory there.
    """
    given = path if path is not None else os.environ.get(CHECKOUT_ENV_VAR)
    if not given:
        raise ValueError(
            f"OSWorld-Ubuntu needs a local OSWorld checkout (github.com/xlang-ai/OSWorld): set "
            f"{CHECKOUT_ENV_VAR}=<checkout path> or call load_osworld(path)"
        )
    root = Path(given).expanduser()
    for candidate in (root / "evaluation_examples" / "examples", root / "examples", root):
        if candidate.is_dir() and candidate.name == "examples":
            return candidate
    raise ValueError(f"{root} is not an OSWorld checkout: no evaluation_examples/examples directory in it")


def _scan(examples: Path) -> tuple[list[Any], dict[str, DomainReport]]:
    tasks: list[Any] = []
    reports: dict[str, DomainReport] = {}
    seen: dict[str, str] = {}
    # A "-win" variant (a Windows version of a task, same id) after the task itself.
    found = (p for p in examples.glob("*/*.json") if p.is_file() and not p.is_symlink())
    files = sorted(found, key=lambda p: (p.name.endswith("-win.json"), str(p)))[:_MAX_FILES]
    for file in files:
        domain = file.parent.name
        report = reports.setdefault(domain, DomainReport(domain=domain))
        report.total += 1
        why: Counter[str] = Counter(report.why_not)
        try:
            data = parse_json(file, read_text(file))
            if not isinstance(data, dict) or "instruction" not in data:
                raise TaskFileError(file, "not an OSWorld example (no 'instruction')")
            converted = convert_example(file, data)
        except TaskFileError as exc:
            why[f"malformed: {exc.field or 'file'}: {exc.problem[:120]}"] += 1
            report.why_not = dict(why)
            continue
        if data["id"] in seen:
            why[f"duplicate id (the task of {seen[data['id']][:100]})"] += 1
            report.why_not = dict(why)
            continue
        seen[data["id"]] = f"{domain}/{file.name}"
        report.loads += 1
        if converted.task is None:
            for reason in converted.reasons:
                why[reason] += 1
        else:
            tasks.append(Task.model_validate(converted.task))
            report.runs_here += 1
        report.why_not = dict(why)
    return tasks, reports


def load_osworld(path: str | os.PathLike[str] | None = None) -> TaskSet:
    """The OSWorld tasks of the checkout ``path`` (default ``$HUD_GYM_OSWORLD``) that run here."""
    examples = examples_dir(path)
    tasks, _ = _scan(examples)
    return TaskSet(tasks=tasks, id="OSWorld-Ubuntu", description=f"OSWorld's Ubuntu tasks that run here ({examples})")


def load() -> TaskSet:
    """``load_taskset("OSWorld-Ubuntu")``: :func:`load_osworld` of ``$HUD_GYM_OSWORLD``."""
    return load_osworld()


def domain_report(path: str | os.PathLike[str] | None = None) -> list[DomainReport]:
    """Per domain: tasks, tasks that load, tasks that run here, and why the others do not."""
    _, reports = _scan(examples_dir(path))
    return [reports[d] for d in sorted(reports)]
