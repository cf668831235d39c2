"""OpenEnv's typed Action, Observation and State for a hud-gym env (``openenv-core`` types).

- :class:`HudGymAction`: CLA actions (``actions``: one env step), validated by the CLA models on
  both sides (an unknown field or type is refused, naming it).
- :class:`HudGymObservation`: the screenshot (base64 PNG), the report of the step
  (:class:`~hud_gym.protocols.session.StepReport`'s fields), ``reward`` (``None`` when the step
  was not graded or grading failed: OpenEnv's ``reward`` is optional) and ``done``.
- :class:`HudGymState`: the episode's id, step count, task and last status.
"""

from __future__ import annotations

from typing import Any

from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field, model_validator

from hud_gym.actions import CLA

__all__ = ["HudGymAction", "HudGymObservation", "HudGymState"]


class HudGymAction(Action):
    """One env step: CLA actions executed in order; or, with ``evaluate`` and no actions, a grade
    of the current state (HUD's ``evaluate``: the reward, or ``None`` with ``eval_error``)."""

    actions: list[CLA] = Field(default_factory=list, max_length=100, description="CLA actions, executed in order")
    evaluate: bool = Field(default=False, description="Grade the current state instead of stepping")

    @model_validator(mode="after")
    def _one_of(self) -> HudGymAction:
        if bool(self.actions) == self.evaluate:
            raise ValueError("give either actions (a step) or evaluate=true (a grade of the current state)")
        return self


class HudGymObservation(Observation):
    """What a reset or step of a hud-gym env observed and reported."""

    screenshot: str = Field(default="", description="The screen as a base64 PNG")
    text: str = Field(default="", description="The observation's text")
    prompt: str | None = Field(default=None, description="The task's instruction (after a reset)")
    status: str = Field(default="ok", description="The step's status (ok, action_error, eval_error, timeout, ...)")
    error: str | None = Field(default=None, description="What went wrong when the status is not ok")
    terminated: bool = False
    truncated: bool = False
    task_id: str | None = None
    step: int = 0
    actions: list[dict[str, Any]] = Field(default_factory=list, description="The CLA actions the env executed")
    info: dict[str, Any] = Field(default_factory=dict, description="The env's info, bounded and JSON-safe")


class HudGymState(State):
    """The episode of a hud-gym env."""

    task_id: str | None = None
    status: str = "episode_over"
    gym: str = ""
