"""The desktop gym's setup and evaluate functions, against a real Xvfb desktop.

Two module-scoped envs: ``host`` as on a developer's machine (``in_container=False``: no shell)
and ``shell`` (``allow_shell=True``) for the functions that run commands. Both run with the
controller in this process and in a controller server (where the functions then run), except the
tests that locate a window through the in-process controller (``local_only``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import gymnasium
import pytest

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym import (
    ClickAction,
    PressAction,
    ResponseAction,
    SetupError,
    Task,
    TypeAction,
    UnknownFunctionError,
)
from hud_gym.evaluation import Grade

pytestmark = pytest.mark.timeout(60)


LOCAL_ONLY_WINDOWS = pytest.mark.local_only("finds a window's geometry through the in-process controller")


@pytest.fixture(scope="module")
def host(controller: str) -> Iterator[gymnasium.Env]:
    env = gymnasium.make("hud/Ubuntu-v0", in_container=False, max_steps=1000, controller=controller)
    yield env
    env.close()


@pytest.fixture(scope="module")
def shell(controller: str) -> Iterator[gymnasium.Env]:
    env = gymnasium.make("hud/Ubuntu-v0", in_container=False, allow_shell=True, max_steps=1000, controller=controller)
    yield env
    env.close()


def grade(env: gymnasium.Env, setup: Any, evaluate: Any, actions: list[Any] | None = None, **config: Any) -> Grade:
    """Reset with a task of ``setup``/``evaluate``, run ``actions``, and grade."""
    task = Task(prompt="test", gym="hud-ubuntu", setup=setup, evaluate=evaluate, config=config or None)
    env.reset(seed=0, options={"task": task})
    for action in actions or []:
        _, _, _, _, info = env.step(action)
        assert info["status"] == "ok", info
    result = env.unwrapped.evaluate()
    assert isinstance(result, Grade)
    return result


def reward(env: gymnasium.Env, setup: Any, evaluate: Any, actions: list[Any] | None = None, **config: Any) -> float:
    """The reward of :func:`grade`, which must not be a grading error."""
    result = grade(env, setup, evaluate, actions, **config)
    assert not result.is_error, result
    return result.reward


def on_loop(env: gymnasium.Env, make: Callable[[Any], Any]) -> Any:
    """Run ``make(controller)`` (a coroutine) on the env's loop thread."""
    return env.unwrapped._runner.run(make(env.unwrapped.controller), timeout=30)


def window(env: gymnasium.Env, title_suffix: str) -> tuple[int, int, int, int]:
    """``(x, y, w, h)`` of the client area of the window whose title ends with ``title_suffix``."""
    for w in on_loop(env, lambda c: c.desktop.windows()):
        if w["title"].endswith(title_suffix):
            return w["geometry"]
    raise AssertionError(f"no window titled ...{title_suffix!r}")


# ------------------------------------------------------------------------------- files


def test_write_file_file_exists_and_file_contains(host: gymnasium.Env) -> None:
    setup = ("write_file", "docs/notes.txt", "Hello Desktop\nsecond line\n")
    assert reward(host, setup, ("file_exists", "docs/notes.txt")) == 1.0
    assert reward(host, setup, ("file_exists", "~/docs/notes.txt")) == 1.0
    assert (
        reward(host, setup, {"function": "file_exists", "args": ["docs/notes.txt"], "kwargs": {"kind": "file"}}) == 1.0
    )
    assert reward(host, setup, {"function": "file_exists", "args": ["docs"], "kwargs": {"kind": "dir"}}) == 1.0
    assert reward(host, setup, {"function": "file_exists", "args": ["docs"], "kwargs": {"kind": "file"}}) == 0.0
    assert reward(host, setup, ("file_exists", "docs/other.txt")) == 0.0
    assert (
        reward(host, setup, {"function": "file_exists", "args": ["docs/other.txt"], "kwargs": {"exists": False}}) == 1.0
    )
    assert (
        reward(host, setup, {"function": "file_exists", "args": ["docs/notes.txt"], "kwargs": {"exists": False}}) == 0.0
    )
    assert reward(host, setup, ("file_contains", "docs/notes.txt", ["Hello Desktop", "second"])) == 1.0
    assert reward(host, setup, ("file_contains", "docs/notes.txt", "hello desktop")) == 0.0
    insensitive = {
        "function": "file_contains",
        "args": ["docs/notes.txt", "hello desktop"],
        "kwargs": {"case_sensitive": False},
    }
    assert reward(host, setup, insensitive) == 1.0
    missing = grade(host, setup, ("file_contains", "docs/notes.txt", ["Hello", "absent"]))
    assert missing.reward == 0.0 and "absent" in (missing.content or "") and missing.info["missing"] == ["absent"]


