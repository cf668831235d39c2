"""hud-gym: local, self-hostable Gymnasium environments for computer-use agents.

``import hud_gym`` registers the gym ids (``hud/QA-v0``, ``hud/Browser-v0``, ``hud/Ubuntu-v0``
and any gym registered with :func:`register_gym`) and the suites that extend them
(:mod:`hud_gym.suites`: MiniWoB++, ``qa-basic``, ``desktop-basic``; :func:`register_suite`). The job store (:mod:`hud_gym.jobs`) and the
task-set formats (:mod:`hud_gym.formats`) are imported when first used: ``hud_gym.run_job``,
``hud_gym.Job``, a ``job=`` argument or a task file read, not by ``import hud_gym``.

Example:
    >>> import gymnasium, hud_gym
    >>> env = gymnasium.make("hud/QA-v0", taskset="qa-basic")
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step(hud_gym.ResponseAction(text="Paris"))
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

from hud_gym.actions import (
    CLA,
    ActionError,
    CLAAction,
    ClickAction,
    CustomAction,
    DragAction,
    KeyDownAction,
    KeyUpAction,
    MoveAction,
    Point,
    PositionFetch,
    PressAction,
    ResponseAction,
    ScreenshotFetch,
    ScrollAction,
    TypeAction,
    WaitAction,
    parse_action,
    parse_actions,
)
from hud_gym.actions import (
    ActionType as ActionType,
)
from hud_gym.controllers.base import Controller
from hud_gym.core.env import HudEnv
from hud_gym.core.gym_options import GymOptions, InvalidOptionError
from hud_gym.core.listeners import set_env_linker
from hud_gym.core.suite import Suite, register_suite
from hud_gym.envs.browser_options import BrowserOptions
from hud_gym.envs.qa_options import QAOptions
from hud_gym.envs.ubuntu_options import UbuntuOptions
from hud_gym.errors import HudGymError, HudGymWarning
from hud_gym.evaluation import (
    FunctionArgumentError as FunctionArgumentError,
)
from hud_gym.evaluation import (
    FunctionContext,
    Grade,
    evaluate_function,
    setup_function,
)
from hud_gym.evaluation import (
    SetupError as SetupError,
)
from hud_gym.evaluation import (
    UnknownFunctionError as UnknownFunctionError,
)
from hud_gym.gyms import GymType, get_gym, register_gym
from hud_gym.keys import KEYS as KEYS
from hud_gym.keys import UnknownKeyError as UnknownKeyError
from hud_gym.keys import normalize_key as normalize_key
from hud_gym.keys import normalize_keys as normalize_keys
from hud_gym.make import make
from hud_gym.registration import register_envs
from hud_gym.spaces import ActionSpaceConfig, decode, encode
from hud_gym.spaces import sanitize_text as sanitize_text
from hud_gym.suites import BUILTIN_SUITES as BUILTIN_SUITES
from hud_gym.task import FunctionConfig as FunctionConfig
from hud_gym.task import Task, TaskFileError, TaskSet
from hud_gym.task import expand_config as expand_config
from hud_gym.tasksets import available_tasksets, get_task, load_taskset, register_taskset, set_file_reader
from hud_gym.trajectory import Trajectory

if TYPE_CHECKING:
    from hud_gym.formats import ConversionReport as ConversionReport
    from hud_gym.formats import convert_gaia as convert_gaia
    from hud_gym.formats import convert_hud as convert_hud
    from hud_gym.formats import convert_osworld as convert_osworld
    from hud_gym.formats import convert_webvoyager as convert_webvoyager
    from hud_gym.formats import detect_format as detect_format
    from hud_gym.jobs import Job, arun_job, create_job, list_jobs, load_job, register_job, run_job
    from hud_gym.jobs import current_job as current_job

__version__ = "0.1.0"

__all__ = [
    "CLA",
    "ActionError",
    "ActionSpaceConfig",
    "BrowserOptions",
    "CLAAction",
    "ClickAction",
    "Controller",
    "CustomAction",
    "DragAction",
    "FunctionContext",
    "Grade",
    "GymOptions",
    "GymType",
    "HudEnv",
    "HudGymError",
    "HudGymWarning",
    "InvalidOptionError",
    "Job",
    "KeyDownAction",
    "KeyUpAction",
    "MoveAction",
    "Point",
    "PositionFetch",
    "PressAction",
    "QAOptions",
    "ResponseAction",
    "ScreenshotFetch",
    "ScrollAction",
    "Suite",
    "Task",
    "TaskFileError",
    "TaskSet",
    "Trajectory",
    "TypeAction",
    "UbuntuOptions",
    "WaitAction",
    "arun_job",
    "available_tasksets",
    "create_job",
    "decode",
    "encode",
    "evaluate_function",
    "get_gym",
    "get_task",
    "list_jobs",
    "load_job",
    "load_taskset",
    "make",
    "parse_action",
    "parse_actions",
    "register_gym",
    "register_job",
    "register_suite",
    "register_taskset",
    "run_job",
    "setup_function",
]
"""What a user needs. Also importable from here, as before: ``ActionType``, ``FunctionConfig``,
``KEYS``, ``SetupError``, ``UnknownFunctionError``, ``FunctionArgumentError``, ``UnknownKeyError``,
``expand_config``, ``normalize_key(s)``, ``sanitize_text``, ``register_envs``, ``current_job`` and
the format converters (``convert_hud``, ``convert_gaia``, ``convert_osworld``, ``convert_webvoyager``,
``detect_format``, ``ConversionReport``)."""

_LAZY: dict[str, str] = {
    **dict.fromkeys(
        ("Job", "arun_job", "create_job", "current_job", "list_jobs", "load_job", "register_job", "run_job"),
        "hud_gym.jobs",
    ),
    **dict.fromkeys(
        ("ConversionReport", "convert_gaia", "convert_hud", "convert_osworld", "convert_webvoyager", "detect_format"),
        "hud_gym.formats",
    ),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hud_gym' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


# The lower layers' hooks, wired to the upper layers lazily: the jobs are imported when an env is
# given a job (hud_gym.jobs then installs its own linker), the formats when a task file is read.
def _link_env(env: HudEnv, job: Any) -> None:
    if job is None and not getattr(env, "live_view", False) and "hud_gym.jobs.context" not in sys.modules:
        return  # no job given, no live view, and no current job can exist
    from hud_gym.jobs.linking import link_env

    link_env(env, job)


def _read_taskset(path: Any, format: str | None) -> TaskSet:
    from hud_gym.formats import read_taskset

    return read_taskset(path, format)


set_env_linker(_link_env)
set_file_reader(_read_taskset)
register_envs()
