"""How one OSWorld example becomes a desktop task: its ``config`` steps run unchanged by
``osworld_config`` (:mod:`.steps`) and its ``evaluator`` unchanged by ``osworld_evaluate``
(:mod:`.grading`), when every step, getter and metric it uses runs here (:func:`.support.why_not`);
otherwise :func:`convert_example` says why (the converter of ``format="osworld"``,
:mod:`hud_gym.formats.osworld`, reports it, and skips the example).

The mapper checks the shape the two functions rely on (each step an object with a ``type`` and
``parameters``; commands strings or lists of strings; ``func`` a name or a list of names; ``conj``
``and`` / ``or``), bounds the task's strings (:data:`MAX_EXAMPLE_CHARS`), and says what the task
needs of the env (``metadata["requires"]``): ``allow_shell`` for a command that is not one of
OSWorld's keystroke scripts, a launch of a program that is not a known desktop app, or a
``vm_command_line`` getter; ``allow_absolute_paths`` for a path outside ``/home/user``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hud_gym.suites.osworld.scripts import OSWORLD_HOME, pyautogui_input
from hud_gym.suites.osworld.support import why_not
from hud_gym.task import TaskFileError

__all__ = ["MAX_EXAMPLE_CHARS", "OSWORLD_HOME", "Converted", "ExampleMapper", "convert_example"]

MAX_EXAMPLE_CHARS = 200_000
"""The largest example (its JSON text) converted; OSWorld's are a few kB."""


def _known_apps() -> frozenset[str]:
    from hud_gym.controllers.ubuntu.apps import KNOWN_APPS

    return frozenset(KNOWN_APPS)


