"""The Tk apps shipped with the desktop gym: the editor saves what was typed."""

from __future__ import annotations

import time
from typing import Any

import pytest

from hud_gym import Task
from hud_gym.actions import CustomAction, PressAction, TypeAction
from hud_gym.controllers.ubuntu.apps import KNOWN_APPS, app_path

pytestmark = pytest.mark.timeout(60)


def test_app_paths() -> None:
    assert app_path("editor").name == "editor.py" and app_path("eventlog").is_file()
    with pytest.raises(FileNotFoundError):
        app_path("__init__")
    assert set(KNOWN_APPS) >= {"xterm", "editor", "eventlog"}


def test_editor_types_and_saves(desktop: Any, run: Any) -> None:
    desktop.reset(
        options={"task": Task(prompt="", gym="hud-ubuntu", setup=("write_file", "notes.txt", "first line\n"))}
    )
    home = desktop.unwrapped.controller.state.home
    _, _, _, _, info = desktop.step(CustomAction(action="launch", args={"app": "editor", "args": ["notes.txt"]}))
    assert info["status"] == "ok" and info["window"] == "notes.txt - Editor", info
    desktop.step(PressAction(keys=["ctrl", "end"]))
    _, _, _, _, info = desktop.step(TypeAction(text="héllo 日本"))
    assert info["focused_window"] == "*notes.txt - Editor"
    _, _, _, _, info = desktop.step(PressAction(keys=["ctrl", "s"]))
    assert info["focused_window"] == "notes.txt - Editor"
    deadline = time.monotonic() + 5
    while (home / "notes.txt").read_text(encoding="utf-8") != "first line\nhéllo 日本":
        assert time.monotonic() < deadline, (home / "notes.txt").read_text(encoding="utf-8")
        time.sleep(0.02)
    desktop.step(PressAction(keys=["ctrl", "q"]))  # saved: quits without asking
    deadline = time.monotonic() + 5
    while run(desktop, lambda c: c.desktop.windows()):
        assert time.monotonic() < deadline, "the editor did not quit"
        time.sleep(0.02)
