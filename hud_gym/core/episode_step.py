"""One step of an episode, in three phases (act, observe, grade), and the episode's grading.

:class:`StepRunner` is a part of :class:`~hud_gym.core.episode.EpisodeRunner` (the episode rules
are in :mod:`hud_gym.core.episode`): each phase sets the step's status on its
:class:`~hud_gym.core.step_status.StepOutcome`, and what a status does to the reward, the episode
and the controller is one table, :data:`~hud_gym.core.step_status.STATUS_RULES`.
"""

from __future__ import annotations

import asyncio
import math
import time
import warnings
from typing import Any

from gymnasium.error import ResetNeeded

from hud_gym.actions import ActionError, CLAAction, ResponseAction, parse_actions
from hud_gym.controllers.base import Controller
from hud_gym.core.deadline import within
from hud_gym.core.episode_state import EpisodeHost, EpisodeState, Observation, StepResult
from hud_gym.core.step_status import StepOutcome, StepStatus
from hud_gym.core.timings import Timings
from hud_gym.evaluation import Grade, is_absent
from hud_gym.evaluation.grade import check_reward
from hud_gym.spaces import decode, is_encoded_action

__all__ = ["StepRunner"]


class StepRunner:
    """The steps and the grading of one env's episodes.

    Args:
        host: the env.
        state: the episode state the runner's parts share.
    """

    def __init__(self, host: EpisodeHost, state: EpisodeState) -> None:
        self.host = host
        self.state = state

    @property
    def evaluates_every_step(self) -> bool:
        """Whether this episode grades every step (the task's ``config`` over the env's setting)."""
        task = self.state.task
        if task is not None and task.config and "evaluate_every_step" in task.config:
            return bool(task.config["evaluate_every_step"])
        return self.host.evaluate_every_step

    async def step(self, action: Any) -> StepResult:
        """One step in three phases (act, observe, grade), each setting the step's status on its
        :class:`~hud_gym.core.step_status.StepOutcome`.

        Raises:
            ResetNeeded: no episode is open.
        """
        state, host = self.state, self.host
        if state.needs_reset:
            raise ResetNeeded("call reset() before step()")
        started = time.perf_counter()
        outcome = StepOutcome()
        if state.episode_over:
            warnings.warn("step() called after the episode ended; call reset()", stacklevel=3)
            outcome.set(StepStatus.EPISODE_OVER)
            outcome.info["observed"] = "repeated"
            info = self._finish_info(outcome.info, outcome.timings, started)
            reward = math.nan if outcome.reward is None else outcome.reward  # absent: NaN, with info["status"]
            return host._repeat_observation(), reward, outcome.terminated, outcome.truncated, info
        controller = state.controller
        assert controller is not None and state.context is not None

        await self._act_phase(controller, action, outcome)
        observation = None if outcome.failed else await self._observe_phase(controller, outcome)
        if observation is None:
            observation = host._repeat_observation()
            outcome.info["observed"] = "repeated"
        state.steps += 1
        limit = host.max_episode_steps
        if not outcome.terminated and limit is not None and state.steps >= limit:
            outcome.truncated = True
        if not outcome.failed and (outcome.terminated or outcome.truncated or self.evaluates_every_step):
            await self._grade_phase(controller, outcome)
        return await self._end_step(action, observation, outcome, started)

    def _to_actions(self, action: Any) -> list[CLAAction]:
        if is_encoded_action(action):
            return [decode(action, self.host.action_space_config)]
        return parse_actions(action)

    async def _act_phase(self, controller: Controller, action: Any, outcome: StepOutcome) -> None:
        """The act phase: parse ``action`` and execute it within ``step_timeout`` (an action the
        env cannot parse executes nothing)."""
        timeout = self.host.step_timeout
        try:
            actions = self._to_actions(action)
        except ActionError as exc:
            actions = []
            outcome.set(StepStatus.ACTION_ERROR, str(exc))
        with outcome.timed("action"):
            try:
                await within(self._execute(controller, actions, outcome), timeout=timeout)
            except ActionError as exc:
                outcome.set(StepStatus.ACTION_ERROR, str(exc))
            except asyncio.TimeoutError:
                outcome.set(StepStatus.TIMEOUT, f"the step did not finish within {timeout} s")
            except Exception as exc:  # noqa: BLE001  (any controller failure is reported, never raised)
                outcome.set(StepStatus.ENV_ERROR, f"{type(exc).__name__}: {exc}")

    async def _observe_phase(self, controller: Controller, outcome: StepOutcome) -> Observation | None:
        """The observe phase: the observation after the action (``None`` when it failed)."""
        timeout = self.host.step_timeout
        with outcome.timed("observe"):
            try:
                frame = await within(controller.observe(), timeout=timeout)
                observation = self.host._observation(frame)
                outcome.info.update(frame.info)
                outcome.info["observed"] = "after"
                return observation
            except asyncio.TimeoutError:
                outcome.set(StepStatus.TIMEOUT, f"the observation did not finish within {timeout} s")
            except Exception as exc:  # noqa: BLE001
                outcome.set(StepStatus.ENV_ERROR, f"observation failed: {type(exc).__name__}: {exc}")
        return None

    async def _grade_phase(self, controller: Controller, outcome: StepOutcome) -> None:
        """The grade phase: the evaluator's grade of the episode now, its reward or its failure."""
        with outcome.timed("evaluate"):
            try:
                grade = await self.evaluate()
            except asyncio.TimeoutError:
                grade = self.timeout_grade()
                outcome.set(StepStatus.TIMEOUT, grade.content)
        outcome.info["grade"] = grade
        if outcome.status is StepStatus.TIMEOUT:
            return
        if (grade.is_error or is_absent(grade)) and not await self._controller_healthy(controller):
            # The evaluator did not fail, and its target did not go by the agent's doing:
            # the browser, desktop or server it read died.
            outcome.set(StepStatus.ENV_ERROR, f"the controller failed during the evaluation: {grade.content}")
        elif grade.is_error:
            outcome.set(StepStatus.EVAL_ERROR, grade.content or "the evaluation failed")
        else:
            outcome.graded = float(grade.reward)
            if self.evaluates_every_step and grade.done:
                outcome.terminated = True

    async def _end_step(
        self, action: Any, observation: Observation, outcome: StepOutcome, started: float
    ) -> StepResult:
        """The step's result, after the suites' last word on it, told to the listeners."""
        state, host = self.state, self.host
        assert state.context is not None
        terminated, truncated = outcome.terminated, outcome.truncated
        if terminated or truncated:
            state.episode_over = True
        if outcome.restart_controller:
            state.restart_controller = True
        info = outcome.info
        info.update(state.context.info)
        info["status"] = outcome.status.value
        # The suite of the episode's task has the last word (MiniWoB's reward processors and black terminal frame).
        observation, graded = host.suites.finish_step(host, observation, outcome.reward, terminated, info)
        reward = math.nan if graded is None else float(graded)  # absent: NaN, with info["status"]
        info = self._finish_info(info, outcome.timings, started)
        for listener in host.listeners:
            await listener.on_step(host, action, observation, reward, terminated, truncated, info)
        return observation, reward, terminated, truncated, info

    async def _execute(self, controller: Controller, actions: list[CLAAction], outcome: StepOutcome) -> None:
        context, mapping = self.state.context, self.host.screen_mapping
        assert context is not None
        info = outcome.info
        for index, action in enumerate(actions):
            if isinstance(action, ResponseAction):
                context.final_response = action.text
                outcome.terminated = True
                if index + 1 < len(actions):
                    info["ignored_actions"] = len(actions) - index - 1
                return
            step = await controller.step(mapping.to_screen(action))
            info.update(step.info)
            if "position" in step.info and step.info["position"] is not None:
                info["position"] = mapping.point_to_observation(*step.info["position"])
            if step.response is not None:
                context.final_response = step.response
                outcome.terminated = True
                return

    def _finish_info(self, info: dict[str, Any], timings: dict[str, float], started: float) -> dict[str, Any]:
        host, state = self.host, self.state
        timings["total"] = time.perf_counter() - started
        info["timings"] = Timings(timings)
        info["step"] = state.steps
        info["task_id"] = state.task.id if state.task else None
        info["screen_mapping"] = host.screen_mapping.as_info(host.screen_size, host.observation_size)
        return info

    async def evaluate(self) -> Grade:
        """The grade of the episode now, within ``step_timeout``; a NaN or infinite reward (from
        any controller, a remote one included) becomes an error grade.

        Raises:
            asyncio.TimeoutError: the evaluation did not finish in time (it is cancelled).
        """
        state, host = self.state, self.host
        if state.context is None or state.controller is None:
            return Grade.error("nothing to evaluate: call reset() first")
        task = state.task
        combine = (task.config or {}).get("evaluate_combine", host.evaluate_combine) if task else host.evaluate_combine
        try:
            grade = await within(
                state.controller.evaluate(state.evaluate_calls, state.context, combine), timeout=host.step_timeout
            )
        except asyncio.TimeoutError:
            state.last_grade = self.timeout_grade()
            raise
        except Exception as exc:  # noqa: BLE001  (evaluation failures are grades, not crashes)
            grade = Grade.error(f"evaluation failed: {type(exc).__name__}: {exc}")
        grade = check_reward(grade, (-math.inf, math.inf), "the evaluation")
        state.last_grade = grade
        return grade

    async def _controller_healthy(self, controller: Controller) -> bool:
        """Whether ``controller`` still works (asked after a failed evaluation, to tell an
        evaluator's failure from the controller's)."""
        try:
            return bool(await within(controller.health(), timeout=min(self.host.step_timeout, 10.0)))
        except Exception:  # noqa: BLE001  (a health check that fails or hangs: not healthy)
            return False

    def timeout_grade(self) -> Grade:
        """The error grade of an evaluation that outlived ``step_timeout``."""
        return Grade.error(f"the evaluation did not finish within {self.host.step_timeout} s", timeout=True)
