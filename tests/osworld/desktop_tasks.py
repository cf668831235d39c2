"""Helpers of the end-to-end tests of real OSWorld task files (``test_real_tasks*.py``): the
tasks of ``tests/data/osworld`` (unchanged), their input files served from an offline mirror
(``HUD_GYM_OSWORLD_FILES``, ``by-url/<sha256 of the URL>``) at the tasks' own URLs, and
:func:`run_task`: the grade of the untouched desktop, then of the desktop after a scripted
solution made of CLA actions only (mouse, keys and typing, as an agent would)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest

from hud_gym import PressAction, WaitAction
from hud_gym.controllers.ubuntu.homefs import HomeFiles
from hud_gym.suites.osworld.files import url_key
from hud_gym.suites.osworld.taskset import load_osworld

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "osworld"
TASKS = {task.id: task for task in load_osworld(SAMPLE)}
"""The sample's tasks that run here, by id."""
START = "_osworld_test_start_frame"
"""Where :func:`run_task` keeps the screen as the solution starts (for :func:`until_still`)."""
STEP_TIMEOUT = 120.0
"""Seconds a step or the grading may take (the default 30 is short for a save on a loaded box)."""


def need_desktop() -> None:
    """Skip without the desktop's programs or LibreOffice."""
    from hud_gym.controllers.ubuntu.display import DesktopNotAvailableError, require_programs

    try:
        require_programs("openbox")
    except DesktopNotAvailableError as exc:
        pytest.skip(str(exc))
    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice is not installed (docker/ubuntu/packages.txt)")


def task_urls(task: Any) -> tuple[str, str]:
    """The task's input URL (its download step) and its expected file's URL (cloud_file)."""
    (step,) = [s for s in task.setup[0].args[0] if s["type"] == "download"]
    return step["parameters"]["files"][0]["url"], task.evaluate[0].args[0]["expected"]["path"]


def serve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, Callable[[Path], None]]) -> None:
    """An offline mirror holding each URL's file (built by its function), and an empty cache."""
    mirror = tmp_path / "mirror" / "by-url"
    mirror.mkdir(parents=True)
    for url, build in files.items():
        build(mirror / url_key(url))
    monkeypatch.setenv("HUD_GYM_OSWORLD_FILES", str(mirror.parent))
    monkeypatch.setenv("HUD_GYM_HOME", str(tmp_path / "hud-home"))


def _titles(env: Any) -> list[str]:
    controller = env.unwrapped.controller
    return [w["title"] for w in env.unwrapped._runner.run(controller.desktop.windows(), timeout=10)]


def until_window(text: str, present: bool = True, timeout: float = 180.0) -> Callable[[Any], None]:
    """A step of a solution: look until a window whose title holds ``text`` is there (or, with
    ``present=False``, gone), as an agent looks at the screen before its next action (a dialog
    opens, a save ends: seconds on a loaded box)."""

    def wait(env: Any) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(text in t for t in _titles(env)) == present:
                time.sleep(1.0)  # its first paint
                return
            time.sleep(0.5)
        pytest.fail(f"the window {text!r} is {'not there' if present else 'still there'} after {timeout} s")

    return wait


def until_still(timeout: float = 240.0) -> Callable[[Any], None]:
    """A step of a solution: look at the screen until it shows the solution's work and stops
    changing: it differs from the screen before the solution (:data:`START`), and two looks 2 s
    apart differ in fewer pixels than a blinking text cursor has; as an agent waits for its typing
    to show before it goes on (a loaded box paints tens of seconds late)."""

    def wait(env: Any) -> None:
        _settle(env, env.unwrapped.__dict__[START], timeout, "the solution's work")

    return wait


