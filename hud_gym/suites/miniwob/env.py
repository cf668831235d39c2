"""What ``hud/Browser-v0`` does for MiniWoB++ tasks to behave as the official ``miniwob`` env.

- **Reward processors** (``reward_processor=``), MiniWoB's names and meanings
  (``miniwob.reward``): ``"raw"`` (the default: the task's reward without time decay, -1..1,
  partial rewards kept), ``"original"`` (the official env's default: decayed by the time taken,
  against the task's own time limit), ``"binary"`` (1 if the raw reward is 1, else -1) and
  ``"thresholded"`` (1 if the raw reward reaches ``reward_threshold``, else -1). Every one is 0
  until the episode is done. The step's ``info["grade"]`` keeps the raw grade.
- **Terminal frame** (``terminal_frame=``): ``"page"`` (the default: the page as it is, MiniWoB's
  done cover included) or ``"black"`` (the official env's all-zero screenshot once done).
- **Observed region**: a MiniWoB task observes its task area (:data:`~hud_gym.suites.miniwob.MINIWOB_TASK_AREA`,
  160x210, as the official env) unless the env is given ``observation_crop`` or
  ``observation_size``.
- **Data mode**: ``reset(options={"data_mode": "test"})`` starts this episode and the next ones
  in that mode (``core.setDataMode``; the ``*-transfer`` and ``*-nl`` tasks read it), as the
  official env's ``reset`` option; an unknown option is refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, get_args

from hud_gym.evaluation import Grade
from hud_gym.task import FunctionConfig, Task

__all__ = [
    "REWARD_PROCESSORS",
    "TERMINAL_FRAMES",
    "RewardProcessor",
    "TerminalFrame",
    "all_miniwob",
    "check_options",
    "is_miniwob",
    "process_reward",
    "with_data_mode",
]

RewardProcessor = Literal["raw", "original", "binary", "thresholded"]
TerminalFrame = Literal["page", "black"]
REWARD_PROCESSORS: tuple[str, ...] = get_args(RewardProcessor)
TERMINAL_FRAMES: tuple[str, ...] = get_args(TerminalFrame)


def check_options(reward_processor: str, reward_threshold: float, terminal_frame: str) -> None:
    """Refuse an unknown processor or frame, or a threshold outside MiniWoB's reward range.

    Raises:
        ValueError: naming the bad option.
    """
    if reward_processor not in REWARD_PROCESSORS:
        raise ValueError(f"reward_processor must be one of {REWARD_PROCESSORS}, got {reward_processor!r}")
    if not -1.0 <= reward_threshold <= 1.0:
        raise ValueError(f"reward_threshold must be in [-1, 1] (MiniWoB's rewards), got {reward_threshold}")
    if terminal_frame not in TERMINAL_FRAMES:
        raise ValueError(f"terminal_frame must be one of {TERMINAL_FRAMES}, got {terminal_frame!r}")


def is_miniwob(task: Task | None) -> bool:
    """A task of the MiniWoB++ task sets."""
    return task is not None and (task.metadata or {}).get("benchmark") == "miniwob"


def all_miniwob(tasks: Iterable[Task | None]) -> bool:
    """Every task (at least one) is a MiniWoB++ task."""
    tasks = list(tasks)
    return bool(tasks) and all(is_miniwob(task) for task in tasks)


def process_reward(processor: str, grade: Grade, threshold: float = 1.0) -> float:
    """The reward of a ``miniwob_reward`` grade under MiniWoB's reward ``processor``
    (``miniwob.reward``'s functions, on the metadata the official env gives them)."""
    from miniwob import reward

    metadata = {
        "done": grade.done,
        "raw_reward": float(grade.info.get("raw_reward", grade.reward)) if grade.done else 0.0,
        "env_reward": float(grade.info.get("time_reward", grade.reward)) if grade.done else 0.0,
    }
    if processor == "original":
        return reward.get_original_reward(metadata)
    if processor == "binary":
        return reward.get_binary_reward(metadata)
    if processor == "thresholded":
        return reward.get_thresholded_reward(metadata, threshold=threshold)
    return reward.get_raw_reward(metadata)


def with_data_mode(task: Task, mode: Any) -> Task:
    """``task`` whose ``miniwob_start`` call starts its episodes in data ``mode``.

    Raises:
        ValueError: ``mode`` is not a non-empty string, or ``task`` is not a MiniWoB++ task.
    """
    if not isinstance(mode, str) or not mode:
        raise ValueError(f"reset option 'data_mode' must be a non-empty string such as 'test', got {mode!r}")
    if not is_miniwob(task) or not task.setup:
        raise ValueError(f"reset option 'data_mode' applies to MiniWoB++ tasks, not {task.id!r}")
    setup = [
        FunctionConfig(**{**call.model_dump(), "kwargs": {**call.kwargs, "mode": mode}})
        if call.function == "miniwob_start"
        else call
        for call in task.setup
    ]
    return task.model_copy(update={"setup": setup})
