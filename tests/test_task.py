"""Tasks, function configs, task sets and task files (hud_gym.task, hud_gym.tasksets)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hud_gym.task import FunctionConfig, Task, TaskFileError, TaskSet, expand_config
from hud_gym.tasksets import available_tasksets, get_task, load_taskset, register_taskset, resolve_task, resolve_taskset

FC = FunctionConfig

# ----------------------------------------------------------------------------- function configs


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ("response_is", [FC(function="response_is")]),
        ("browser.maximize", [FC(function="browser.maximize")]),
        (("goto", "https://x", 3), [FC(function="goto", args=["https://x", 3])]),
        (("name",), [FC(function="name")]),
        ({"function": "f", "args": [1, 2]}, [FC(function="f", args=[1, 2])]),
        ({"function": "f", "args": [1], "kwargs": {"k": "v"}}, [FC(function="f", args=[1], kwargs={"k": "v"})]),
        ({"function": "f", "kwargs": {"k": "v"}}, [FC(function="f", kwargs={"k": "v"})]),
        ({"function": "f"}, [FC(function="f", args=[])]),
        ({"function": "f", "args": None, "kwargs": None}, [FC(function="f")]),
        ({"function": "f", "args": "one"}, [FC(function="f", args=["one"])]),
        ({"function": "f", "args": 5}, [FC(function="f", args=[5])]),
        (
            {"function": "f", "args": ["a", "b"], "id": "c1", "metadata": {"m": 1}},
            [FC(function="f", args=["a", "b"], id="c1", metadata={"m": 1})],
        ),
        (FC(function="f", args=[1]), [FC(function="f", args=[1])]),
        ([["goto", "x"]], [FC(function="goto", args=["x"])]),
        ([["goto", "x"], ["wait", 5]], [FC(function="goto", args=["x"]), FC(function="wait", args=[5])]),
        (None, []),
        ([], []),
    ],
)
def test_function_config_forms(config, expected):
    assert expand_config(config) == expected


def test_mixed_list_of_every_form_keeps_order():
    config = [
        "a",
        "browser.b",
        ("c", 1),
        ("d",),
        ["e", "x", "y"],
        {"function": "f", "args": [2]},
        {"function": "g", "kwargs": {"k": 1}},
        {"function": "h"},
        {"function": "i", "args": "z"},
        FC(function="j", args=[3]),
    ]
    result = expand_config(config)
    assert [c.function for c in result] == ["a", "browser.b", "c", "d", "e", "f", "g", "h", "i", "j"]
    assert [c.args for c in result] == [[], [], [1], [], ["x", "y"], [2], [], [], ["z"], [3]]
    assert result[6].kwargs == {"k": 1}


def test_task_normalises_setup_and_evaluate():
    task = Task(prompt="p", setup="qa.show_passage", evaluate=("response_includes", "Paris"))
    assert task.setup == [FC(function="qa.show_passage")]
    assert task.evaluate == [FC(function="response_includes", args=["Paris"])]
    assert Task(prompt="p").setup is None and Task(prompt="p").evaluate is None
    from_json = Task.from_dict(json.loads('{"prompt": "p", "setup": [["goto", "x"], "maximize"]}'))
    assert from_json.setup == [FC(function="goto", args=["x"]), FC(function="maximize")]


def test_function_config_str():
    assert str(FC(function="f", args=[1, "a"], kwargs={"k": True})) == "f(1, 'a', k=True)"


@pytest.mark.parametrize("name", ["1abc", "a..b", "", "a.", ".a", "a b", "a-b", "import os"])
def test_invalid_function_names(name):
    with pytest.raises(ValueError) as info:
        expand_config(name)
    assert "is not a function name" in str(info.value)
    assert repr(name) in str(info.value)
    with pytest.raises(ValueError, match="is not a function name"):
        Task(prompt="p", evaluate=[[name, 1]])


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"args": [1]}, "needs a 'function' key"),
        ({"function": "f", "bogus": 1}, "unknown key(s) ['bogus']"),
        (5, "cannot read a function config from int"),
        ((), "must start with the function name"),
        ((1, 2), "must start with the function name"),
        (["ok", 5], "item 1: cannot read a function config from int"),
        (["ok", {"args": []}], "item 1: a dict config needs a 'function' key"),
    ],
)
def test_malformed_configs_are_rejected_clearly(config, message):
    with pytest.raises(ValueError) as info:
        expand_config(config)
    assert message in str(info.value)


def test_task_rejects_unknown_fields():
    with pytest.raises(ValueError, match="colour"):
        Task(prompt="p", colour="red")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="prompt"):
        Task()  # type: ignore[call-arg]


# ----------------------------------------------------------------------------- TaskSet


def _taskset() -> TaskSet:
    return TaskSet(
        id="demo",
        description="a demo set ü",
        tasks=[
            Task(id="t0", prompt="2+2?", target="4", gym="qa"),
            Task(
                id="t1",
                prompt="Capital of France?",
                evaluate=[("response_includes", "Paris")],
                setup=[{"function": "show_passage", "args": ["Paris is in France."]}],
                metadata={"level": 1},
            ),
            Task(id="t2", prompt="Pick", choices=["a", "b"], target="b", config={"evaluate_combine": "min"}),
            Task(
                id="t3",
                prompt="Colours 🌈",
                target=["red", "green"],
                files={"a.txt": "hello"},
                evaluate=[{"function": "match_all", "args": [["red"]], "kwargs": {"case_sensitive": True}}],
            ),
        ],
    )


def test_taskset_acts_like_a_list():
    ts = _taskset()
    assert len(ts) == 4
    assert [t.id for t in ts] == ["t0", "t1", "t2", "t3"]
    assert ts[0].id == "t0" and ts[-1].id == "t3"
    sliced = ts[1:3]
    assert isinstance(sliced, TaskSet)
    assert [t.id for t in sliced] == ["t1", "t2"]
    assert sliced.id == "demo" and sliced.description == ts.description
    assert ts.get("t2").choices == ["a", "b"]
    with pytest.raises(KeyError, match="nope"):
        ts.get("nope")
    with pytest.raises(IndexError):
        ts[10]
    ts.append(Task(prompt="extra"))
    ts.extend([Task(prompt="more"), Task(prompt="most")])
    assert len(ts) == 7 and ts[-1].prompt == "most"
    assert len(TaskSet()) == 0 and list(TaskSet()) == []


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".yaml", ".yml"])
def test_save_load_round_trip(tmp_path, suffix):
    ts = _taskset()
    path = ts.save(tmp_path / f"set{suffix}")
    assert path.exists()
    loaded = TaskSet.load(path)
    assert loaded.tasks == ts.tasks
    if suffix == ".jsonl":  # one task per line: the set's id is the file name
        assert loaded.id == "set"
    else:
        assert loaded.id == "demo" and loaded.description == ts.description


def test_load_plain_list_files(tmp_path):
    (tmp_path / "list.json").write_text(
        json.dumps([{"prompt": "a"}, {"prompt": "b", "evaluate": [["response_is", "b"]]}])
    )
    loaded = TaskSet.load(tmp_path / "list.json")
    assert loaded.id == "list" and len(loaded) == 2
    assert loaded[1].evaluate == [FC(function="response_is", args=["b"])]
    (tmp_path / "list.yaml").write_text("- prompt: a\n- prompt: b\n  evaluate:\n    - [response_is, b]\n")
    assert TaskSet.load(tmp_path / "list.yaml").tasks == loaded.tasks
    (tmp_path / "blank.jsonl").write_text('{"prompt": "a"}\n\n   \n{"prompt": "b"}\n')
    assert [t.prompt for t in TaskSet.load(tmp_path / "blank.jsonl")] == ["a", "b"]


def test_save_rejects_unknown_suffix(tmp_path):
    with pytest.raises(ValueError, match=r"\.txt"):
        _taskset().save(tmp_path / "x.txt")


# ----------------------------------------------------------------------------- malformed files


def _file_error(path: Path) -> str:
    with pytest.raises(TaskFileError) as info:
        TaskSet.load(path)
    message = str(info.value)
    assert str(path) in message
    return message


def test_jsonl_missing_prompt_names_line_and_field(tmp_path):
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"prompt": "a"}\n{"prompt": "b"}\n{"id": "x"}\n')
    message = _file_error(path)
    assert "line 3" in message and "prompt" in message


def test_jsonl_invalid_json_names_the_line(tmp_path):
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"prompt": "a"}\n{"prompt":\n')
    message = _file_error(path)
    assert "line 2" in message and "invalid JSON" in message


def test_json_bad_setup_names_task_and_field(tmp_path):
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([{"prompt": "a"}, {"prompt": "b", "setup": 123}]))
    message = _file_error(path)
    assert "task 1" in message and "setup" in message
    with pytest.raises(TaskFileError) as info:
        TaskSet.load(path)
    assert info.value.index == 1 and info.value.field == "setup" and info.value.path == str(path)


def test_json_syntax_error_names_the_line(tmp_path):
    path = tmp_path / "tasks.json"
    path.write_text('[\n  {"prompt": "a"},\n  {"prompt": }\n]\n')
    message = _file_error(path)
    assert "line 3" in message and "invalid JSON" in message


def test_json_bad_function_name_names_task_and_field(tmp_path):
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps({"tasks": [{"prompt": "a", "evaluate": [["1abc"]]}]}))
    message = _file_error(path)
    assert "task 0" in message and "evaluate" in message and "'1abc'" in message


def test_yaml_unknown_field_names_line_and_field(tmp_path):
    path = tmp_path / "tasks.yaml"
    path.write_text("tasks:\n  - prompt: a\n  - prompt: b\n    colour: red\n")
    message = _file_error(path)
    assert "line 3" in message and "task 1" in message and "colour" in message


def test_yaml_syntax_error_names_the_line(tmp_path):
    path = tmp_path / "tasks.yaml"
    path.write_text("tasks:\n  - prompt: a\n   - bad: [\n")
    message = _file_error(path)
    assert "line 3" in message and "invalid YAML" in message


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("notask.json", "[1]", "task 0"),
        ("nottasks.json", '{"foo": 1}', "'tasks'"),
        ("extra.json", '{"tasks": [], "extra": 1}', "extra"),
        ("scalar.yaml", "just text\n", "expected a list of tasks"),
        ("nofunc.json", '[{"prompt": "a", "evaluate": {"args": [1]}}]', "'function'"),
        ("wrongtype.jsonl", '{"prompt": 5}\n', "prompt"),
        ("data.txt", "whatever", ".txt"),
    ],
)
def test_other_malformed_files(tmp_path, name, content, expected):
    path = tmp_path / name
    path.write_text(content)
    assert expected in _file_error(path)


def test_missing_file(tmp_path):
    assert "cannot read" in _file_error(tmp_path / "missing.json")


# ----------------------------------------------------------------------------- bundled task sets


def test_qa_basic():
    ts = load_taskset("qa-basic")
    assert ts.id == "qa-basic"
    assert len(ts) >= 20
    ids = [t.id for t in ts]
    assert len(set(ids)) == len(ids) and all(ids)
    assert all(t.gym == "qa" for t in ts)
    assert "qa-basic" in available_tasksets()


def test_load_taskset_returns_independent_copies():
    first = load_taskset("qa-basic")
    first.tasks.clear()
    assert len(load_taskset("qa-basic")) >= 20


def test_unknown_taskset_lists_known_sets():
    with pytest.raises(ValueError) as info:
        load_taskset("nope")
    message = str(info.value)
    assert "'nope'" in message and "qa-basic" in message
    with pytest.raises(ValueError, match="does not exist"):
        load_taskset("missing-file.json")


def test_load_taskset_from_a_path(tmp_path):
    path = _taskset().save(tmp_path / "mine.yaml")
    assert [t.id for t in load_taskset(path)] == ["t0", "t1", "t2", "t3"]
    assert [t.id for t in load_taskset(str(path))] == ["t0", "t1", "t2", "t3"]


def test_get_task():
    task = get_task("qa-basic/capital-france")
    assert task.id == "capital-france" and task.target == "Paris"
    with pytest.raises(ValueError, match="capital-france"):  # the message lists the set's tasks
        get_task("qa-basic/capital-atlantis")
    with pytest.raises(ValueError, match="<taskset>/<task id>"):
        get_task("capital-france")
    with pytest.raises(ValueError, match="nope"):
        get_task("nope/x")


def test_register_taskset():
    register_taskset("test-generated", lambda: TaskSet(tasks=[Task(id="g0", prompt="generated")]))
    assert "test-generated" in available_tasksets()
    assert get_task("test-generated/g0").prompt == "generated"


def test_resolve_task_and_taskset():
    task = Task(prompt="x")
    assert resolve_task(task) is task
    assert resolve_task({"prompt": "y", "target": "z"}) == Task(prompt="y", target="z")
    assert resolve_task("qa-basic/capital-france").target == "Paris"
    with pytest.raises(TypeError):
        resolve_task(5)  # type: ignore[arg-type]
    ts = resolve_taskset([task, {"prompt": "y"}])
    assert isinstance(ts, TaskSet) and [t.prompt for t in ts] == ["x", "y"]
    assert len(resolve_taskset("qa-basic")) >= 20
