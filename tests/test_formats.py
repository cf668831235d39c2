"""Foreign task-set formats (hud_gym.formats): HUD task JSON, WebVoyager, GAIA, OSWorld examples.

The sample files under tests/data/formats are small, realistic files in each format. Converted
tasks are checked against the real function registry and run in the real gyms (QA; Chromium on a
loopback page; the Xvfb desktop with a loopback download).
"""

from __future__ import annotations

import json
import math
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium
import pytest
from local_site import serve_directory

from hud_gym import ResponseAction, TaskFileError, load_taskset
from hud_gym.evaluation import REGISTRY, FunctionContext, resolve_calls
from hud_gym.evaluation.benchmarks import gaia_score
from hud_gym.evaluation.runner import run_evaluate
from hud_gym.formats import (
    ConversionWarning,
    convert,
    convert_gaia,
    convert_hud,
    convert_osworld,
    convert_webvoyager,
    detect_format,
)
from hud_gym.gyms import get_gym
from hud_gym.task import FunctionConfig, Task

DATA = Path(__file__).parent / "data" / "formats"
WEBVOYAGER = DATA / "webvoyager" / "WebVoyager_data.jsonl"
GAIA = DATA / "gaia" / "metadata.jsonl"
HUD = DATA / "hud" / "taskset.json"
HUD_EVALSET = DATA / "hud" / "evalset.json"
HUD_UNKNOWN = DATA / "hud" / "unknown_function.json"
OSWORLD = DATA / "osworld" / "examples"
OSWORLD_MOVE = OSWORLD / "os" / "5b1c9a3e-2d4f-4e6a-9c8b-7a6d5e4f3a21.json"

SAMPLES = {
    "webvoyager": WEBVOYAGER,
    "gaia": GAIA,
    "hud": HUD,
    "hud-evalset": HUD_EVALSET,
    "osworld": OSWORLD,
    "osworld-file": OSWORLD_MOVE,
}


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def loopback() -> Iterator[tuple[str, Path]]:
    """An HTTP server on 127.0.0.1 serving a temporary folder: (base URL, folder)."""
    root = Path(__import__("tempfile").mkdtemp(prefix="hud-gym-formats-site-"))
    (root / "index.html").write_text(
        "<html><head><title>Local recipes</title></head><body><h1>Vegan cookies</h1>"
        "<p>flour, coconut oil, sugar</p></body></html>",
        encoding="utf-8",
    )
    (root / "notes.txt").write_text("meeting at 10\nbring the reports\n", encoding="utf-8")

    with serve_directory(root) as url:
        yield url, root
    shutil.rmtree(root, ignore_errors=True)


def _evaluate(task: Task, response: str | None) -> Any:
    """Run the task's evaluate calls through the registry on a context holding ``response``
    (for evaluators that read only the response)."""
    import asyncio

    from hud_gym.evaluation import run_evaluate

    calls = resolve_calls("evaluate", get_gym(task.gym).name, task.evaluate)
    ctx = FunctionContext(gym=get_gym(task.gym).name, task=task, final_response=response)
    return asyncio.run(run_evaluate(calls, ctx))


# ----------------------------------------------------------------------------- every format


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_converted_call_resolves_in_the_registry(name: str) -> None:
    taskset, report = convert(SAMPLES[name])
    assert len(taskset) == len(report.converted) > 0
    for task in taskset:
        gym = get_gym(task.gym).name
        for phase, calls in (("setup", task.setup), ("evaluate", task.evaluate)):
            bound = resolve_calls(phase, gym, calls)
            assert len(bound) == len(calls or [])
            for call in bound:
                assert call.function.name == REGISTRY.get(phase, gym, call.config.function).name
        assert task.evaluate or task.target, f"{task.id}: every converted task says how it is graded"
        assert task.metadata["source"]["format"] == name.split("-")[0]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (WEBVOYAGER, "webvoyager"),
        (GAIA, "gaia"),
        (GAIA.parent, "gaia"),
        (HUD, "hud"),
        (HUD_EVALSET, "hud"),
        (HUD_UNKNOWN, "hud"),
        (OSWORLD, "osworld"),
        (OSWORLD_MOVE, "osworld"),
        (Path(__file__).parent.parent / "hud_gym" / "suites" / "qa_basic" / "qa-basic.json", "native"),
    ],
)
def test_detect_format_by_content(path: Path, expected: str) -> None:
    assert detect_format(path) == expected


