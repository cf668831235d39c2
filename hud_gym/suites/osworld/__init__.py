"""OSWorld (xlang-ai/OSWorld), a suite of the Ubuntu gym: its task files, unchanged, on ``hud/Ubuntu-v0``.

- :mod:`.mapper`: an OSWorld example as a task (``osworld_config`` setup, ``osworld_evaluate``
  grade), or why it does not run here (:mod:`.support`); ``format="osworld"``
  (:mod:`hud_gym.formats.osworld`) converts files and directories of examples with it;
- :mod:`.steps`: OSWorld's ``config`` / ``postconfig`` steps in the episode's sandbox;
- :mod:`.getters`, :mod:`.metrics_text`, :mod:`.metrics_office` (with :mod:`.metrics_sheets`),
  :mod:`.metrics_slides`, :mod:`.grading`: OSWorld's getters and metric functions, and its way of
  combining them;
- :mod:`.files`: the content cache and the offline mirror (``HUD_GYM_OSWORLD_FILES``);
- :mod:`.taskset`: ``OSWorld-Ubuntu`` from a local checkout (``HUD_GYM_OSWORLD``).

``docs/osworld.md`` has the tables (what is supported, and the grading parity with OSWorld's own code).

Example:
    >>> SUITE.gym, sorted(SUITE.tasksets)
    ('ubuntu', ['OSWorld-Ubuntu'])
"""

from __future__ import annotations

from hud_gym.core.suite import Suite

__all__ = ["SUITE"]

SUITE = Suite(
    name="osworld",
    gym="ubuntu",
    tasksets={"OSWorld-Ubuntu": "hud_gym.suites.osworld.taskset:load"},
    function_modules=("hud_gym.suites.osworld.steps", "hud_gym.suites.osworld.grading"),
    description="OSWorld's Ubuntu tasks (a local checkout), graded as OSWorld grades them",
)
"""The OSWorld suite."""
