"""``desktop-basic``, a suite of the Ubuntu gym: 14 offline tasks (``desktop-basic.json``) in
the Tk text editor and xterm, graded by the desktop's state or the final response, with the
desktop gym's own functions.

Example:
    >>> load().id
    'desktop-basic'
"""

from __future__ import annotations

from hud_gym.core.suite import Suite
from hud_gym.task import TaskSet
from hud_gym.tasksets import packaged_taskset

__all__ = ["SUITE", "load"]


def load() -> TaskSet:
    """The ``desktop-basic`` task set (``load_taskset("desktop-basic")``)."""
    return packaged_taskset(__name__, "desktop-basic.json")


SUITE = Suite(
    name="desktop-basic",
    gym="ubuntu",
    tasksets={"desktop-basic": f"{__name__}:load"},
    description="small offline desktop task set (editor, xterm)",
)
"""The ``desktop-basic`` suite."""
