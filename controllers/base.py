"""The controller protocol: the only surface an environment uses to drive a browser, a desktop
or a QA session.

A controller is async and owns the live resources of one environment. The env core calls, in
order: :meth:`Controller.start` (lazily, on the first reset), then per episode
:meth:`Controller.reset`, the task's setup calls (:meth:`Controller.setup`), :meth:`Controller.step`
for each action, :meth:`Controller.observe` after each step, :meth:`Controller.evaluate`, and finally
:meth:`Controller.close`. :meth:`Controller.health` says whether the resources are still alive.

Errors: a bad action raises :class:`~hud_gym.actions.ActionError` (the episode goes on); a dead
browser or display raises :class:`ControllerError` (the env reports ``status="env_error"`` and
restarts the controller on the next reset).
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from hud_gym.actions import CLAAction
from hud_gym.errors import HudGymError
from hud_gym.evaluation import BoundCall, FunctionContext, Grade, Phase, resolve_calls, run_evaluate, run_setup
from hud_gym.task import FunctionConfig, Task

__all__ = ["ActionOutcome", "Controller", "ControllerError", "Frame"]


class ControllerError(HudGymError, RuntimeError):
    """The controlled resource failed (crashed browser, dead display): not the agent's fault."""


@dataclass
class Frame:
    """What a controller observes: a screenshot and the text it reports.

    Attributes:
        screenshot: ``(H, W, 3)`` uint8 pixels of the whole screen, or of ``region``.
        region: ``(x, y, width, height)`` of the screen the screenshot shows (``None``: all of it).
    """

    screenshot: np.ndarray
    text: str = ""
    info: dict[str, Any] = field(default_factory=dict)
    region: tuple[int, int, int, int] | None = None


@dataclass
class ActionOutcome:
    """What executing one action produced.

    Attributes:
        response: a final response the action submitted (e.g. typing + enter in the QA gym).
        info: data to report in the step's ``info`` (e.g. ``{"position": (x, y)}``).
    """

    response: str | None = None
    info: dict[str, Any] = field(default_factory=dict)


class Controller(abc.ABC):
    """Base of every controller. Subclasses set :attr:`gym` and implement the abstract methods.

    Args:
        screen_size: ``(width, height)`` of the screen in pixels.
    """

    gym: ClassVar[str] = ""
    supports_capture_region: ClassVar[bool] = False
    """Whether :attr:`capture_region` is honoured (frames then show just that region)."""

    def __init__(self, screen_size: tuple[int, int] = (1280, 720)) -> None:
        self.screen_size = screen_size
        self.capture_region: tuple[int, int, int, int] | None = None
        """The only part of the screen the env observes; a controller that supports it captures
        just that region, which is cheaper (see :attr:`Frame.region`)."""

    @abc.abstractmethod
    async def start(self) -> None:
        """Acquire the resources (launch a browser, start a display). Called once, lazily."""

    @abc.abstractmethod
    async def reset(self, task: Task | None, seed: int | None) -> None:
        """Bring the resources to a clean state for a new episode of ``task``."""

    @abc.abstractmethod
    async def step(self, action: CLAAction) -> ActionOutcome:
        """Execute one action (coordinates in screen pixels). ``ResponseAction`` never reaches here."""

    @abc.abstractmethod
    async def observe(self) -> Frame:
        """A fresh frame showing the effect of every action executed so far."""

    async def health(self) -> bool:
        """True while the resources are usable."""
        return True

    @abc.abstractmethod
    async def close(self) -> None:
        """Release every resource. Must be safe to call twice."""

    # Setup and evaluate run the registered functions of this controller's gym with the
    # controller in the context; a remote controller overrides them to run on its side.

    def resolve(self, phase: Phase, configs: Sequence[FunctionConfig] | None) -> list[BoundCall]:
        """Resolve and check the calls of ``configs`` for this gym (raises before anything runs)."""
        return resolve_calls(phase, self.gym, configs)

    async def setup(self, calls: Sequence[BoundCall], ctx: FunctionContext) -> list[Any]:
        """Run setup calls in order."""
        return await run_setup(calls, ctx)

    async def evaluate(self, calls: Sequence[BoundCall], ctx: FunctionContext, combine: str = "mean") -> Grade:
        """Run evaluate calls and combine their grades."""
        return await run_evaluate(calls, ctx, combine)
