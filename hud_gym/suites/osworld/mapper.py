"""How one OSWorld example becomes a desktop task: its ``config`` steps run unchanged by
``osworld_config`` (:mod:`.steps`) and its ``evaluator`` unchanged by ``osworld_evaluate``
(:mod:`.grading`), when every step, getter and metric it uses runs here (:func:`.support.why_not`);
otherwise :class:`ExampleMapper` records why in the example's
:class:`~hud_gym.formats.common.TaskConversion` and the example is skipped.

The mapper checks the shape the two functions rely on (each step an object with a ``type`` and
``parameters``; commands strings or lists of strings; ``func`` a name or a list of names; ``conj``
``and`` / ``or``), bounds the task's strings (:data:`MAX_EXAMPLE_CHARS`), and says what the task
needs of the env (``metadata["requires"]``): ``allow_shell`` for a command that is not one of
OSWorld's keystroke scripts, a launch of a program that is not a known desktop app, or a
``vm_command_line`` getter; ``allow_absolute_paths`` for a path outside ``/home/user``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hud_gym.formats.common import Row, TaskConversion
from hud_gym.suites.osworld.getters import OSWORLD_HOME
from hud_gym.suites.osworld.steps import pyautogui_keys
from hud_gym.suites.osworld.support import why_not
from hud_gym.task import TaskFileError

__all__ = ["MAX_EXAMPLE_CHARS", "OSWORLD_HOME", "ExampleMapper"]

MAX_EXAMPLE_CHARS = 200_000
"""The largest example (its JSON text) converted; OSWorld's are a few kB."""


def _known_apps() -> frozenset[str]:
    from hud_gym.controllers.ubuntu.apps import KNOWN_APPS

    return frozenset(KNOWN_APPS)


class ExampleMapper:
    """Checks one example and records, in ``entry``, what does not run here and what it needs."""

    def __init__(self, path: Path, row: Row, entry: TaskConversion) -> None:
        self.path = path
        self.row = row
        self.entry = entry
        self.needs_shell = False
        self.needs_absolute_paths = False

    def fail(self, message: str, field: str) -> TaskFileError:
        return TaskFileError(self.path, message, line=self.row.line, index=self.row.index, field=field)

    def _check_path(self, value: Any, field: str) -> None:
        if not isinstance(value, str) or not value:
            raise self.fail("must be a non-empty string", field)
        if value.startswith("/") and not (value == OSWORLD_HOME or value.startswith(OSWORLD_HOME + "/")):
            self.needs_absolute_paths = True
            note = f"absolute path {value[:200]!r} needs allow_absolute_paths=True"
            if note not in self.entry.notes:
                self.entry.notes.append(note)

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
            if script is None or pyautogui_keys(script) is None:
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
