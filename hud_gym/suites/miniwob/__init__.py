"""MiniWoB++ (Farama), a suite of the browser gym: its task sets, functions, env options and hooks.

- :mod:`.tasks`: the task sets (``miniwob``, ``miniwob-official``, ``miniwob-flight``), the
  loopback server of the ``miniwob`` package's pages, and the ``miniwob_start`` /
  ``miniwob_reward`` functions;
- :mod:`.env`: the env options (``reward_processor``, ``reward_threshold``, ``terminal_frame``)
  and the ``data_mode`` reset option, as the official env has them;
- :mod:`.extension`: the env's hooks (:class:`~hud_gym.core.suite.SuiteExtension`);
- :mod:`.dom` and :mod:`.controller_hooks`: MiniWoB's own DOM observation
  (``info["dom_elements"]``) and element actions (``click_element``, ``type_field``), added to the
  browser controller.

:data:`SUITE` says all of that; :mod:`hud_gym.suites` registers it. MiniWoB tasks observe their
task area (:data:`MINIWOB_TASK_AREA`) unless the env is given ``observation_crop`` or
``observation_size``.

Example:
    >>> SUITE.gym, sorted(SUITE.tasksets)
    ('browser', ['miniwob', 'miniwob-flight', 'miniwob-official'])
"""

from __future__ import annotations

from hud_gym.core.suite import Suite

__all__ = ["MINIWOB_TASK_AREA", "SUITE"]

MINIWOB_TASK_AREA: tuple[int, int, int, int] = (0, 0, 160, 210)
"""``(x, y, width, height)`` of a MiniWoB task's area: use it as ``observation_crop``."""

_TASKS = "hud_gym.suites.miniwob.tasks"

SUITE = Suite(
    name="miniwob",
    gym="browser",
    tasksets={
        "miniwob": f"{_TASKS}:miniwob_taskset",
        "miniwob-flight": f"{_TASKS}:miniwob_flight_taskset",
        "miniwob-official": f"{_TASKS}:miniwob_official_taskset",
    },
    function_modules=(_TASKS,),
    options={"reward_processor": "raw", "reward_threshold": 1.0, "terminal_frame": "page"},
    reset_options=frozenset({"data_mode"}),
    extension="hud_gym.suites.miniwob.extension:MiniWoBExtension",
    controller_hooks="hud_gym.suites.miniwob.controller_hooks:CONTROLLER_HOOKS",
    observation_crop=MINIWOB_TASK_AREA,
    screen_size=(500, 320),
    description="MiniWoB++ (Farama) task pages, served on loopback",
)
"""The MiniWoB++ suite."""
