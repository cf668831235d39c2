"""hud-gym: local, self-hostable Gymnasium environments for computer-use agents.

``import hud_gym`` registers ``hud/QA-v0`` (and the other gym ids as they become available).

Example:
    >>> import gymnasium, hud_gym
    >>> env = gymnasium.make("hud/QA-v0", taskset="qa-basic")
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step(hud_gym.ResponseAction(text="Paris"))
"""

from hud_gym.actions import (
    CLA,
    ActionError,
    ActionType,
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
from hud_gym.evaluation import (
    FunctionArgumentError,
    FunctionContext,
    Grade,
    SetupError,
    UnknownFunctionError,
    evaluate_function,
    setup_function,
)
from hud_gym.jobs import Job, arun_job, create_job, current_job, list_jobs, load_job, register_job, run_job
from hud_gym.keys import KEYS, UnknownKeyError, normalize_key, normalize_keys
from hud_gym.errors import HudGymError, HudGymWarning
from hud_gym.make import make
from hud_gym.registration import register_envs
from hud_gym.spaces import ActionSpaceConfig, decode, encode, sanitize_text
from hud_gym.task import FunctionConfig, Task, TaskFileError, TaskSet, expand_config
from hud_gym.tasksets import available_tasksets, get_task, load_taskset, register_taskset
from hud_gym.formats import ConversionReport, convert_gaia, convert_hud, convert_osworld, convert_webvoyager, detect_format

register_envs()

__version__ = "0.1.0"

__all__ = [
    "CLA",
    "KEYS",
    "ActionError",
    "ActionSpaceConfig",
    "ActionType",
    "CLAAction",
    "ClickAction",
    "ConversionReport",
    "CustomAction",
    "DragAction",
    "FunctionArgumentError",
    "FunctionConfig",
    "FunctionContext",
    "Grade",
    "Job",
    "KeyDownAction",
    "KeyUpAction",
    "MoveAction",
    "Point",
    "PositionFetch",
    "PressAction",
    "ResponseAction",
    "ScreenshotFetch",
    "ScrollAction",
    "SetupError",
    "Task",
    "TaskFileError",
    "TaskSet",
    "TypeAction",
    "UnknownFunctionError",
    "UnknownKeyError",
    "WaitAction",
    "arun_job",
    "available_tasksets",
    "create_job",
    "current_job",
    "convert_gaia",
    "convert_hud",
    "convert_osworld",
    "convert_webvoyager",
    "decode",
    "detect_format",
    "encode",
    "evaluate_function",
    "expand_config",
    "get_task",
    "list_jobs",
    "load_job",
    "load_taskset",
    "make",
    "normalize_key",
    "normalize_keys",
    "parse_action",
    "parse_actions",
    "register_envs",
    "register_job",
    "register_taskset",
    "run_job",
    "sanitize_text",
    "setup_function",
]
