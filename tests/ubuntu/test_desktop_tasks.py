"""The bundled ``desktop-basic`` task set: a scripted CLA policy solves every task (reward 1) and a
no-op policy does not (reward < 1).

The policies act only through ``env.step`` with CLA actions (clicks, multi-clicks, typing, key
chords, scrolling, waits, a custom launch, the final response); they locate windows through the
controller's window list (their client-area geometry), as an agent would from the screenshot.
The env runs as on a developer's machine (``in_container=False``: no shell), which shows that
the task set needs no ``allow_shell``.

The no-op policy runs with the controller in this process and in a controller server; the scripted
policies that locate windows (or check the home) through the in-process controller are
``local_only``.
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
    CustomAction,
    PressAction,
    ResponseAction,
    ScreenshotFetch,
    ScrollAction,
    TypeAction,
    WaitAction,
    load_taskset,
)

TASKSET = load_taskset("desktop-basic")
TASK_IDS = [task.id for task in TASKSET]
# The policies that need no window geometry or home path from the in-process controller.
PUBLIC_POLICIES = {"open-clock"}
SCRIPTED = [
    pytest.param(
        task_id,
        marks=()
        if task_id in PUBLIC_POLICIES
        else pytest.mark.local_only("the policy finds windows (and checks the home) through the in-process controller"),
    )
    for task_id in TASK_IDS
]

# Offsets inside the editor's client area (its Tk menu bar is on top, 32 px high; DejaVu fonts).
EDITOR_MENU_FILE = (19, 15)
EDITOR_MENU_SAVE = (30, 86)
EDITOR_TEXT_TOP = 34
EDITOR_LINE_HEIGHT = 19


@pytest.fixture(scope="module")
def env(controller: str) -> Iterator[gymnasium.Env]:
    env = gymnasium.make(
        "hud/Ubuntu-v0", taskset="desktop-basic", in_container=False, max_steps=40, controller=controller
    )
    yield env
    env.close()


class Episode:
    """One episode of a task: steps CLA actions and remembers the last reward."""

    def __init__(self, env: gymnasium.Env, task_id: str) -> None:
        self.env = env
        self.observation, self.info = env.reset(seed=0, options={"task_index": TASK_IDS.index(task_id)})
        assert self.info["task_id"] == task_id
        self.reward = 0.0
        self.terminated = False

    def step(self, action: Any) -> dict[str, Any]:
        self.observation, self.reward, self.terminated, truncated, info = self.env.step(action)
        assert info["status"] == "ok", info
        assert not truncated
        return info

    def window(self, title_suffix: str) -> tuple[int, int, int, int]:
        """``(x, y, w, h)`` of the client area of the window whose title ends with ``title_suffix``."""
        env = self.env.unwrapped
        for window in env._runner.run(env.controller.desktop.windows(), timeout=10):
            if window["title"].endswith(title_suffix):
                return window["geometry"]
        raise AssertionError(f"no window ...{title_suffix!r} in {self.info.get('windows')}")

    def home_has(self, check: Callable[[Any], bool], timeout: float = 5.0) -> None:
        """Step short waits until ``check(home)`` holds (a typed command has finished)."""
        home = self.env.unwrapped.controller.state.home
        deadline = time.monotonic() + timeout
        while not check(home):
            assert time.monotonic() < deadline, "the command did not take effect"
            self.step(WaitAction(time=50))

    def wait_until(self, check: Callable[[dict[str, Any]], bool], timeout: float = 5.0) -> None:
        """Step short waits until ``check(info)`` holds on the step's info (e.g. a window shows)."""
        deadline = time.monotonic() + timeout
        info = self.step(WaitAction(time=0))
        while not check(info):
            assert time.monotonic() < deadline, f"not reached; info: {info.get('windows')}"
            info = self.step(WaitAction(time=50))

    def respond(self, text: str = "done") -> float:
        self.step(ResponseAction(text=text))
        assert self.terminated
        return self.reward

    # --- the editor

    def editor_point(self, dx: int, line: float) -> tuple[int, int]:
        """A point ``dx`` px into the editor's text, on (1-based, fractional) text line ``line``."""
        x, y, _, _ = self.window("Editor")
        return x + dx, y + EDITOR_TEXT_TOP + int((line - 0.5) * EDITOR_LINE_HEIGHT)

    def editor_end(self) -> None:
        """Click into the text below its last line (the cursor goes to the end)."""
        x, y, w, h = self.window("Editor")
        self.step(ClickAction(point=(x + w // 2, y + h - 30)))

    def editor_menu_save(self) -> None:
        x, y, _, _ = self.window("Editor")
        self.step(ClickAction(point=(x + EDITOR_MENU_FILE[0], y + EDITOR_MENU_FILE[1])))
        self.step(ClickAction(point=(x + EDITOR_MENU_SAVE[0], y + EDITOR_MENU_SAVE[1])))

    # --- the terminal

    def terminal(self, command: str) -> None:
        """Click into the xterm and type ``command`` followed by Enter."""
        x, y, w, h = self.window("xterm")
        self.step(ClickAction(point=(x + w // 2, y + h // 2)))
        self.step(TypeAction(text=command, enter_after=True))


# ------------------------------------------------------------------------------- scripted policies


def editor_write_sentence(ep: Episode) -> float:
    ep.editor_end()
    ep.step(TypeAction(text="The quick brown fox jumps over the lazy dog."))
    ep.editor_menu_save()
    ep.wait_until(lambda info: not (info["focused_window"] or "*").startswith("*"))  # saved: no '*' in the title
    return ep.respond()


def editor_append_line(ep: Episode) -> float:
    ep.step(ClickAction(point=ep.editor_point(40, 1)))
    ep.step(PressAction(keys=["ctrl", "end"]))
    ep.step(TypeAction(text="call the plumber"))
    ep.step(PressAction(keys=["ctrl", "s"]))
    return ep.respond()


def editor_copy_code(ep: Episode) -> float:
    ep.step(ClickAction(point=ep.editor_point(40, 2), pattern=[80, 80]))  # a triple click selects the line
    ep.step(PressAction(keys=["ctrl", "c"]))
    return ep.respond()


def editor_paste_clipboard(ep: Episode) -> float:
    ep.editor_end()
    ep.step(PressAction(keys=["ctrl", "v"]))
    ep.step(PressAction(keys=["ctrl", "s"]))
    return ep.respond()


def editor_read_answer(ep: Episode) -> float:
    ep.step(ScrollAction(point=ep.editor_point(100, 3), scroll={"x": 0, "y": 100}))
    ep.step(ScreenshotFetch())
    return ep.respond("7")


def terminal_rename_file(ep: Episode) -> float:
    ep.terminal("mv draft.txt final.txt")
    ep.home_has(lambda home: (home / "final.txt").exists())
    return ep.respond()


def terminal_make_dir(ep: Episode) -> float:
    ep.terminal("mkdir projects")
    ep.home_has(lambda home: (home / "projects").is_dir())
    return ep.respond()


def terminal_arith_to_file(ep: Episode) -> float:
    ep.terminal("echo $((6*7)) > answer.txt")
    ep.home_has(lambda home: (home / "answer.txt").exists() and (home / "answer.txt").read_text().strip() != "")
    return ep.respond()


def terminal_copy_file(ep: Episode) -> float:
    ep.terminal("cp report.txt backup/")
    ep.home_has(
        lambda home: (home / "backup" / "report.txt").is_file() and (home / "backup" / "report.txt").stat().st_size > 0
    )
    return ep.respond()


def terminal_delete_file(ep: Episode) -> float:
    ep.terminal("rm junk.log")
    ep.home_has(lambda home: not (home / "junk.log").exists())
    return ep.respond()


def terminal_count_files(ep: Episode) -> float:
    ep.terminal("ls photos | wc -l")
    ep.step(WaitAction(time=100))
    return ep.respond("5")


def terminal_start_top(ep: Episode) -> float:
    ep.terminal("top")
    ep.wait_until(lambda info: ep.env.unwrapped.evaluate().reward == 1.0)  # top has started
    return ep.respond()


def open_calculator(ep: Episode) -> float:
    ep.terminal("xcalc &")
    ep.wait_until(lambda info: "Calculator" in info["windows"])
    return ep.respond()


def open_clock(ep: Episode) -> float:
    info = ep.step(CustomAction(action="launch", args={"app": "xclock"}))
    assert info["window"] == "xclock", info
    return ep.respond()


POLICIES: dict[str, Callable[[Episode], float]] = {
    "editor-write-sentence": editor_write_sentence,
    "editor-append-line": editor_append_line,
    "editor-copy-code": editor_copy_code,
    "editor-paste-clipboard": editor_paste_clipboard,
    "editor-read-answer": editor_read_answer,
    "terminal-rename-file": terminal_rename_file,
    "terminal-make-dir": terminal_make_dir,
    "terminal-arith-to-file": terminal_arith_to_file,
    "terminal-copy-file": terminal_copy_file,
    "terminal-delete-file": terminal_delete_file,
    "terminal-count-files": terminal_count_files,
    "terminal-start-top": terminal_start_top,
    "open-calculator": open_calculator,
    "open-clock": open_clock,
}


# ------------------------------------------------------------------------------- tests


@pytest.mark.timeout(10)
def test_the_task_set_is_well_formed() -> None:
    assert len(TASKSET) >= 10
    assert len(set(TASK_IDS)) == len(TASK_IDS)
    assert all(task.gym == "hud-ubuntu" and task.evaluate for task in TASKSET)
    assert set(POLICIES) == set(TASK_IDS), "every task needs a scripted policy"


@pytest.mark.timeout(30)
@pytest.mark.parametrize("task_id", SCRIPTED)
def test_the_scripted_policy_solves_the_task(env: gymnasium.Env, task_id: str) -> None:
    episode = Episode(env, task_id)
    reward = POLICIES[task_id](episode)
    grade = episode.env.unwrapped.evaluate()
    assert reward == 1.0, grade


@pytest.mark.timeout(30)
@pytest.mark.parametrize("task_id", TASK_IDS)
def test_a_no_op_policy_does_not(env: gymnasium.Env, task_id: str) -> None:
    episode = Episode(env, task_id)
    episode.step(ScreenshotFetch())
    reward = episode.respond("")
    assert reward < 1.0
    assert not episode.env.unwrapped.evaluate().is_error