def test_detection_ignores_the_file_name(tmp_path: Path) -> None:
    renamed = tmp_path / "tasks.jsonl"
    shutil.copy(WEBVOYAGER, renamed)
    assert detect_format(renamed) == "webvoyager"
    native = tmp_path / "mine.jsonl"
    native.write_text(json.dumps({"id": "a", "prompt": "2+2?", "target": "4"}) + "\n", encoding="utf-8")
    assert detect_format(native) == "native"
    assert load_taskset(native)[0].target == "4"


def test_load_taskset_reads_every_format_and_takes_an_explicit_one() -> None:
    assert [t.id for t in load_taskset(WEBVOYAGER)] == [r["id"] for r in _jsonl(WEBVOYAGER)]
    assert load_taskset(GAIA, format="gaia")[0].gym == "qa"
    assert load_taskset(GAIA.parent)[0].evaluate[0].function == "gaia_match"
    assert load_taskset(HUD, format="hud").id == "hud-samples-local"
    assert len(load_taskset("qa-basic")) > 0
    with pytest.raises(ValueError, match="unknown task format 'bogus'"):
        load_taskset(GAIA, format="bogus")
    with pytest.raises(ValueError, match="needs a task file or directory"):
        load_taskset("qa-basic", format="gaia")
    with pytest.raises(TaskFileError, match="missing field"):
        load_taskset(WEBVOYAGER, format="gaia")  # a WebVoyager row has no 'Question'


