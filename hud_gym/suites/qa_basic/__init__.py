"""``qa-basic``, a suite of the QA gym: a small offline task set (``qa-basic.json``) that uses
every shared response evaluator, the target default, choices and a setup passage.

Example:
    >>> len(load()) > 0
    True
"""

from __future__ import annotations

from hud_gym.core.suite import Suite
from hud_gym.task import TaskSet
from hud_gym.tasksets import packaged_taskset

__all__ = ["SUITE", "load"]


def load() -> TaskSet:
    """The ``qa-basic`` task set (``load_taskset("qa-basic")``)."""
    return packaged_taskset(__name__, "qa-basic.json")


SUITE = Suite(
    name="qa-basic",
    gym="qa",
    tasksets={"qa-basic": f"{__name__}:load"},
    description="small offline QA task set",
)
"""The ``qa-basic`` suite."""