@dataclass
class Converted:
    """One example, converted: the task's fields (``None`` when it does not run here), why not,
    and notes (what it needs of the env)."""

    task: dict[str, Any] | None
    reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class ExampleMapper:
    """Checks one example and records what it needs (:attr:`notes`, :attr:`needs_shell`, ...)."""

    def __init__(self, path: Path, index: int = 0, line: int | None = None) -> None:
        self.path = path
        self.index = index
        self.line = line
        self.notes: list[str] = []
        self.needs_shell = False
        self.needs_absolute_paths = False

    def fail(self, message: str, field: str) -> TaskFileError:
        return TaskFileError(self.path, message, line=self.line, index=self.index, field=field)

    def _check_path(self, value: Any, field: str) -> None:
        if not isinstance(value, str) or not value:
            raise self.fail("must be a non-empty string", field)
        if value.startswith("/") and not (value == OSWORLD_HOME or value.startswith(OSWORLD_HOME + "/")):
            self.needs_absolute_paths = True
            note = f"absolute path {value[:200]!r} needs allow_absolute_paths=True"
            if note not in self.notes:
                self.notes.append(note)

    def _command(self, params: dict[str, Any], field: str) -> str | list[str]:
        command = params.get("command")
        if isinstance(command, list) and command and all(isinstance(a, str) for a in command):
            return command
        if isinstance(command, str) and command.strip():
            return command
        raise self.fail("'command' must be a non-empty string or list of strings", f"{field}.command")

    def step(self, step: Any, field: str) -> None:
        """Check one ``config`` / ``postconfig`` step and note what it needs."""
        if not isinstance(step, dict) or not isinstance(step.get("type"), str):
            raise self.fail("a step must be an object with a 'type'", field)
        params = step.get("parameters") or {}
        if not isinstance(params, dict):
            raise self.fail("'parameters' must be an object", f"{field}.parameters")
        kind = step["type"]
        if kind in ("execute", "command"):
            command = self._command(params, f"{field}.parameters")
            script = command[2] if isinstance(command, list) and len(command) == 3 and command[1] == "-c" else None
            if script is None or pyautogui_input(script) is None:
                self.needs_shell = True
        elif kind == "launch":
            command = self._command(params, f"{field}.parameters")
            argv = command if isinstance(command, list) else command.split()
            if argv[0] not in _known_apps() or isinstance(command, str) and params.get("shell"):
                self.needs_shell = True
        elif kind == "open":
            self._check_path(params.get("path"), f"{field}.parameters.path")
        elif kind == "download":
            files = params.get("files")
            if not isinstance(files, list) or not files:
                raise self.fail("'files' must be a non-empty list of {url, path}", f"{field}.parameters.files")
            for i, item in enumerate(files):
                if not isinstance(item, dict) or not isinstance(item.get("url"), str):
                    raise self.fail("a file needs a string 'url' and 'path'", f"{field}.parameters.files[{i}]")
                self._check_path(item.get("path"), f"{field}.parameters.files[{i}].path")

    def evaluator(self, evaluator: Any) -> None:
        """Check the ``evaluator`` object's shape and note what it needs."""
        if not isinstance(evaluator, dict):
            raise self.fail("'evaluator' must be an object", "evaluator")
        funcs = evaluator.get("func")
        names = funcs if isinstance(funcs, list) else [funcs]
        if not names or not all(isinstance(f, str) and f for f in names):
            raise self.fail("'func' must be a metric name or a list of them", "evaluator.func")
        if evaluator.get("conj", "and") not in ("and", "or"):
            raise self.fail(f"'conj' must be 'and' or 'or', got {evaluator.get('conj')!r}", "evaluator.conj")
        postconfig = evaluator.get("postconfig") or []
        if not isinstance(postconfig, list):
            raise self.fail("'postconfig' must be a list", "evaluator.postconfig")
        for i, step in enumerate(postconfig):
            self.step(step, f"evaluator.postconfig[{i}]")
        for key in ("result", "expected"):
            value = evaluator.get(key)
            getters: list[Any] = value if isinstance(value, list) else [value]
            for getter in getters:
                if isinstance(getter, dict) and getter.get("type") == "vm_command_line":
                    self.needs_shell = True
                if isinstance(getter, dict) and getter.get("type") == "rule" and "rules" not in getter:
                    raise self.fail("a 'rule' getter needs 'rules'", f"evaluator.{key}.rules")

    def check(self, data: dict[str, Any], domain: str | None) -> list[str]:
        """Check the whole example; returns why it cannot run here (``[]``: it can)."""
        if len(json.dumps(data)) > MAX_EXAMPLE_CHARS:
            raise self.fail(f"the example is larger than {MAX_EXAMPLE_CHARS:,} characters", "id")
        config = data.get("config") or []
        if not isinstance(config, list):
            raise self.fail("'config' must be a list of steps", "config")
        for i, step in enumerate(config):
            self.step(step, f"config[{i}]")
        if "evaluator" not in data:
            return ["no evaluator"]
        self.evaluator(data["evaluator"])
        return why_not(data, domain)


def convert_example(path: Path, data: dict[str, Any], index: int = 0, line: int | None = None) -> Converted:
    """The task fields of the OSWorld example ``data`` (from ``path``; its domain is the folder's
    name): setup ``osworld_config(config)``, grade ``osworld_evaluate(evaluator)``; or why it does
    not run here.

    Raises:
        TaskFileError: a malformed example (naming the file, the index and the field).
    """
    for key in ("id", "instruction"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise TaskFileError(path, "missing or not a non-empty string", line=line, index=index, field=key)
    mapper = ExampleMapper(path, index, line)
    domain = path.parent.name or None
    reasons = mapper.check(data, domain)
    if reasons:
        return Converted(task=None, reasons=reasons, notes=mapper.notes)
    if mapper.needs_shell:
        mapper.notes.append("needs allow_shell=True (or the ubuntu container)")
    task = {
        "id": data["id"],
        "prompt": data["instruction"],
        "gym": "hud-ubuntu",
        "setup": [{"function": "osworld_config", "args": [data.get("config") or []]}],
        "evaluate": [{"function": "osworld_evaluate", "args": [data["evaluator"]]}],
        "metadata": {
            "benchmark": "osworld",
            "domain": domain,
            "related_apps": data.get("related_apps"),
            "snapshot": data.get("snapshot"),
            "requires": {"allow_shell": mapper.needs_shell, "allow_absolute_paths": mapper.needs_absolute_paths},
            "source": {"format": "osworld", "row": data, "file": str(path)},
        },
    }
    return Converted(task=task, notes=mapper.notes)