def test_load_taskset_warns_about_skipped_osworld_examples() -> None:
    with pytest.warns(ConversionWarning, match="4 of 5 task"):
        taskset = load_taskset(OSWORLD)
    assert sorted(t.id for t in taskset) == [
        "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        "1f2e3d4c-5b6a-4978-8695-a4b3c2d1e0f9",
        "5b1c9a3e-2d4f-4e6a-9c8b-7a6d5e4f3a21",
        "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b",
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_taskset(GAIA)  # nothing skipped, no warning


# ----------------------------------------------------------------------------- WebVoyager


def test_webvoyager_rows_become_browser_tasks_with_the_row_kept() -> None:
    rows = _jsonl(WEBVOYAGER)
    taskset, report = convert_webvoyager(WEBVOYAGER)
    assert len(taskset) == len(rows) == 4
    for task, row in zip(taskset, rows, strict=True):
        assert task.gym == "hud-browser"
        assert task.id == row["id"]
        assert task.prompt == row["ques"]
        assert task.setup == [FunctionConfig(function="goto", args=[row["web"]])]
        assert task.metadata["source"]["row"] == row
        assert task.metadata["web_name"] == row["web_name"]
    # reference_answer.json next to the data file: golden answers graded, possible ones not.
    by_id = {t.id: t for t in taskset}
    assert by_id["GitHub--11"].evaluate[0].kwargs == {"kind": "golden"}
    assert by_id["GitHub--11"].target == "MIT License"
    assert by_id["Allrecipes--3"].evaluate[0].kwargs == {"kind": "possible"}
    assert by_id["ArXiv--7"].evaluate[0].function == "ungraded"
    assert "no reference answer" in report.get("ArXiv--7").notes[0]


def test_webvoyager_grades_are_honest() -> None:
    by_id = {t.id: t for t in convert_webvoyager(WEBVOYAGER)[0]}
    golden = _evaluate(by_id["GitHub--11"], "The top repository is released under the MIT license.")
    assert (golden.reward, golden.is_error) == (1.0, False)
    wrong = _evaluate(by_id["GitHub--11"], "It uses the Apache License 2.0.")
    assert (wrong.reward, wrong.is_error) == (0.0, False)
    possible = _evaluate(by_id["Allrecipes--3"], "Vegan cookies with flour and coconut oil")
    assert possible.is_error and possible.reward == 0.0 and possible.content.startswith("ungraded:")
    assert possible.info["status"] == "ungraded" and possible.info["reference"].startswith("Vegan Chocolate")
    none = _evaluate(by_id["ArXiv--7"], "312")
    assert none.is_error and none.info == {"status": "ungraded", "response": "312", "reference": None}


def test_webvoyager_without_reference_answers_is_ungraded(tmp_path: Path) -> None:
    alone = tmp_path / "WebVoyager_data.jsonl"
    shutil.copy(WEBVOYAGER, alone)
    taskset, report = convert_webvoyager(alone)
    assert {t.evaluate[0].function for t in taskset} == {"ungraded"}
    assert all(t.target is None for t in taskset)
    assert all(e.notes == ["ungraded: no reference answer"] for e in report.tasks)


@pytest.mark.parametrize(
    ("line", "field", "match"),
    [
        ('{"web_name": "X", "id": "X--0", "ques": "q"}', "web", "missing field"),
        ('{"web_name": "X", "id": "X--0", "ques": "", "web": "https://x"}', "ques", "must not be empty"),
        ('{"web_name": "X", "id": "X--0", "ques": ["q"], "web": "https://x"}', "ques", "expected a string"),
        ('{"web_name": "X", "id": "X--0", "ques": "q", "web": "https://x"', None, "invalid JSON"),
    ],
)
def test_webvoyager_malformed_rows_name_file_line_and_field(
    tmp_path: Path, line: str, field: str | None, match: str
) -> None:
    path = tmp_path / "web.jsonl"
    good = '{"web_name": "Y", "id": "Y--1", "ques": "q", "web": "https://y"}'
    path.write_text(f"{good}\n\n{line}\n", encoding="utf-8")
    with pytest.raises(TaskFileError, match=match) as info:
        convert_webvoyager(path)
    assert info.value.path == str(path) and info.value.line == 3 and info.value.field == field
    assert f"{path}, line 3" in str(info.value)


def test_webvoyager_duplicate_ids_are_an_error(tmp_path: Path) -> None:
    path = tmp_path / "web.jsonl"
    row = '{"web_name": "Y", "id": "Y--1", "ques": "q", "web": "https://y"}'
    path.write_text(f"{row}\n{row}\n", encoding="utf-8")
    with pytest.raises(TaskFileError, match="duplicate task id 'Y--1'") as info:
        convert_webvoyager(path)
    assert info.value.line == 2


@pytest.mark.e2e
@pytest.mark.timeout(90)
def test_webvoyager_task_runs_in_the_browser_gym(tmp_path: Path, loopback: tuple[str, Path], make_env: Any) -> None:
    from hud_gym.controllers.browser.chromium import ChromiumNotFoundError, find_chromium

    try:
        find_chromium()
    except ChromiumNotFoundError as exc:
        pytest.skip(str(exc))
    base, _ = loopback
    data = tmp_path / "WebVoyager_data.jsonl"
    data.write_text(
        json.dumps(
            {
                "web_name": "Local",
                "id": "Local--0",
                "ques": "Which fat do the vegan cookies use?",
                "web": f"{base}/index.html",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    (tmp_path / "reference_answer.json").write_text(
        json.dumps({"Local": {"answers": [{"id": 0, "type": "golden", "ans": "coconut oil"}]}}), encoding="utf-8"
    )
    task = load_taskset(data)[0]
    env = make_env("hud/Browser-v0", task=task)
    _, info = env.reset(seed=0)
    assert info["status"] == "ok" and info["prompt"] == "Which fat do the vegan cookies use?"
    assert env.unwrapped.controller.state.page.url == f"{base}/index.html"  # the setup opened 'web'
    _, reward, terminated, _, info = env.step(ResponseAction(text="They use coconut oil."))
    assert terminated and reward == 1.0 and not info["grade"].is_error
    (tmp_path / "reference_answer.json").unlink()
    ungraded_task = load_taskset(data)[0]
    _, info = env.reset(seed=0, options={"task": ungraded_task})
    _, reward, terminated, _, info = env.step(ResponseAction(text="coconut oil"))
    assert terminated and math.isnan(reward) and info["status"] == "eval_error"  # ungraded: no reward, not a 0
    assert info["grade"].is_error and info["grade"].info["status"] == "ungraded"
    assert info["grade"].info["response"] == "coconut oil"


# ----------------------------------------------------------------------------- GAIA


def test_gaia_rows_become_qa_tasks() -> None:
    rows = _jsonl(GAIA)
    taskset, report = convert_gaia(GAIA)
    assert [t.id for t in taskset] == [r["task_id"] for r in rows]
    for task, row in zip(taskset, rows, strict=True):
        assert task.gym == "qa" and task.prompt == row["Question"]
        assert task.metadata["source"]["row"] == row and task.metadata["level"] == row["Level"]
    inventory, gases, image, private = taskset
    assert inventory.target == "1,250" and inventory.evaluate == [FunctionConfig(function="gaia_match", args=["1,250"])]
    csv = (GAIA.parent / "inventory.csv").resolve()
    assert inventory.files == {"inventory.csv": str(csv)}
    assert inventory.setup[0].function == "show_passage" and csv.read_text() in inventory.setup[0].args[0]
    assert gases.setup is None and gases.files is None
    # A binary attachment is listed, not shown, and the report says so.
    assert image.setup is None and image.files == {"squares.png": str((GAIA.parent / "squares.png").resolve())}
    assert image.metadata["attachment"]["shown"] is False
    assert "not shown to the agent" in report.get(image.id).notes[0]
    # The test split's private answer is not graded.
    assert private.target is None and private.evaluate[0].function == "ungraded"
    grade = _evaluate(private, "Le Guin")
    assert grade.is_error and "private" in grade.content


@pytest.mark.parametrize(
    ("response", "answer", "matched", "method"),
    [
        ("1250", "1,250", False, "list"),  # GAIA splits an answer holding ',' into a list
        ("$1,250", "1250", True, "number"),
        ("1250.0", "1250", True, "number"),
        ("12.5%", "12.5", True, "number"),
        ("about 1250", "1250", False, "number"),
        ("Helium;neon , ARGON", "helium, neon, argon", True, "list"),
        ("helium, neon", "helium, neon, argon", False, "list"),
        ("3, 4.0", "3, 4", True, "list"),
        ("Sea gull!", "seagull", True, "string"),
        ("The Seagull", "seagull", False, "string"),
        ("St. Petersburg", "Saint Petersburg", False, "string"),
    ],
)
def test_gaia_quasi_exact_match(response: str, answer: str, matched: bool, method: str) -> None:
    assert gaia_score(response, answer) == (matched, method)


def test_gaia_task_runs_in_the_qa_gym(make_env: Any) -> None:
    inventory, gases = convert_gaia(GAIA)[0][:2]
    env = make_env("hud/QA-v0", task=inventory)
    obs, info = env.reset(seed=0)
    assert "B,apples,250" in obs["text"]  # the attached CSV is shown as the passage
    _, reward, terminated, _, info = env.step(ResponseAction(text="1,250"))
    assert terminated and reward == 1.0
    env.reset(seed=0, options={"task": gases})
    _, reward, _, _, info = env.step(ResponseAction(text="Helium; Neon; Argon"))
    assert reward == 1.0 and info["grade"].info["method"] == "list"
    env.reset(seed=0, options={"task": gases})
    _, reward, _, _, info = env.step(ResponseAction(text="helium, neon, krypton"))
    assert reward == 0.0 and not info["grade"].is_error


@pytest.mark.parametrize(
    ("row", "field", "match"),
    [
        ({"task_id": "t", "Final answer": "1", "file_name": ""}, "Question", "missing field"),
        ({"task_id": "t", "Question": "q", "file_name": ""}, "Final answer", "missing field"),
        (
            {"task_id": "t", "Question": "q", "Final answer": "1", "file_name": "nowhere.xlsx"},
            "file_name",
            "attached file 'nowhere.xlsx' is not in",
        ),
        ({"task_id": "t", "Question": "q", "Final answer": "1", "file_name": 7}, "file_name", "expected a string"),
        ({"task_id": ["t"], "Question": "q", "Final answer": "1"}, "task_id", "expected a string"),
    ],
)
def test_gaia_malformed_rows_name_file_line_and_field(
    tmp_path: Path, row: dict[str, Any], field: str, match: str
) -> None:
    path = tmp_path / "metadata.jsonl"
    good = {"task_id": "ok", "Question": "2+2?", "Final answer": "4", "file_name": ""}
    path.write_text(json.dumps(good) + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(TaskFileError, match=match) as info:
        convert_gaia(path)
    assert (info.value.path, info.value.line, info.value.field) == (str(path), 2, field)


# ----------------------------------------------------------------------------- HUD task JSON


def test_hud_tasks_convert_with_their_extra_fields_in_metadata() -> None:
    original = json.loads(HUD.read_text(encoding="utf-8"))["tasks"]
    taskset, report = convert_hud(HUD)
    assert taskset.id == "hud-samples-local" and taskset.description.startswith("HUD SDK 0.2-style")
    assert [t.gym for t in taskset] == ["qa", "hud-browser", "hud-browser", "hud-ubuntu"]
    capital, capybara, form, _ = taskset
    assert capital.metadata["system_prompt"] == "Answer with one word." and capital.metadata["partial"] is False
    assert capybara.setup == [
        FunctionConfig(function="goto", args=["https://en.wikipedia.org/wiki/Capybara"]),
        FunctionConfig(function="browser.maximize"),
    ]
    assert capybara.evaluate == [FunctionConfig(function="contains_text", args=[["grasses"]])]
    assert form.metadata["sensitive_data"] == {"127.0.0.1": {"name": "Ada"}}
    assert [t.metadata["source"]["row"] for t in taskset] == original
    assert report.get("form-fill").notes == ["'sensitive_data' kept in task.metadata"]
    evalset, _ = convert_hud(HUD_EVALSET)
    assert [t.id for t in evalset] == ["e1", "e2"] and evalset[1].target == ["red", "green", "blue"]


def test_hud_qa_task_runs_in_the_qa_gym(make_env: Any) -> None:
    capital = convert_hud(HUD)[0][0]
    env = make_env("hud/QA-v0", task=capital)
    env.reset(seed=0)
    _, reward, terminated, _, _ = env.step(ResponseAction(text="Paris"))
    assert terminated and reward == 1.0


def test_hud_unknown_function_names_file_index_and_name() -> None:
    with pytest.raises(TaskFileError, match="unknown setup function 'sheets_from_xlsx'") as info:
        convert_hud(HUD_UNKNOWN)
    assert (info.value.path, info.value.index, info.value.field) == (str(HUD_UNKNOWN), 1, "setup[0]")
    assert str(info.value).startswith(f"{HUD_UNKNOWN}, task 1 ('sheet'), field 'setup[0]'")


@pytest.mark.parametrize(
    ("task", "field", "match"),
    [
        ({"prompt": "p", "gym": "OSWorld-Ubuntu"}, "gym", "format='osworld'"),
        ({"prompt": "p", "gym": "local-chrome"}, "gym", "unknown gym 'local-chrome'"),
        (
            {"prompt": "p", "gym": {"type": "public", "location": "local", "image_or_build_context": "./env"}},
            "gym",
            "CustomGym",
        ),
        (
            {"prompt": "p", "mcp_config": {"hud": {"url": "x"}}, "setup_tool": {"name": "setup"}},
            "mcp_config",
            "MCP task",
        ),
        ({"prompt": "p", "rubric": "x"}, "rubric", "unknown HUD task field"),
        (
            {"prompt": "p", "gym": "qa", "evaluate": [["response_is", "a", True, True, "extra"]]},
            "evaluate[0]",
            "response_is",
        ),
        # JSON has no tuples: a flat list is a list of calls, so this is two calls, the first without its argument.
        (
            {"prompt": "p", "gym": "qa", "evaluate": ["response_includes", "Paris"]},
            "evaluate[0]",
            "missing a required argument: 'texts'",
        ),
        ({"gym": "qa"}, "prompt", "Field required"),
    ],
)
def test_hud_bad_tasks_are_reported(tmp_path: Path, task: dict[str, Any], field: str, match: str) -> None:
    path = tmp_path / "hud.json"
    path.write_text(
        json.dumps({"evalset": [{"prompt": "fine", "gym": "qa", "system_prompt": "s"}, task]}), encoding="utf-8"
    )
    with pytest.raises(TaskFileError, match=match) as info:
        convert_hud(path)
    assert (info.value.index, info.value.field) == (1, field)


def test_hud_jsonl_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "hud.jsonl"
    path.write_text(
        '{"prompt": "a", "gym": "qa", "system_prompt": "s"}\n{"prompt": "b", "gym": "qa", '
        '"evaluate": [["no_such_check"]]}\n',
        encoding="utf-8",
    )
    assert detect_format(path) == "hud"
    with pytest.raises(TaskFileError, match="no_such_check") as info:
        load_taskset(path)
    assert (info.value.line, info.value.field) == (2, "evaluate[0]")


# ----------------------------------------------------------------------------- OSWorld


def test_osworld_report_says_exactly_what_did_not_map() -> None:
    taskset, report = convert_osworld(OSWORLD)
    assert len(report.tasks) == 5 and len(taskset) == 4
    (chrome,) = report.skipped
    assert chrome.id == "7c6b5a4f-3e2d-4c1b-9a0f-8e7d6c5b4a39"
    assert chrome.unmapped_evaluator == [
        "config step chrome_open_tabs: Chromium's tabs over CDP are not wired to the suite yet",
        "getter bookmarks: Chromium's CDP or app-specific getter: not yet",
        "metric is_expected_bookmarks: not yet",
    ]
    assert chrome.reason.startswith("does not run here: config step chrome_open_tabs")
    assert chrome.file.endswith("chrome/7c6b5a4f-3e2d-4c1b-9a0f-8e7d6c5b4a39.json")


def test_osworld_example_keeps_its_own_steps_and_evaluator() -> None:
    original = json.loads(OSWORLD_MOVE.read_text(encoding="utf-8"))
    taskset, report = convert_osworld(OSWORLD_MOVE)
    task = taskset[0]
    assert task.gym == "hud-ubuntu" and task.prompt == original["instruction"] and task.id == original["id"]
    assert task.setup == [FunctionConfig(function="osworld_config", args=[original["config"]])]
    assert task.evaluate == [FunctionConfig(function="osworld_evaluate", args=[original["evaluator"]])]
    assert task.metadata["benchmark"] == "osworld" and task.metadata["domain"] == "os"
    assert task.metadata["requires"] == {"allow_shell": True, "allow_absolute_paths": False}
    assert task.metadata["source"]["row"] == original and task.metadata["related_apps"] == ["os", "terminal"]
    assert "needs allow_shell=True (or the ubuntu container)" in report.tasks[0].notes
    launch = convert_osworld(OSWORLD / "os" / "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b.json")[0][0]
    assert launch.metadata["requires"]["allow_shell"] is False  # xterm is one of the desktop's own apps


@pytest.mark.parametrize(
    ("example", "field", "match"),
    [
        ({"id": "x", "instruction": "i", "config": [{"parameters": {}}]}, "config[0]", "with a 'type'"),
        (
            {"id": "x", "instruction": "i", "config": [{"type": "execute", "parameters": {"command": 5}}]},
            "config[0].parameters.command",
            "'command' must be",
        ),
        ({"id": "x", "instruction": "i", "config": {"type": "sleep"}}, "config", "must be a list"),
        ({"id": "", "instruction": "i", "config": []}, "id", "non-empty string"),
        ({"id": "x", "instruction": "i", "config": [], "evaluator": {"func": 3}}, "evaluator.func", "'func' must be"),
        (
            {"id": "x", "instruction": "i", "config": [], "evaluator": {"func": "exact_match", "conj": "xor"}},
            "evaluator.conj",
            "'conj' must be 'and' or 'or'",
        ),
    ],
)
def test_osworld_malformed_examples_name_file_and_field(
    tmp_path: Path, example: dict[str, Any], field: str, match: str
) -> None:
    path = tmp_path / "example.json"
    path.write_text(json.dumps(example), encoding="utf-8")
    with pytest.raises(TaskFileError, match=match) as info:
        convert_osworld(path)
    assert (info.value.path, info.value.field) == (str(path), field)


@pytest.mark.e2e
@pytest.mark.timeout(120)
def test_osworld_example_runs_on_the_desktop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hud_gym.controllers.ubuntu.display import DesktopNotAvailableError, require_programs
    from hud_gym.suites.osworld.files import url_key

    try:
        require_programs("openbox")
    except DesktopNotAvailableError as exc:
        pytest.skip(str(exc))
    example = json.loads(OSWORLD_MOVE.read_text(encoding="utf-8"))
    url = example["config"][1]["parameters"]["files"][0]["url"]
    mirror = tmp_path / "mirror"
    (mirror / "by-url").mkdir(parents=True)
    (mirror / "by-url" / url_key(url)).write_text("meeting at 10\nbring the reports\n", encoding="utf-8")
    monkeypatch.setenv("HUD_GYM_OSWORLD_FILES", str(mirror))
    monkeypatch.setenv("HUD_GYM_HOME", str(tmp_path / "home"))
    task = convert_osworld(OSWORLD_MOVE)[0][0]
    env = gymnasium.make("hud/Ubuntu-v0", task=task, allow_shell=True, in_container=False)
    try:
        _, info = env.reset(seed=0)
        assert info["status"] == "ok"
        controller = env.unwrapped.controller
        notes = controller.state.home / "Desktop" / "notes.txt"
        assert notes.read_text(encoding="utf-8") == "meeting at 10\nbring the reports\n"  # from the mirror, offline
        titles = [w["title"] for w in env.unwrapped._runner.run(controller.desktop.windows(), timeout=10)]
        assert any("notes.txt" in t for t in titles)  # 'open' started gedit on the file
        before = env.unwrapped.evaluate()
        assert before.reward == 0.0 and not before.is_error
        # What the agent would do from its terminal: the grade reads the real files.
        (controller.state.home / "Desktop" / "reports").mkdir()
        notes.rename(controller.state.home / "Desktop" / "reports" / "notes.txt")
        after = env.unwrapped.evaluate()
        assert after.reward == 1.0 and not after.is_error, after.content
        moved = "~/Desktop/reports/notes.txt"
        cases = [
            ({"include": ["meeting"], "exclude": ["cancelled"]}, 1.0, "passes"),
            ({"expected": "meeting at 10"}, 0.0, "expected exactly"),
        ]
        for kwargs, reward, content in cases:
            grade = _run_on_desktop(env, "file_content_check", [moved], kwargs)
            assert grade.reward == reward and content in grade.content
    finally:
        env.close()


def _run_on_desktop(env: Any, function: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """Run a registered desktop evaluate function on the env's live controller (on its loop)."""
    call = REGISTRY.resolve("evaluate", "ubuntu", FunctionConfig(function=function, args=args, kwargs=kwargs))
    ctx = FunctionContext(gym="ubuntu", controller=env.unwrapped.controller)
    return env.unwrapped._runner.run(run_evaluate([call], ctx), timeout=30)


@pytest.mark.e2e
@pytest.mark.timeout(120)
def test_osworld_commands_need_the_shell(tmp_path: Path) -> None:
    from hud_gym.controllers.ubuntu.display import DesktopNotAvailableError, require_programs

    try:
        require_programs("openbox")
    except DesktopNotAvailableError as exc:
        pytest.skip(str(exc))
    example = {
        "id": "shell",
        "instruction": "Say hi.",
        "config": [],
        "evaluator": {
            "func": "check_include_exclude",
            "result": {"type": "vm_command_line", "command": "echo hi"},
            "expected": {"type": "rule", "rules": {"include": ["hi"]}},
        },
    }
    path = tmp_path / "example.json"
    path.write_text(json.dumps(example), encoding="utf-8")
    task = convert_osworld(path)[0][0]
    env = gymnasium.make("hud/Ubuntu-v0", task=task, allow_shell=False, in_container=False)
    try:
        env.reset(seed=0)
        grade = env.unwrapped.evaluate()
        assert grade.is_error and "allow_shell=True" in grade.content
    finally:
        env.close()


def test_osworld_paths_outside_the_vm_home_ask_for_absolute_paths(tmp_path: Path) -> None:
    example = [
        {
            "id": "argv",
            "instruction": "i",
            "config": [
                {
                    "type": "execute",
                    "parameters": {"command": ["python", "-c", "import pyautogui; pyautogui.hotkey('ctrl', 's')"]},
                },
                {"type": "download", "parameters": {"files": [{"url": "https://x/y", "path": "/srv/data/y.txt"}]}},
            ],
            "evaluator": {
                "func": "exact_match",
                "result": {"type": "rule", "rules": "a"},
                "expected": {"type": "rule", "rules": {"expected": "a"}},
            },
        }
    ]
    path = tmp_path / "examples.json"
    path.write_text(json.dumps(example), encoding="utf-8")
    taskset, report = convert_osworld(path)
    # A keystroke script is read, never run: it needs no shell.
    assert taskset[0].metadata["requires"] == {"allow_shell": False, "allow_absolute_paths": True}
    assert "absolute path '/srv/data/y.txt' needs allow_absolute_paths=True" in report.tasks[0].notes


def test_download_file_takes_only_http_urls() -> None:
    import asyncio

    call = REGISTRY.resolve(
        "setup", "ubuntu", FunctionConfig(function="download_file", args=["file:///etc/passwd", "p"])
    )
    with pytest.raises(ValueError, match="http or https URL"):
        asyncio.run(call.run(FunctionContext(gym="ubuntu")))