def test_a_missing_file_is_reward_zero_not_an_error(host: gymnasium.Env) -> None:
    for evaluate in (
        ("file_contains", "nope.txt", "x"),
        ("file_matches", "nope.txt", "x"),
        ("dir_contains", "nope", "x"),
    ):
        result = grade(host, None, evaluate)
        assert result.reward == 0.0 and not result.is_error, result
        assert "does not exist" in (result.content or "")
    result = grade(host, ("make_dir", "adir"), ("file_contains", "adir", "x"))
    assert result.reward == 0.0 and not result.is_error and "directory" in (result.content or "")


def test_the_home_is_emptied_at_each_reset(host: gymnasium.Env) -> None:
    assert reward(host, ("write_file", "left.txt", "x"), ("file_exists", "left.txt")) == 1.0
    assert reward(host, None, ("file_exists", "left.txt")) == 0.0


def test_file_matches(host: gymnasium.Env) -> None:
    setup = ("write_file", "answer.txt", "result:\n42\n")
    assert reward(host, setup, ("file_matches", "answer.txt", r"^42$")) == 1.0
    assert reward(host, setup, ("file_matches", "answer.txt", r"^\d+$")) == 1.0
    assert reward(host, setup, ("file_matches", "answer.txt", r"^43$")) == 0.0
    ignore_case = {"function": "file_matches", "args": ["answer.txt", "RESULT"], "kwargs": {"ignore_case": True}}
    assert reward(host, setup, ignore_case) == 1.0
    invalid = grade(host, setup, ("file_matches", "answer.txt", "(unclosed"))
    assert invalid.is_error and "invalid regex" in (invalid.content or "")
    # Task patterns cannot hang (Python's re needs minutes for these): answered, or a grading error.
    hostile = ("write_file", "hostile.txt", "a" * 40 + "!")
    assert reward(host, hostile, ("file_matches", "hostile.txt", r"^(a+)+$")) == 0.0
    exponential = grade(host, hostile, ("file_matches", "hostile.txt", r"(a|aa)+$"))
    assert exponential.is_error and "did not finish matching" in (exponential.content or "")


def test_make_dir_and_dir_contains(host: gymnasium.Env) -> None:
    setup = [("make_dir", "photos/2024"), ("write_file", "photos/a.jpg", "1"), ("write_file", "photos/.hidden", "")]
    assert reward(host, setup, ("dir_contains", "photos", ["a.jpg", "2024"])) == 1.0
    assert reward(host, setup, ("dir_contains", "photos", "b.jpg")) == 0.0
    exact = {"function": "dir_contains", "args": ["photos", ["a.jpg", "2024"]], "kwargs": {"exact": True}}
    assert reward(host, setup, exact) == 1.0  # hidden entries do not count
    not_exact = grade(host, setup, {"function": "dir_contains", "args": ["photos", "a.jpg"], "kwargs": {"exact": True}})
    assert not_exact.reward == 0.0 and not_exact.info["unexpected"] == ["2024"]
    assert reward(host, [("make_dir", "x"), ("make_dir", "x")], ("dir_contains", ".", "x")) == 1.0  # idempotent
    assert reward(host, ("write_file", "f", ""), ("dir_contains", "f", "x")) == 0.0  # not a directory


def test_copy_file(host: gymnasium.Env) -> None:
    setup = [
        ("write_file", "src/report.txt", "Q3"),
        ("write_file", "src/sub/deep.txt", "deep"),
        ("make_dir", "backup"),
        ("copy_file", "src/report.txt", "copy.txt"),
        ("copy_file", "src/report.txt", "backup"),
        ("copy_file", "src", "tree"),
    ]
    evaluate = [
        ("file_contains", "copy.txt", "Q3"),
        ("file_contains", "backup/report.txt", "Q3"),
        ("file_contains", "tree/sub/deep.txt", "deep"),
        ("file_exists", "src/report.txt"),
    ]
    assert reward(host, setup, evaluate, evaluate_combine="min") == 1.0
    with pytest.raises(SetupError, match="copy_file.*'missing.txt' does not exist"):
        host.reset(options={"task": Task(prompt="x", gym="hud-ubuntu", setup=("copy_file", "missing.txt", "x.txt"))})


