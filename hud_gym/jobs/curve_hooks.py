"""Learning curves to TensorBoard, when ``tensorboardX`` is installed (the ``train`` extra).

:func:`write_tensorboard` writes each :class:`~hud_gym.jobs.curves.CurvePoint` whose tag value is
an integer (a checkpoint's step) as scalars at that step: ``success/<task set>`` and
``success/<task set>/<task>`` (success rates in [0, 1]), ``reward/<task set>`` (mean reward).
A job with no graded run writes no success scalar (an absent figure is not 0). Points whose value
is not an integer are left out and counted in the result.

Example:
    >>> write_tensorboard(learning_curves(get_store(), "ckpt"), Path("runs/eval"))   # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hud_gym.errors import HudGymError
from hud_gym.jobs.curves import CurvePoint

__all__ = ["CurveHookUnavailableError", "TensorBoardResult", "write_tensorboard"]


class CurveHookUnavailableError(HudGymError, ImportError):
    """The package a curve hook writes with is not installed."""


@dataclass(frozen=True)
class TensorBoardResult:
    """What :func:`write_tensorboard` wrote: the event file's directory, scalars written, and the
    tag values of the points left out (not integers)."""

    logdir: Path
    scalars: int
    skipped: list[str]


def _step(value: str) -> int | None:
    try:
        return int(value)
    except ValueError:
        return None


def write_tensorboard(points: Sequence[CurvePoint], logdir: Path) -> TensorBoardResult:
    """Write ``points`` as TensorBoard scalars under ``logdir`` (see the module docstring).

    Raises:
        CurveHookUnavailableError: ``tensorboardX`` is not installed.
    """
    try:
        from tensorboardX import SummaryWriter
    except ImportError:
        raise CurveHookUnavailableError(
            "writing TensorBoard curves needs tensorboardX: pip install 'hud-gym[train]' (or tensorboardX)"
        ) from None
    logdir.mkdir(parents=True, exist_ok=True)
    scalars, skipped = 0, []
    writer = SummaryWriter(logdir=str(logdir))
    try:
        for point in points:
            step = _step(point.value)
            if step is None:
                skipped.append(point.value)
                continue
            name = point.taskset or "tasks"
            figures = {f"success/{name}": point.success_rate, f"reward/{name}": point.mean_reward}
            figures.update({f"success/{name}/{task}": rate for task, rate in point.per_task.items()})
            for tag, figure in figures.items():
                if figure is not None:
                    writer.add_scalar(tag, figure, global_step=step)
                    scalars += 1
    finally:
        writer.close()
    return TensorBoardResult(logdir, scalars, skipped)
