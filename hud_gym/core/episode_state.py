"""The state of one env's episodes, and what the episode runner needs from its env.

:class:`EpisodeHost` is the env as the runner (:class:`~hud_gym.core.episode.EpisodeRunner`) sees
it: its settings, its listeners and suites, and the hooks a gym overrides (the controller it makes,
its observations). :class:`EpisodeState` is what the runner's parts share (the controller, the
current task and its calls, the step count, whether an episode is open). Neither imports the
env (:mod:`hud_gym.core.env`), which owns a runner: the types only point downward.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from hud_gym.controllers.base import Controller
from hud_gym.core.listeners import EnvListener
from hud_gym.core.scaling import ScreenMapping
from hud_gym.core.suite_hooks import EnvSuites
from hud_gym.evaluation import BoundCall, FunctionContext, Grade
from hud_gym.spaces import ActionSpaceConfig
from hud_gym.task import Task, TaskSet

if TYPE_CHECKING:
    import numpy as np

    from hud_gym.controllers.base import Frame

__all__ = ["EpisodeHost", "EpisodeState", "Observation", "StepResult"]

Observation = dict[str, Any]
StepResult = tuple[Observation, float, bool, bool, dict[str, Any]]


class EpisodeHost(Protocol):
    """What an :class:`~hud_gym.core.episode.EpisodeRunner` needs from its env (a
    :class:`~hud_gym.core.env.HudEnv`): the env's settings, listeners and suites, and the hooks
    a gym's env class overrides."""

    np_random: np.random.Generator
    placement: str
    step_timeout: float
    reset_timeout: float
    evaluate_every_step: bool
    evaluate_combine: str
    screen_mapping: ScreenMapping
    screen_size: tuple[int, int]
    observation_size: tuple[int, int]
    action_space_config: ActionSpaceConfig
    observation_crop: tuple[int, int, int, int] | None
    listeners: list[EnvListener]
    suites: EnvSuites
    reset_options: frozenset[str]
    _task: Task | None
    _taskset: TaskSet | None

    @property
    def max_episode_steps(self) -> int | None:
        """Steps before truncation."""
        ...

    def _new_controller(self) -> Controller:
        """The env's controller, not started (in this process or at its placement)."""
        ...

    def _observation(self, frame: Frame) -> Observation:
        """The observation of ``frame`` (the env keeps it for ``render`` and repeats)."""
        ...

    def _repeat_observation(self) -> Observation:
        """The last observation again (a failed step's)."""
        ...

    def _prompt(self) -> str:
        """The episode's instruction, as the observation's text starts with it."""
        ...

    def _seed_episode(self, seed: int | None) -> None:
        """Seed the env's ``np_random`` (Gymnasium's ``reset(seed=...)``)."""
        ...


@dataclass
class EpisodeState:
    """The episode state one env's runner and its parts share.

    Attributes:
        controller: the live controller (``None`` before the first reset and after close).
        restart_controller: the next reset restarts the controller (it failed or timed out).
        closed: the env was closed (a reset opens it again).
        task: the current episode's task.
        evaluate_calls: the task's evaluate calls, resolved at reset.
        context: the episode's function context (``None`` before the first reset).
        steps: steps taken in the episode.
        episode_over: the episode ended (a step now is ``episode_over``).
        needs_reset: no episode is open (before the first reset, after a failed one, after close).
        last_grade: the last grade obtained in the episode.
    """

    controller: Controller | None = None
    restart_controller: bool = False
    closed: bool = False
    task: Task | None = None
    evaluate_calls: list[BoundCall] = field(default_factory=list)
    context: FunctionContext | None = None
    steps: int = 0
    episode_over: bool = True
    needs_reset: bool = True
    last_grade: Grade | None = None