# ------------------------------------------------------------------------------- apps and windows


def test_launch_a_known_app_window_exists_and_process_running(host: gymnasium.Env) -> None:
    setup = ("launch", "xterm", ["-T", "functions-term"])
    assert reward(host, setup, ("window_exists", "^functions-term$")) == 1.0
    assert reward(host, setup, ("window_title_matches", "functions")) == 1.0
    assert reward(host, setup, ("process_running", "xterm")) == 1.0
    absent = grade(host, setup, ("window_exists", "^Calculator$"))
    assert absent.reward == 0.0 and "functions-term" in (absent.content or "")
    assert reward(host, setup, ("process_running", "xcalc")) == 0.0
    # Killed at reset: the next episode has neither the window nor the process.
    assert reward(host, None, ("window_exists", "functions-term")) == 0.0
    assert reward(host, None, ("process_running", "xterm")) == 0.0
    invalid = grade(host, None, ("window_exists", "[unclosed"))
    assert invalid.is_error and "invalid regex" in (invalid.content or "")


def test_launch_waits_for_the_window(host: gymnasium.Env) -> None:
    task = Task(prompt="x", gym="hud-ubuntu", setup=[("launch", "xcalc"), ("launch", "xclock", None, "^xclock$")])
    _, info = host.reset(options={"task": task})
    assert "Calculator" in info["windows"] and "xclock" in info["windows"]  # in the first observation


def test_process_running_sees_programs_started_from_the_terminal(host: gymnasium.Env) -> None:
    # Placed at the top left corner (an 80x24 xterm is several hundred pixels wide and high).
    task = Task(
        prompt="x",
        gym="hud-ubuntu",
        setup=("launch", "xterm", ["-T", "procs", "-geometry", "80x24+0+0"]),
        evaluate=("process_running", "sleep"),
    )
    host.reset(options={"task": task})
    host.step(ClickAction(point=(100, 100)))
    host.step(TypeAction(text="sleep 77", enter_after=True))
    deadline = time.monotonic() + 5
    while (result := host.unwrapped.evaluate()).reward < 1 and time.monotonic() < deadline:
        host.step({"type": "wait", "time": 50})
    assert result.reward == 1.0, result
    assert result.info["processes"][0]["name"] == "sleep"


