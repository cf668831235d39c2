"""Task files fail at load, not at reset (issue 15): an unknown setup or evaluate function (or
arguments that do not bind) is a TaskFileError from ``load_taskset`` naming the file, the task
index and the name; JSON's tuple trap ``"setup": ["goto", "google.com"]`` gets an error that shows
the ``[["goto", "google.com"]]`` form. Only the function modules of the gyms a file names are
imported to check it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import hud_gym
from hud_gym import TaskFileError


def write(tmp_path: Path, tasks: list[dict[str, Any]], name: str = "tasks.json") -> Path:
    path = tmp_path / name
    if name.endswith(".jsonl"):
        path.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    else:
        path.write_text(json.dumps(tasks))
    return path


GOOD = {"id": "ok", "prompt": "Capital of France?", "gym": "qa", "evaluate": [["response_includes", "Paris"]]}


@pytest.mark.parametrize("name", ["tasks.json", "tasks.jsonl"])
def test_an_unknown_evaluate_function_fails_at_load_naming_file_index_and_name(tmp_path: Path, name: str) -> None:
    bad = {"id": "bad", "prompt": "p", "gym": "qa", "evaluate": [["response_inclodes", "Paris"]]}
    path = write(tmp_path, [GOOD, bad], name)
    with pytest.raises(TaskFileError) as caught:
        hud_gym.load_taskset(path)
    message = str(caught.value)
    assert str(path) in message and "task 1" in message and "'response_inclodes'" in message
    assert "evaluate[0]" in message and "Did you mean 'response_includes'" in message
    assert caught.value.index == 1


def test_an_unknown_setup_function_and_bad_arguments_fail_at_load(tmp_path: Path) -> None:
    unknown = {"prompt": "p", "gym": "hud-browser", "setup": [["navigate_to", "http://127.0.0.1/"]]}
    with pytest.raises(TaskFileError, match=r"task 0, field 'setup\[0\]': unknown setup function 'navigate_to'"):
        hud_gym.load_taskset(write(tmp_path, [unknown]))
    no_args = {"prompt": "p", "gym": "qa", "evaluate": ["response_includes"]}
    with pytest.raises(TaskFileError, match="missing a required argument"):
        hud_gym.load_taskset(write(tmp_path, [no_args], "args.json"))


def test_an_env_given_a_bad_task_file_fails_when_made_not_at_reset(tmp_path: Path) -> None:
    path = write(tmp_path, [{"prompt": "p", "gym": "qa", "evaluate": ["nope"]}])
    with pytest.raises(TaskFileError, match="unknown evaluate function 'nope'"):
        hud_gym.make("hud/QA-v0", taskset=str(path))


def test_the_json_tuple_trap_shows_the_one_call_form(tmp_path: Path) -> None:
    trap = {"prompt": "Search.", "gym": "hud-browser", "setup": ["goto", "google.com"]}
    with pytest.raises(TaskFileError) as caught:
        hud_gym.load_taskset(write(tmp_path, [GOOD, trap]))
    message = str(caught.value)
    assert "task 1" in message and '[["goto", "google.com"]]' in message, message
    url = {"prompt": "Search.", "gym": "hud-browser", "setup": ["goto", "https://google.com"]}
    with pytest.raises(TaskFileError, match=r'\[\["goto", "https://google.com"\]\]'):
        hud_gym.load_taskset(write(tmp_path, [url], "url.json"))


def test_the_one_call_form_and_a_true_sequence_of_names_load(tmp_path: Path) -> None:
    good = {"prompt": "Search.", "gym": "hud-browser", "setup": [["goto", "https://example.com"]]}
    taskset = hud_gym.load_taskset(write(tmp_path, [good, GOOD]))
    assert taskset[0].setup is not None and taskset[0].setup[0].args == ["https://example.com"]
    assert len(taskset) == 2


def test_checking_a_qa_file_imports_no_browser_or_desktop_module(tmp_path: Path) -> None:
    path = write(tmp_path, [GOOD])
    code = (
        "import sys, hud_gym; ts = hud_gym.load_taskset(sys.argv[1]); "
        "heavy = sorted(m for m in sys.modules if m.startswith(('playwright', 'Xlib', 'hud_gym.controllers.browser', "
        "'hud_gym.controllers.ubuntu'))); print(len(ts), heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "1 []", out.stdout + out.stderr
