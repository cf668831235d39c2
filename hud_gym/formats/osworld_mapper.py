"""How the parts of one OSWorld example map onto hud-gym's desktop functions (the table is in
:mod:`hud_gym.formats.osworld`): :class:`ExampleMapper` maps its setup steps and its evaluator,
recording in the example's :class:`~hud_gym.formats.common.TaskConversion` what did not map and
what changed."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hud_gym.formats.common import Row, TaskConversion
from hud_gym.task import TaskFileError

__all__ = ["OSWORLD_HOME", "ExampleMapper"]

OSWORLD_HOME = "/home/user"
"""The home directory of OSWorld's VM; mapped to the env's home."""


_TEXT_SUFFIXES = frozenset(
    {
        ".txt",
        ".md",
        ".py",
        ".csv",
        ".tsv",
        ".json",
        ".xml",
        ".html",
        ".sh",
        ".log",
        ".ini",
        ".cfg",
        ".conf",
        ".yaml",
        ".yml",
        ".tex",
        ".c",
        ".h",
        ".cpp",
        ".java",
        ".js",
        ".css",
    }
)
_TEXT_METRICS = ("exact_match", "check_include_exclude")


class ExampleMapper:
    """Maps one example's steps, recording what did not map and what changed in ``entry``."""

    def __init__(self, path: Path, row: Row, entry: TaskConversion) -> None:
        self.path = path
        self.row = row
        self.entry = entry
        self.needs_shell = False
        self.needs_absolute_paths = False
        self.needs_network = False

    def fail(self, message: str, field: str) -> TaskFileError:
        return TaskFileError(self.path, message, line=self.row.line, index=self.row.index, field=field)

    def note(self, text: str) -> None:
        if text not in self.entry.notes:
            self.entry.notes.append(text)

    # ------------------------------------------------------------------ paths and commands

    def map_path(self, value: str) -> str:
        if value == OSWORLD_HOME or value.startswith(OSWORLD_HOME + "/"):
            self.note(f"paths under {OSWORLD_HOME} are in the env's home")
            return "~" + value[len(OSWORLD_HOME) :]
        if value.startswith("/"):
            self.needs_absolute_paths = True
            self.note(f"absolute path {value!r} needs allow_absolute_paths=True")
        return value

    def map_command(self, command: str | list[str], shell: bool) -> str | list[str]:
        """A command for ``run``: a string runs through ``bash -lc``, a list is the argv."""
        self.needs_shell = True
        if isinstance(command, str):
            if not shell and OSWORLD_HOME not in command:
                return shlex.split(command)
            if OSWORLD_HOME in command:
                self.note(f"{OSWORLD_HOME} in commands is $HOME")
            return command.replace(OSWORLD_HOME, "$HOME")
        if any(OSWORLD_HOME in arg for arg in command):
            self.note(f"{OSWORLD_HOME} in commands is $HOME")
            return " ".join(_quote_with_home(arg) for arg in command)
        return list(command)

    def _command_param(self, params: dict[str, Any], field: str) -> tuple[str | list[str], bool]:
        command = params.get("command")
        if isinstance(command, list) and command and all(isinstance(a, str) for a in command):
            pass
        elif not (isinstance(command, str) and command.strip()):
            raise self.fail("'command' must be a non-empty string or list of strings", f"{field}.parameters.command")
        shell = params.get("shell", False)
        if isinstance(shell, str):  # some examples spell it "true"
            shell = shell.strip().lower() == "true"
        return command, bool(shell)

    # ------------------------------------------------------------------ setup steps

    def setup_step(self, step: Any, field: str, phase: str = "config") -> list[Any] | None:
        """The hud-gym setup calls of one step; None (recorded) when it does not map."""
        if not isinstance(step, dict) or not isinstance(step.get("type"), str):
            raise self.fail("a step must be an object with a 'type'", field)
        kind = step["type"]
        params = step.get("parameters") or {}
        if not isinstance(params, dict):
            raise self.fail("'parameters' must be an object", f"{field}.parameters")
        label = kind if phase == "config" else f"postconfig.{kind}"
        unmapped = self.entry.unmapped_config
        if kind == "sleep":
            self.note(f"{label} dropped (setup functions wait on real conditions)")
            return []
        if phase != "config":
            unmapped.append(label)
            return None
        mapper = _SETUP_MAPPERS.get(kind)
        if mapper is None:
            unmapped.append(kind)
            return None
        return mapper(self, kind, params, field)

    def _setup_command(self, kind: str, params: dict[str, Any], field: str) -> list[Any] | None:
        if "until" in params:
            self.entry.unmapped_config.append(f"{kind}.until")
            return None
        command, shell = self._command_param(params, field)
        self.note(f"{kind}: a non-zero exit fails the reset (OSWorld ignores it)")
        return [{"function": "run", "args": [self.map_command(command, shell)]}]

    def _setup_launch(self, kind: str, params: dict[str, Any], field: str) -> list[Any] | None:
        command, shell = self._command_param(params, field)
        needed_shell = self.needs_shell
        mapped = self.map_command(command, shell)
        argv = ["bash", "-lc", mapped] if isinstance(mapped, str) else mapped
        if len(argv) == 1 and argv[0] in _known_apps():
            self.needs_shell = needed_shell  # hud-gym's own desktop apps start without the shell
        return [{"function": "launch", "args": [argv[0]], "kwargs": {"args": argv[1:], "wait": False}}]

    def _setup_download(self, kind: str, params: dict[str, Any], field: str) -> list[Any] | None:
        files = params.get("files")
        if not isinstance(files, list) or not files:
            raise self.fail("'files' must be a non-empty list of {url, path}", f"{field}.parameters.files")
        calls = []
        self.needs_network = True  # download_file fetches only for an episode with the network
        for i, item in enumerate(files):
            if (
                not isinstance(item, dict)
                or not isinstance(item.get("url"), str)
                or not isinstance(item.get("path"), str)
            ):
                raise self.fail("a file needs a string 'url' and 'path'", f"{field}.parameters.files[{i}]")
            calls.append({"function": "download_file", "args": [item["url"], self.map_path(item["path"])]})
        return calls

    def _setup_open(self, kind: str, params: dict[str, Any], field: str) -> list[Any] | None:
        target = params.get("path")
        if not isinstance(target, str) or not target:
            raise self.fail("'path' must be a non-empty string", f"{field}.parameters.path")
        suffix = Path(target).suffix.lower()
        if suffix not in _TEXT_SUFFIXES:
            self.entry.unmapped_config.append(f"open ({suffix or 'no suffix'}: no app for it on hud-gym's desktop)")
            return None
        return [{"function": "open_file", "args": [self.map_path(target)]}]

    def _setup_activate_window(self, kind: str, params: dict[str, Any], field: str) -> list[Any] | None:
        name = params.get("window_name")
        if not isinstance(name, str) or not name:
            raise self.fail("'window_name' must be a non-empty string", f"{field}.parameters.window_name")
        if params.get("by_class"):
            self.entry.unmapped_config.append("activate_window.by_class")
            return None
        title = f"^{re.escape(name)}$" if params.get("strict") else re.escape(name)
        self.note("activate_window waits for the window; the focus is not forced")
        return [{"function": "wait_for_window", "args": [title]}]

    # ------------------------------------------------------------------ evaluator

    def evaluate(self, evaluator: Any) -> tuple[list[Any], str | None] | None:
        """``(calls, combine)``; None when any part does not map (recorded)."""
        if not isinstance(evaluator, dict):
            raise self.fail("'evaluator' must be an object", "evaluator")
        postconfig = evaluator.get("postconfig") or []
        if not isinstance(postconfig, list):
            raise self.fail("'postconfig' must be a list", "evaluator.postconfig")
        post_ok = True
        for i, step in enumerate(postconfig):
            if self.setup_step(step, f"evaluator.postconfig[{i}]", phase="postconfig") is None:
                post_ok = False
        funcs = evaluator.get("func")
        if isinstance(funcs, str):
            funcs = [funcs]
            results, expecteds, options = (
                [evaluator.get("result")],
                [evaluator.get("expected")],
                [evaluator.get("options")],
            )
        elif isinstance(funcs, list) and funcs and all(isinstance(f, str) for f in funcs):
            results = _as_list(evaluator.get("result"), len(funcs))
            expecteds = _as_list(evaluator.get("expected"), len(funcs))
            options = _as_list(evaluator.get("options"), len(funcs))
        else:
            raise self.fail("'func' must be a metric name or a list of them", "evaluator.func")
        calls: list[Any] = []
        ok = post_ok
        for i, func in enumerate(funcs):
            call = self.metric(
                func, results[i], expecteds[i], options[i], f"evaluator[{i}]" if len(funcs) > 1 else "evaluator"
            )
            if call is None:
                ok = False
            else:
                calls.append(call)
        if not ok:
            return None
        conj = evaluator.get("conj", "and")
        if conj not in ("and", "or"):
            raise self.fail(f"'conj' must be 'and' or 'or', got {conj!r}", "evaluator.conj")
        return calls, ("min" if conj == "and" else "max") if len(calls) > 1 else None

    def metric(self, func: str, result: Any, expected: Any, options: Any, field: str) -> dict[str, Any] | None:
        unmapped = self.entry.unmapped_evaluator
        if func == "infeasible":
            unmapped.append("infeasible (graded by the agent's FAIL action, which hud-gym has no equivalent of)")
            return None
        if func not in _TEXT_METRICS:
            unmapped.append(func)
            return None
        if options:
            unmapped.append(f"{func}.options")
            return None
        if not isinstance(result, dict) or not isinstance(result.get("type"), str):
            raise self.fail("'result' must be an object with a 'type'", f"{field}.result")
        if not isinstance(expected, dict) or expected.get("type") != "rule":
            kind = expected.get("type") if isinstance(expected, dict) else type(expected).__name__
            unmapped.append(f"{func} with expected type {kind!r} (only 'rule' maps)")
            return None
        rules = expected.get("rules")
        if not isinstance(rules, dict):
            raise self.fail("a 'rule' expectation needs a 'rules' object", f"{field}.expected.rules")
        if func == "exact_match":
            if not isinstance(rules.get("expected"), str):
                raise self.fail("exact_match needs rules.expected (a string)", f"{field}.expected.rules.expected")
            check: dict[str, Any] = {"expected": rules["expected"]}
        else:
            include, exclude = rules.get("include") or [], rules.get("exclude") or []
            if not all(isinstance(t, str) for t in [*include, *exclude]):
                raise self.fail("include/exclude must be lists of strings", f"{field}.expected.rules")
            check = {"include": list(include), "exclude": list(exclude)}
        if result["type"] == "vm_command_line":
            command, shell = self._command_param(result, f"{field}.result")
            return {"function": "command_output_check", "args": [self.map_command(command, shell)], "kwargs": check}
        if result["type"] == "vm_file":
            target = result.get("path")
            if not isinstance(target, str) or not target:
                raise self.fail("a vm_file result needs a 'path'", f"{field}.result.path")
            return {"function": "file_content_check", "args": [self.map_path(target)], "kwargs": check}
        unmapped.append(f"{func} over result type {result['type']!r} (only vm_command_line and vm_file map)")
        return None


def _known_apps() -> frozenset[str]:
    from hud_gym.controllers.ubuntu.apps import KNOWN_APPS

    return frozenset(KNOWN_APPS)


def _quote_with_home(arg: str) -> str:
    if OSWORLD_HOME not in arg:
        return shlex.quote(arg)
    escaped = re.sub(r'([\\"$`])', r"\\\1", arg)
    return '"' + escaped.replace(OSWORLD_HOME, "${HOME}") + '"'


def _as_list(value: Any, count: int) -> list[Any]:
    if isinstance(value, list):
        return (value + [None] * count)[:count]
    return [value] * count


_SETUP_MAPPERS: dict[str, Callable[[ExampleMapper, str, dict[str, Any], str], list[Any] | None]] = {
    "execute": ExampleMapper._setup_command,
    "command": ExampleMapper._setup_command,
    "launch": ExampleMapper._setup_launch,
    "download": ExampleMapper._setup_download,
    "open": ExampleMapper._setup_open,
    "activate_window": ExampleMapper._setup_activate_window,
}
"""The OSWorld setup step types that map, to their mapper (each returns the calls, or ``None``
when the step's options do not map)."""
