"""Helpers of the desktop tests that work whichever process runs the env's controller.

(Imported as ``desktop_helpers``: pytest puts this folder on ``sys.path`` for its test modules.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from Xlib import display as xdisplay

from hud_gym import Task
from hud_gym.controllers.x11.xauth import process_authority

HOME_TASK = Task(id="home", prompt="", gym="hud-ubuntu", evaluate=("file_exists", "."))
"""A task whose grade names the env's home (``info["path"]``): see :func:`desktop_home`. No prompt,
so the observation text is the desktop's own."""


def desktop_home(env: Any) -> Path:
    """The env's home directory (on this machine, whichever process runs the controller).

    Through the env's API (the grade of :data:`HOME_TASK`) when that is the episode's task, else
    from the in-process controller.
    """
    if env.unwrapped.task == HOME_TASK:
        grade = env.unwrapped.evaluate()
        assert not grade.is_error, grade
        return Path(grade.info["path"])
    return Path(env.unwrapped.controller.state.home)


def open_display(name: str) -> xdisplay.Display:
    """A python-xlib connection of this process to an env's display (with the display's cookie)."""
    with process_authority().connecting():
        return xdisplay.Display(name)