@LOCAL_ONLY_WINDOWS
def test_open_file_in_the_editor_and_edit_it_with_cla_actions(host: gymnasium.Env) -> None:
    setup = [("write_file", "todo.txt", "first\n"), ("open_file", "todo.txt")]
    task = Task(
        prompt="x",
        gym="hud-ubuntu",
        setup=setup,
        evaluate=[("window_exists", r"^todo\.txt - Editor$"), ("file_contains", "todo.txt", ["first", "second"])],
    )
    _, info = host.reset(options={"task": task})
    assert info["focused_window"] == "todo.txt - Editor"
    x, y, w, h = window(host, "Editor")
    for action in (
        ClickAction(point=(x + w // 2, y + h - 40)),
        TypeAction(text="second"),
        PressAction(keys=["ctrl", "s"]),
    ):
        host.step(action)
    assert host.unwrapped.evaluate().reward == 1.0
    # A missing file opens as a new, empty document of that name.
    assert reward(host, ("open_file", "new.txt"), ("window_exists", r"^new\.txt - Editor$")) == 1.0


def test_wait_for_window(host: gymnasium.Env) -> None:
    setup = [("launch", "xterm", ["-T", "later-term"], False), ("wait_for_window", "^later-term$")]
    assert reward(host, setup, ("window_exists", "later-term")) == 1.0
    never = {"function": "wait_for_window", "args": ["never"], "kwargs": {"timeout": 0.3}}
    task = Task(prompt="x", gym="hud-ubuntu", setup=never)
    with pytest.raises(SetupError, match="wait_for_window.*TimeoutError.*never"):
        host.reset(options={"task": task})


# ------------------------------------------------------------------------------- clipboard


def test_set_clipboard_and_clipboard_contains(host: gymnasium.Env) -> None:
    setup = ("set_clipboard", "Grüße, clipboard 日本")
    assert reward(host, setup, ("clipboard_contains", "clipboard 日本")) == 1.0
    other = grade(host, setup, ("clipboard_contains", "something else"))
    assert other.reward == 0.0 and "Grüße" in (other.content or "")
    insensitive = {"function": "clipboard_contains", "args": ["GRÜSSE"], "kwargs": {"case_sensitive": False}}
    assert reward(host, setup, insensitive) == 1.0
    assert reward(host, None, ("clipboard_contains", "Grüße")) == 0.0  # the owner died at reset


# ------------------------------------------------------------------------------- commands (shell)


def test_run_and_command_output_contains(shell: gymnasium.Env) -> None:
    setup = [("run", "echo $((6*7)) > answer.txt"), ("run", ["mkdir", "-p", "made/by/argv"])]
    assert (
        reward(
            shell,
            setup,
            [("file_matches", "answer.txt", "^42$"), ("file_exists", "made/by/argv")],
            evaluate_combine="min",
        )
        == 1.0
    )
    assert reward(shell, None, ("command_output_contains", "echo hello; echo world", ["hello", "world"])) == 1.0
    assert reward(shell, None, ("command_output_contains", ["printf", "%s", "argv-out"], "argv-out")) == 1.0
    failed = grade(shell, None, ("command_output_contains", "echo hello", "bye"))
    assert failed.reward == 0.0 and "bye" in (failed.content or "") and failed.info["returncode"] == 0
    # Commands run in the env's home, and see its files.
    assert reward(shell, ("write_file", "here.txt", "x"), ("command_output_contains", "pwd; ls", ["here.txt"])) == 1.0


def test_run_fails_on_a_non_zero_exit_code(shell: gymnasium.Env) -> None:
    task = Task(prompt="x", gym="hud-ubuntu", setup=("run", "echo oops >&2; exit 3"))
    with pytest.raises(SetupError, match=r"run\(.*\).*'echo oops >&2; exit 3'.*code 3.*oops"):
        shell.reset(options={"task": task})
    task = Task(
        prompt="x", gym="hud-ubuntu", setup={"function": "run", "args": ["sleep 5"], "kwargs": {"timeout": 0.3}}
    )
    with pytest.raises(SetupError, match="TimeoutError"):
        shell.reset(options={"task": task})


def test_launch_of_any_program_with_the_shell(shell: gymnasium.Env) -> None:
    assert (
        reward(shell, ("launch", "xmessage", ["-name", "hello-message", "hello"]), ("process_running", "xmessage"))
        == 1.0
    )
    assert reward(shell, ("open_file", "shown.txt", "xedit"), ("window_exists", "shown.txt|xedit")) == 1.0


# ------------------------------------------------------------------------------- shared


def test_response_evaluators_are_shared(host: gymnasium.Env) -> None:
    task = Task(prompt="say hi", gym="hud-ubuntu", evaluate=("response_includes", "hi"))
    host.reset(options={"task": task})
    _, r, terminated, _, info = host.step(ResponseAction(text="hi there"))
    assert (r, terminated) == (1.0, True) and not info["grade"].is_error


def test_unknown_functions_and_bad_arguments_are_rejected_before_anything_runs(host: gymnasium.Env) -> None:
    with pytest.raises(UnknownFunctionError, match="write_files.*write_file"):
        host.reset(options={"task": Task(prompt="x", gym="hud-ubuntu", setup=("write_files", "a", "b"))})
    with pytest.raises(UnknownFunctionError, match="file_contain'.*file_contains"):
        host.reset(options={"task": Task(prompt="x", gym="hud-ubuntu", evaluate=("file_contain", "a", "b"))})
    with pytest.raises(ValueError, match="timeout"):
        host.reset(
            options={
                "task": Task(
                    prompt="x",
                    gym="hud-ubuntu",
                    setup={"function": "run", "args": ["true"], "kwargs": {"timeout": "soon"}},
                )
            }
        )
    # Dotted names of the gym's namespace resolve too.
    assert reward(host, ("desktop.write_file", "d.txt", "x"), ("ubuntu.file_exists", "d.txt")) == 1.0
