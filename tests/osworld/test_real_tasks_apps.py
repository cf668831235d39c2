"""Real OSWorld Impress and GIMP tasks (``tests/data/osworld``, unchanged) on the real desktop (see
``desktop_tasks.py``), each solved with CLA actions only:

- Impress ``21760ecb``: add the slide transition "dissolve" to the first slide, graded by
  ``check_transition`` on the saved deck. Its setup's input script (a double click and a click on
  the slide, on OSWorld's 1920x1080 screen) runs as the desktop's clicks, no shell needed. The
  deck is made with python-pptx and served at the task's URL.
- GIMP ``7767eef2``: change GIMP's theme from dark to light in its Preferences, graded by
  ``check_config_status`` on ``gimprc`` (the ``gimp_config_file`` getter) after the grading's
  Ctrl+Q.

The untouched desktop grades 0 for each.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest

from hud_gym import ClickAction, PressAction, ScrollAction, WaitAction
from hud_gym.controllers.ubuntu.homefs import HomeFiles
from tests.osworld.desktop_tasks import (
    TASKS,
    _titles,
    acted,
    need_desktop,
    run_task,
    saved,
    serve,
    until_window,
)

pptx = pytest.importorskip("pptx")

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1500)]

TRANSITION = "21760ecb-8f62-40d2-8d85-0cee5725cb72"  # Impress: the "dissolve" transition on slide 1
THEME = "7767eef2-56a3-4cea-8c9f-48c070c7d65b"  # GIMP: change the theme from dark to light
DECK = "~/Desktop/Ch4 Video Effect.pptx"


def _deck(path: Path) -> None:
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[0])
    slide.shapes.title.text = "Video effects"
    slide.placeholders[1].text = "Chapter 4"
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Fades"
    slide.placeholders[1].text_frame.text = "In and out"
    deck.save(path)


def test_impress_add_the_dissolve_transition_to_slide_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    need_desktop()
    assert not TASKS[TRANSITION].metadata["requires"]["allow_shell"]  # its setup's clicks need no shell
    (step,) = [s for s in TASKS[TRANSITION].setup[0].args[0] if s["type"] == "download"]
    serve(tmp_path, monkeypatch, {step["parameters"]["files"][0]["url"]: _deck})
    solution: list[Any] = [
        acted(ClickAction(point=(266, 29))),  # the Slide menu
        acted(ClickAction(point=(321, 610))),  # Slide Transition: the sidebar's deck of transitions
        acted(ScrollAction(point=(1093, 250), scroll=(0, 300))),  # down to Cover, Dissolve, Random
        acted(ClickAction(point=(1102, 172))),  # Dissolve (its preview plays on the slide)
        *saved(DECK),
    ]
    assert run_task(TASKS[TRANSITION], "Ch4 Video Effect.pptx", solution) == (0.0, 1.0)


def gimp_ready(env: Any, title: str, timeout: float = 400.0) -> None:
    """Until GIMP's window ``title`` shows its menu bar (the light letters of "File" on the dark
    theme's bar, top left): GIMP takes a minute to start on a loaded box."""
    deadline = time.monotonic() + timeout
    titles: list[str] = []
    while time.monotonic() < deadline:
        titles = _titles(env)
        if any(title in t for t in titles):
            observation, *_ = env.step(WaitAction(time=500))
            menu = np.asarray(observation["screenshot"])[22:36, 5:35]
            if (menu.min(axis=-1) > 180).sum() > 10:
                time.sleep(2.0)
                return
        time.sleep(1.0)
    pytest.fail(f"no ready GIMP window {title!r} in {timeout} s: {titles}")


def themed(env: Any, timeout: float = 120.0) -> None:
    """A look until GIMP has written the light theme to its ``gimprc`` (it saves its settings a
    moment after the Preferences close), as an agent waits for a change to take."""
    controller = env.unwrapped.controller
    files = HomeFiles(Path(controller.state.home), controller.state.file_owner)
    gimprc = controller.desktop.resolve_path("~/.config/GIMP/2.10/gimprc")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if b'(theme "Light")' in files.read_bytes(gimprc, 1 << 20):
                return
        except OSError:
            pass
        time.sleep(0.5)
    pytest.fail(f"GIMP did not save the light theme within {timeout} s")


def test_gimp_change_the_theme_from_dark_to_light() -> None:
    need_desktop()
    if shutil.which("gimp") is None:
        pytest.skip("GIMP is not installed (docker/ubuntu/packages.txt)")
    solution: list[Any] = [
        acted(PressAction(keys=["alt", "e"])),  # the Edit menu
        ClickAction(point=(105, 623)),  # Preferences
        until_window("Preferences"),
        acted(ClickAction(point=(96, 483))),  # Interface > Theme: Dark, Gray, Light, System
        acted(ClickAction(point=(290, 451))),  # Light
        ClickAction(point=(753, 688)),  # OK
        until_window("Preferences", present=False),
        themed,
    ]
    assert run_task(TASKS[THEME], "GNU Image Manipulation Program", solution, ready=gimp_ready) == (0.0, 1.0)


@pytest.mark.timeout(900)
def test_with_the_shell_allowed_open_gives_the_app_the_files_real_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``allow_shell`` an app's arguments pass unchanged: OSWorld's ``/home/user/Desktop/x``
    must reach it as the file's real path (``~/Desktop/x`` was opened as a missing file)."""
    need_desktop()
    (step,) = [s for s in TASKS[TRANSITION].setup[0].args[0] if s["type"] == "download"]
    serve(tmp_path, monkeypatch, {step["parameters"]["files"][0]["url"]: _deck})
    env = gymnasium.make("hud/Ubuntu-v0", task=TASKS[TRANSITION], in_container=False, allow_shell=True)
    try:
        _, info = env.reset(seed=0)
        assert info["status"] == "ok", info
        until_window("Ch4 Video Effect.pptx - LibreOffice Impress", timeout=400.0)(env)
    finally:
        env.close()