def _settle(env: Any, start: np.ndarray, timeout: float, what: str) -> None:
    """Look every 2 s until the screen differs from ``start`` and two looks in a row differ in
    fewer pixels than a blinking text cursor has; fail naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    before = None
    while time.monotonic() < deadline:
        observation, *_ = env.step(WaitAction(time=2000))
        now = np.asarray(observation["screenshot"])
        changed = int((now != start).any(axis=-1).sum()) > 500
        if changed and before is not None and int((now != before).any(axis=-1).sum()) < 100:
            return
        before = now
    pytest.fail(f"the screen did not show {what}, still, within {timeout} s")


def acted(action: Any, timeout: float = 240.0) -> Callable[[Any], None]:
    """A step of a solution: ``action`` (a CLA action), then a look at the screen until it shows
    the action's effect and stops changing: it differs from the screen before the action, and two
    looks 2 s apart differ in fewer pixels than a blinking text cursor has (a menu that opens, a
    page of a dialog, a list that scrolls: seconds on a loaded box)."""

    def act(env: Any) -> None:
        observation, *_ = env.step(WaitAction(time=500))
        start = np.asarray(observation["screenshot"])
        env.step(action)
        _settle(env, start, timeout, f"the effect of {action!r}")

    return act


def saved(path: str, timeout: float = 300.0) -> list[Any]:
    """Steps of a solution: save (Ctrl+S) and look until the file ``path`` (``~/...``) is written,
    as an agent saves its work and watches the save end (the grading's own Ctrl+S then finds
    nothing to save; on a loaded box a save takes longer than the grading waits for one)."""

    def wait(env: Any) -> None:
        controller = env.unwrapped.controller
        files = HomeFiles(Path(controller.state.home), controller.state.file_owner)
        resolved = controller.desktop.resolve_path(path)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            modified = files.mtime(resolved)
            if modified is not None and modified >= pressed[0] - 1.0:
                time.sleep(1.0)  # the rename that ends the save
                return
            time.sleep(0.5)
        pytest.fail(f"{path} was not saved within {timeout} s")

    pressed = [0.0]

    def press(env: Any) -> None:
        pressed[0] = time.time()
        env.step(PressAction(keys=["ctrl", "s"]))

    return [press, wait]


def wait_ready(env: Any, text: str, timeout: float = 400.0) -> None:
    """Until the window ``text`` shows LibreOffice's menu bar (its first paint is the bare grid,
    which takes no input yet; a start takes minutes at a load average of 100)."""
    deadline = time.monotonic() + timeout
    titles: list[str] = []
    while time.monotonic() < deadline:
        titles = _titles(env)
        if any(text in t for t in titles):
            observation, *_ = env.step(WaitAction(time=500))
            menu = np.asarray(observation["screenshot"])[22:36, 5:35]
            if (menu.max(axis=-1) < 100).sum() > 10:  # the dark letters of "File" at the top left
                time.sleep(2.0)
                return
        time.sleep(1.0)
    pytest.fail(f"no ready window {text!r} in {timeout} s: {titles}")


def run_task(
    task: Any, title: str, solution: list[Any], ready: Callable[[Any, str], None] = wait_ready
) -> tuple[float, float]:
    """The grade of the untouched desktop, then, in a fresh episode, of the desktop after ``solution``
    (CLA actions, and :func:`until_window` looks), each once ``ready`` saw the app's window
    ``title`` take input (default: LibreOffice's, :func:`wait_ready`)."""
    # A save in the grading's postconfig takes tens of seconds on a loaded box.
    env = gymnasium.make("hud/Ubuntu-v0", task=task, in_container=False, step_timeout=STEP_TIMEOUT)
    grades = []
    try:
        for actions in ([], solution):
            _, info = env.reset(seed=0)
            assert info["status"] == "ok", info
            ready(env, title)
            observation, *_ = env.step(WaitAction(time=500))
            env.unwrapped.__dict__[START] = np.asarray(observation["screenshot"])
            for action in actions:
                if callable(action):
                    action(env)  # a look at the screen (until_window)
                else:
                    env.step(action)
            grade = env.unwrapped.evaluate()
            assert not grade.is_error, grade.content
            grades.append(grade.reward)
        return grades[0], grades[1]
    finally:
        env.close()
