"""Malformed task files (hud_gym.task_files): every one, in every format, is one TaskFileError
naming the file, the line or task index and the problem; a seeded fuzz over mutated task files
checks that nothing else ever comes out of ``load_taskset``."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hud_gym.formats import ConversionWarning
from hud_gym.task import TaskFileError, TaskSet
from hud_gym.tasksets import load_taskset

DATA = Path(__file__).parent / "data" / "formats"
TASK = {"id": "a", "prompt": "p", "gym": "qa", "evaluate": [["response_includes", "x"]]}
DEEP = "[" * 5000 + "]" * 5000


def _yaml_bomb(levels: int = 7) -> str:
    lines = ["tasks:", "- prompt: p", "  metadata:", "    a: &a [x,x,x,x,x,x,x,x,x,x]"]
    for previous, name in zip("abcdefgh", "bcdefghi"[: levels - 1], strict=False):
        lines.append(f"    {name}: &{name} [" + ", ".join([f"*{previous}"] * 10) + "]")
    return "\n".join(lines) + "\n"


# (file name, content, what the message must say)
MALFORMED: list[tuple[str, str | bytes, list[str]]] = [
    ("deep.json", '[{"prompt": "p", "metadata": {"x": ' + DEEP + "}}]", ["line 1", "nested deeper than 64"]),
    ("deep.jsonl", json.dumps(TASK) + '\n{"prompt": "p", "metadata": ' + DEEP + "}\n", ["line 2", "nested deeper"]),
    ("deep.yaml", "tasks:\n- prompt: p\n  metadata: {x: " + DEEP + "}\n", ["line 3", "nested deeper"]),
    ("latin1.json", b'[{"prompt": "caf\xe9"}]', ["line 1", "not UTF-8", "0xe9"]),
    ("latin1.jsonl", json.dumps(TASK).encode() + b'\n\n{"prompt": "\xff"}\n', ["line 3", "not UTF-8"]),
    ("dup.json", json.dumps([TASK, {**TASK, "id": "b"}, TASK]), ["task 2", "duplicate task id 'a'", "also task 0"]),
    (
        "dup.jsonl",
        "\n".join(json.dumps(t) for t in (TASK, {**TASK, "id": "b"}, TASK)),
        ["line 3", "task 2", "duplicate task id 'a'", "also task 0, line 1"],
    ),
    (
        "dup.yaml",
        "tasks:\n- {id: a, prompt: p}\n- {id: b, prompt: q}\n- {id: a, prompt: r}\n",
        ["line 4", "task 2", "duplicate task id 'a'", "also task 0, line 2"],
    ),
    ("nan.json", '[{"prompt": "p", "metadata": {"x": [1, NaN]}}]', ["task 0", "metadata.x[1]", "NaN"]),
    ("inf.jsonl", '{"prompt": "p", "metadata": {"x": -Infinity}}', ["line 1", "metadata.x", "Infinity"]),
    ("overflow.json", '[{"prompt": "p"}, {"prompt": "q", "metadata": {"x": 1e999}}]', ["task 1", "metadata.x", "inf"]),
    ("bigint.json", '[{"prompt": "p", "metadata": {"x": ' + "7" * 5000 + "}}]", ["line 1", "integer too long"]),
    ("nan.yaml", "- prompt: p\n- prompt: q\n  metadata: {x: .nan}\n", ["line 2", "task 1", "metadata.x", "nan"]),
    ("bomb.yaml", _yaml_bomb(), ["alias bomb"]),
    ("recursive.yaml", "tasks:\n- prompt: p\n  metadata: &m {self: *m}\n", ["line 3", "recursive"]),
    ("empty.yaml", "", ["no tasks"]),
    ("listid.json", json.dumps({"id": ["x"], "tasks": [TASK]}), ["field 'id'", "expected a string, got list"]),
    ("intdescription.yaml", "description: 5\ntasks: []\n", ["field 'description'", "got int"]),
]


@pytest.mark.parametrize(("name", "content", "needles"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_each_malformed_task_file_is_one_task_file_error(
    tmp_path: Path, name: str, content: str | bytes, needles: list[str]
) -> None:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(TaskFileError) as info:
        load_taskset(path)
    message = str(info.value)
    assert message.startswith(str(path)) and "\n" not in message
    for needle in needles:
        assert needle in message, message


def test_a_file_over_the_size_limit_is_refused_before_it_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(json.dumps({**TASK, "id": str(i)}) for i in range(100)))
    assert len(load_taskset(path)) == 100
    monkeypatch.setenv("HUD_GYM_MAX_TASK_FILE_BYTES", "1000")
    with pytest.raises(TaskFileError, match="larger than 1000 bytes.*HUD_GYM_MAX_TASK_FILE_BYTES"):
        load_taskset(path)


def test_a_utf8_bom_and_yaml_anchors_are_fine(tmp_path: Path) -> None:
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps([TASK]).encode())
    assert [t.id for t in load_taskset(bom)] == ["a"]
    anchors = tmp_path / "anchors.yaml"
    anchors.write_text(
        "tasks:\n- {id: a, prompt: p, evaluate: &grade [[response_includes, x]]}\n"
        "- {id: b, prompt: q, evaluate: *grade}\n"
    )
    assert [t.evaluate[0].args for t in load_taskset(anchors)] == [["x"], ["x"]]


@pytest.mark.parametrize(
    ("fmt", "name", "content", "needles"),
    [
        (
            "hud",
            "hud.json",
            '{"evalset": [{"prompt": "p", "system_prompt": "s", "metadata": ' + DEEP + "}]}",
            ["nested deeper"],
        ),
        (
            "hud",
            "hud.json",
            json.dumps([{**TASK, "system_prompt": "s"}, {**TASK, "system_prompt": "t"}]),
            ["task 1", "duplicate task id 'a'", "also task 0"],
        ),
        (
            "webvoyager",
            "wv.jsonl",
            b'{"web_name": "A", "id": "A--1", "ques": "q", "web": "https://a.test/\xff"}\n',
            ["line 1", "not UTF-8"],
        ),
        (
            "webvoyager",
            "wv.jsonl",
            '{"web_name": "A", "id": "A--1", "ques": "q", "web": "https://a.test/", "x": NaN}\n',
            ["line 1", "NaN"],
        ),
        (
            "gaia",
            "metadata.jsonl",
            "\n".join(json.dumps({"task_id": "t", "Question": "q", "Final answer": "1"}) for _ in "ab"),
            ["line 2", "duplicate task id 't'", "also task 0, line 1"],
        ),
        (
            "osworld",
            "example.json",
            '{"id": "x", "instruction": "i", "config": [], "evaluator": ' + DEEP + "}",
            ["nested deeper"],
        ),
    ],
)
def test_other_formats_give_the_same_errors(
    tmp_path: Path, fmt: str, name: str, content: str | bytes, needles: list[str]
) -> None:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    for format_name in (fmt, None):  # forced and detected
        with pytest.raises(TaskFileError) as info:
            load_taskset(path, format=format_name)
        for needle in [str(path), *needles]:
            assert needle in str(info.value), str(info.value)


def test_a_gaia_attachment_must_be_next_to_the_metadata_file(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("the host's secret")
    folder = tmp_path / "gaia"
    folder.mkdir()
    (folder / "metadata.jsonl").write_text(
        json.dumps({"task_id": "t", "Question": "q", "Final answer": "1", "file_name": "../secret.txt"}) + "\n"
    )
    with pytest.raises(TaskFileError, match=r"line 1, task 0, field 'file_name': .*outside"):
        load_taskset(folder)


# ---------------------------------------------------------------------- fuzz

SEEDS: list[tuple[str, str]] = [
    (
        "tasks.json",
        json.dumps({"id": "s", "description": "d", "tasks": [TASK, {**TASK, "id": "b", "metadata": {"k": [1, 2.5]}}]}),
    ),
    ("tasks.jsonl", "\n".join(json.dumps({**TASK, "id": i}) for i in "abc") + "\n"),
    (
        "tasks.yaml",
        "id: s\ntasks:\n- id: a\n  prompt: p\n  evaluate: &e [[response_includes, x]]\n- {id: b, prompt: q, evaluate: *e}\n",
    ),
    ("hud.json", (DATA / "hud" / "taskset.json").read_text()),
    ("WebVoyager_data.jsonl", "\n".join((DATA / "webvoyager" / "WebVoyager_data.jsonl").read_text().splitlines()[:3])),
    (
        "metadata.jsonl",
        "\n".join(
            line for line in (DATA / "gaia" / "metadata.jsonl").read_text().splitlines() if '"file_name": ""' in line
        ),
    ),
    ("osworld.json", (DATA / "osworld" / "examples" / "os" / "5b1c9a3e-2d4f-4e6a-9c8b-7a6d5e4f3a21.json").read_text()),
]
HAZARDS = [
    "[" * 3000,
    '{"a": ' * 2000,
    "NaN",
    "-Infinity",
    "1e999",
    "9" * 5000,
    "\ufeff",
    "\x00",
    "\t",
    '"',
    "\\",
    "\\ud800",
    "&a [*a]",
    "*nope",
    "!!python/object/apply:os.system ['id']",
    "\n---\n",
    "\n- ",
    ": ",
    "null",
    "[]",
    "{}",
    "0",
    "true",
    '"id": "a", ',
    "\n" + json.dumps(TASK) + "\n",
    "x--99999999999999999999",
    "²",
]
RAW_HAZARDS = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xfe\xff\x00"]


@st.composite
def mutated_files(draw: st.DrawFn) -> tuple[str, bytes]:
    name, text = draw(st.sampled_from(SEEDS))
    data = text.encode()
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["hazard", "raw", "cut", "delete", "repeat"]))
        if kind == "hazard":
            data = data[:at] + draw(st.sampled_from(HAZARDS)).encode("utf-8", "surrogatepass") + data[at:]
        elif kind == "raw":
            data = data[:at] + draw(st.sampled_from(RAW_HAZARDS)) + data[at:]
        elif kind == "cut":
            data = data[:at]
        elif kind == "delete":
            data = data[:at] + data[at + draw(st.integers(1, 40)) :]
        else:
            end = at + draw(st.integers(1, 200))
            data = data[:end] + data[at:end] * draw(st.integers(1, 3)) + data[end:]
    return name, data


@pytest.mark.timeout(300)
@settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(case=mutated_files())
def test_fuzzed_task_files_load_or_raise_task_file_error(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[str, bytes]
) -> None:
    name, data = case
    folder = tmp_path_factory.mktemp("fuzz")
    path = folder / name
    path.write_bytes(data)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConversionWarning)
            taskset = load_taskset(path)
    except TaskFileError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc), str(exc)
    else:
        assert isinstance(taskset, TaskSet)
        json.dumps([task.to_dict() for task in taskset], allow_nan=False)  # every loaded task is plain JSON
    finally:
        shutil.rmtree(folder, ignore_errors=True)
