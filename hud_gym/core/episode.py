"""The async core of every env (:class:`EnvCore`, a base of :class:`~hud_gym.core.env.HudEnv`):
reset, step, evaluate, end and close, as coroutines on the private loop thread
(:mod:`hud_gym.core.loop`), driving a :class:`~hud_gym.controllers.base.Controller`.

Episode rules:

- ``reset`` refuses an option it does not know (:attr:`EnvCore.reset_options`), picks the task
  (``options["task"]``, the task given at make time, or one drawn from the task set with the
  reset seed), checks every setup and evaluate call against the registry,
  resets the controller and runs the setup.
- ``step`` executes one CLA action or a list of them (any of: a CLA model, a dict in CLA form, an
  element of :attr:`~hud_gym.core.env.HudEnv.action_space`). A ``ResponseAction`` stores :attr:`~hud_gym.core.env.HudEnv.final_response` and ends the
  episode (``terminated``); so does an evaluator that says ``done`` when ``evaluate_every_step``.
  ``truncated`` comes after ``max_steps`` steps or when a step times out.
- The reward is the evaluator's reward on the final step (on every step with
  ``evaluate_every_step=True``), else 0.
- **A reward is graded or absent, never a silent 0**: a step that fails returns the float
  ``reward=nan`` (a float, as Gymnasium's wrappers such as ``RecordEpisodeStatistics`` add
  rewards up; :func:`hud_gym.trajectory.graded_reward` reads it as ``None``), with
  ``info["status"]`` naming the failure and ``info["error"]`` the message:

  - ``env_error``: the controller failed (dead browser or display); the episode ends and the next
    ``reset`` restarts the controller;
  - ``timeout``: the action, observation or evaluation outlived ``step_timeout``; the episode is
    truncated and the next ``reset`` restarts the controller (the timeout fires even when the
    controller's call ignores its cancellation: :func:`~hud_gym.core.deadline.within`);
  - ``eval_error``: the evaluator raised, or gave an error grade (``Grade.is_error``: an invalid
    task regex, a task the evaluator cannot grade), a NaN, an infinity, or a reward outside its
    declared range (``[0, 1]`` unless the evaluate function or the task's
    ``config["reward_range"]`` says otherwise); the episode ends only if the step ended it anyway.
    A grading that failed because the controller died meanwhile (its ``health()`` says so: a
    crashed tab, a dead browser, display or server) is an ``env_error``.
  A state where what the evaluator checks is absent (the task's page left or closed, the checked
  file missing, :class:`~hud_gym.evaluation.TargetAbsent`) is graded as the task's failure, not an
  ``eval_error`` (an ``env_error`` when the controller died meanwhile).

  ``action_error`` is not a failure: the agent's action was malformed or impossible, the step
  reports it and the episode goes on. Other statuses: ``ok``, ``episode_over`` (a step after the
  episode ended; reward 0). The statuses are :class:`~hud_gym.core.step_status.StepStatus` (a
  ``str`` enum), and what each does to the reward, the episode and the controller is one table,
  :data:`~hud_gym.core.step_status.STATUS_RULES`; a step runs in phases (act, observe, grade),
  each setting its status on the step's :class:`~hud_gym.core.step_status.StepOutcome`.
- ``info`` carries ``status``, ``action_error``/``error`` messages, the ``grade``, ``timings`` in
  seconds, the ``step`` count, the ``task_id`` and the ``screen_mapping`` (observation pixels to
  screen pixels: ``screen = offset + observation * scale``, :meth:`ScreenMapping.as_info`), plus whatever the controller reports
  (``position``, ...) and what the setup functions reported (``FunctionContext.info``);
  ``observed`` says what a step's screenshot shows: ``"after"`` its actions, ``"repeated"`` (the
  step failed before observing: the frame before its actions) or ``"cover"`` (a suite's
  end-of-task cover, such as MiniWoB++'s, not the page acted on).
  ``env.evaluate()`` returns the :class:`Grade` itself (``is_error`` set when grading failed).
- Setup and evaluate functions never run on the event loop when they are sync
  (:mod:`hud_gym.evaluation.calls`), so a hanging one cannot freeze the other envs and its step
  reports ``timeout``.
- :meth:`HudEnv.end_episode` ends an episode with a failure from outside the env (the policy
  raised, a run's budget ran out), so a job records it at once.
- ``env.evaluate()`` hands its grade to the listeners that define ``on_evaluate``: the last
  grade obtained for an episode (by ``evaluate()`` or by its final step) is the one a job stores.
- A ``reset`` that raises leaves no episode: ``step`` needs another reset (``ResetNeeded``) and
  ``end_episode`` is a no-op (the previous episode is not the failed reset's).
"""

from __future__ import annotations

import asyncio
import math
import time
import warnings
from typing import TYPE_CHECKING, Any, cast

from gymnasium.error import ResetNeeded

from hud_gym.actions import ActionError, CLAAction, ResponseAction, parse_actions
from hud_gym.controllers.base import Controller, ControllerError
from hud_gym.core.deadline import within
from hud_gym.core.listeners import EnvListener
from hud_gym.core.loop import EventLoopThread
from hud_gym.core.scaling import ScreenMapping
from hud_gym.core.step_status import StepOutcome, StepStatus
from hud_gym.core.suite_hooks import EnvSuites
from hud_gym.core.timings import Timings
from hud_gym.evaluation import BoundCall, FunctionContext, Grade, is_absent
from hud_gym.evaluation.grade import check_reward
from hud_gym.evaluation.worker_pool import get_worker_pool
from hud_gym.spaces import ActionSpaceConfig, decode, is_encoded_action
from hud_gym.task import Task, TaskSet
from hud_gym.tasksets import resolve_task
from hud_gym.trajectory import FAILED

if TYPE_CHECKING:
    import numpy as np

    from hud_gym.controllers.base import Frame
    from hud_gym.core.env import HudEnv

__all__ = ["EnvCore", "Observation"]

Observation = dict[str, Any]
StepResult = tuple[Observation, float, bool, bool, dict[str, Any]]


class EnvCore:
    """The episode logic of :class:`~hud_gym.core.env.HudEnv` (see the module docstring); the
    env supplies the attributes below, the controller and the observations."""

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
    _runner: EventLoopThread
    _task: Task | None
    _taskset: TaskSet | None
    _controller: Controller | None
    _restart_controller: bool
    _closed: bool
    _current_task: Task | None
    _evaluate_calls: list[BoundCall]
    _context: FunctionContext | None
    _steps: int
    _episode_over: bool
    _needs_reset: bool
    _last_grade: Grade | None

    @property
    def max_episode_steps(self) -> int | None:
        raise NotImplementedError

    def _new_controller(self) -> Controller:
        raise NotImplementedError

    def _observation(self, frame: Frame) -> Observation:
        raise NotImplementedError

    def _repeat_observation(self) -> Observation:
        raise NotImplementedError

    def _prompt(self) -> str:
        raise NotImplementedError

    def _seed_episode(self, seed: int | None) -> None:
        raise NotImplementedError

    reset_options: frozenset[str] = frozenset({"task", "task_index", "trajectory"})
    """The ``reset(options=...)`` keys the env takes (``trajectory``: a job's hint); a gym adds its own."""

    def _check_options(self, options: dict[str, Any]) -> None:
        unknown = sorted(set(options) - self.reset_options)
        if unknown:
            raise ValueError(
                f"unknown reset option(s) {', '.join(map(repr, unknown))}: "
                f"{type(self).__name__} takes {', '.join(sorted(self.reset_options))}"
            )

    def _finish_step(
        self, observation: Observation, reward: float | None, terminated: bool, truncated: bool, info: dict[str, Any]
    ) -> tuple[Observation, float | None]:
        """A gym's last word on a step's observation and reward, after grading and before the
        listeners see the step: by default, the hook of the suite of the episode's task
        (MiniWoB's reward processors and black terminal frame)."""
        return self.suites.finish_step(self, observation, reward, terminated, info)

    def _pick_task(self, options: dict[str, Any]) -> Task | None:
        """The task of the episode a reset with ``options`` starts, after the suites' hooks."""
        return self.suites.pick_task(self._drawn_task(options), options)

    def _drawn_task(self, options: dict[str, Any]) -> Task | None:
        if options.get("task") is not None:
            return resolve_task(options["task"])
        if self._taskset is not None and len(self._taskset) > 0:
            if "task_index" in options:
                return self._taskset[int(options["task_index"])]
            if self._task is None:
                return self._taskset[int(self.np_random.integers(len(self._taskset)))]
        return self._task

    async def _ensure_controller(self) -> Controller:
        if self._controller is not None and self._restart_controller:
            await self._shutdown_controller()
        if self._controller is None:
            controller = self._new_controller()
            if controller.supports_capture_region:
                controller.capture_region = self.observation_crop
            await controller.start()
            self._controller = controller
            self._restart_controller = False
        return self._controller

    async def _shutdown_controller(self) -> None:
        controller, self._controller = self._controller, None
        if controller is not None:
            try:
                await within(controller.close(), timeout=30)
            except Exception:  # noqa: BLE001  (a dead controller may fail to close; it is gone either way)
                pass

    async def _reset(self, seed: int | None, options: dict[str, Any] | None) -> tuple[Observation, dict[str, Any]]:
        started = time.perf_counter()
        # A reset ends the previous episode whether or not it succeeds: after a failed one there
        # is no episode to step or to end (``end_episode`` must not reach the listeners).
        self._needs_reset = self._episode_over = True
        options = dict(options or {})
        self._check_options(options)
        self._seed_episode(seed)
        task = self._pick_task(options)
        episode_seed = seed if seed is not None else int(self.np_random.integers(2**31 - 1))
        self._closed = False
        attempts = 2
        for attempt in range(attempts):
            try:
                observation, info = await within(
                    self._reset_once(task, episode_seed, started), timeout=self.reset_timeout
                )
                for listener in self.listeners:
                    await listener.on_reset(cast("HudEnv", self), observation, info, options)
                return observation, info
            except (ControllerError, asyncio.TimeoutError) as exc:
                self._restart_controller = True
                if attempt == attempts - 1:
                    raise ControllerError(
                        f"reset failed after a controller restart: {type(exc).__name__}: {exc}"
                    ) from exc
        raise AssertionError("unreachable")

    async def _reset_once(
        self, task: Task | None, seed: int | None, started: float
    ) -> tuple[Observation, dict[str, Any]]:
        controller = await self._ensure_controller()
        setup_calls = controller.resolve("setup", task.setup if task else None)
        self._evaluate_calls = controller.resolve("evaluate", task.evaluate if task else None)
        if self.placement == "local" and all(call.function.isolated for call in self._evaluate_calls):
            get_worker_pool().prestart()  # the grading runs in a worker process: start it now
        await controller.reset(task, seed)
        self._current_task = task
        self._context = FunctionContext(gym=controller.gym, controller=controller, task=task, seed=seed)
        setup_started = time.perf_counter()
        await controller.setup(setup_calls, self._context)
        setup_s = time.perf_counter() - setup_started
        frame = await controller.observe()
        self._steps = 0
        self._episode_over = False
        self._needs_reset = False
        self._last_grade = None
        observation = self._observation(frame)
        info = {
            "status": "ok",
            "task_id": task.id if task else None,
            "prompt": self._prompt() or None,
            "seed": seed,
            "step": 0,
            "timings": Timings({"setup": setup_s, "total": time.perf_counter() - started}),
            "screen_mapping": self.screen_mapping.as_info(self.screen_size, self.observation_size),
            **frame.info,
            **self._context.info,
        }
        return observation, info

    def _to_actions(self, action: Any) -> list[CLAAction]:
        if is_encoded_action(action):
            return [decode(action, self.action_space_config)]
        return parse_actions(action)

    @property
    def _evaluates_every_step(self) -> bool:
        task = self._current_task
        if task is not None and task.config and "evaluate_every_step" in task.config:
            return bool(task.config["evaluate_every_step"])
        return self.evaluate_every_step

    async def _step(self, action: Any) -> StepResult:
        """One step in three phases (act, observe, grade), each setting the step's status on its
        :class:`~hud_gym.core.step_status.StepOutcome`; the table of what each status does to the
        reward, the episode and the controller is :data:`~hud_gym.core.step_status.STATUS_RULES`."""
        if self._needs_reset:
            raise ResetNeeded("call reset() before step()")
        started = time.perf_counter()
        outcome = StepOutcome()
        if self._episode_over:
            warnings.warn("step() called after the episode ended; call reset()", stacklevel=3)
            outcome.set(StepStatus.EPISODE_OVER)
            outcome.info["observed"] = "repeated"
            info = self._finish_info(outcome.info, outcome.timings, started)
            return self._repeat_observation(), outcome.graded, outcome.terminated, outcome.truncated, info
        controller = self._controller
        assert controller is not None and self._context is not None

        await self._act_phase(controller, action, outcome)
        observation = None if outcome.failed else await self._observe_phase(controller, outcome)
        if observation is None:
            observation = self._repeat_observation()
            outcome.info["observed"] = "repeated"
        self._steps += 1
        limit = self.max_episode_steps
        if not outcome.terminated and limit is not None and self._steps >= limit:
            outcome.truncated = True
        if not outcome.failed and (outcome.terminated or outcome.truncated or self._evaluates_every_step):
            await self._grade_phase(controller, outcome)
        return await self._end_step(action, observation, outcome, started)

    async def _act_phase(self, controller: Controller, action: Any, outcome: StepOutcome) -> None:
        """The act phase: parse ``action`` and execute it within ``step_timeout`` (an action the
        env cannot parse executes nothing)."""
        try:
            actions = self._to_actions(action)
        except ActionError as exc:
            actions = []
            outcome.set(StepStatus.ACTION_ERROR, str(exc))
        with outcome.timed("action"):
            try:
                await within(self._execute(controller, actions, outcome), timeout=self.step_timeout)
            except ActionError as exc:
                outcome.set(StepStatus.ACTION_ERROR, str(exc))
            except asyncio.TimeoutError:
                outcome.set(StepStatus.TIMEOUT, f"the step did not finish within {self.step_timeout} s")
            except Exception as exc:  # noqa: BLE001  (any controller failure is reported, never raised)
                outcome.set(StepStatus.ENV_ERROR, f"{type(exc).__name__}: {exc}")

    async def _observe_phase(self, controller: Controller, outcome: StepOutcome) -> Observation | None:
        """The observe phase: the observation after the action (``None`` when it failed)."""
        with outcome.timed("observe"):
            try:
                frame = await within(controller.observe(), timeout=self.step_timeout)
                observation = self._observation(frame)
                outcome.info.update(frame.info)
                outcome.info["observed"] = "after"
                return observation
            except asyncio.TimeoutError:
                outcome.set(StepStatus.TIMEOUT, f"the observation did not finish within {self.step_timeout} s")
            except Exception as exc:  # noqa: BLE001
                outcome.set(StepStatus.ENV_ERROR, f"observation failed: {type(exc).__name__}: {exc}")
        return None

    async def _grade_phase(self, controller: Controller, outcome: StepOutcome) -> None:
        """The grade phase: the evaluator's grade of the episode now, its reward or its failure."""
        with outcome.timed("evaluate"):
            try:
                grade = await self._evaluate()
            except asyncio.TimeoutError:
                grade = self._timeout_grade()
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
            if self._evaluates_every_step and grade.done:
                outcome.terminated = True

    async def _end_step(
        self, action: Any, observation: Observation, outcome: StepOutcome, started: float
    ) -> StepResult:
        """The step's result, after the gym's last word (:meth:`_finish_step`), told to the listeners."""
        assert self._context is not None
        terminated, truncated = outcome.terminated, outcome.truncated
        if terminated or truncated:
            self._episode_over = True
        if outcome.restart_controller:
            self._restart_controller = True
        info = outcome.info
        info.update(self._context.info)
        info["status"] = outcome.status.value
        observation, graded = self._finish_step(observation, outcome.reward, terminated, truncated, info)
        reward = math.nan if graded is None else float(graded)  # absent: NaN, with info["status"]
        info = self._finish_info(info, outcome.timings, started)
        for listener in self.listeners:
            await listener.on_step(cast("HudEnv", self), action, observation, reward, terminated, truncated, info)
        return observation, reward, terminated, truncated, info

    async def _execute(self, controller: Controller, actions: list[CLAAction], outcome: StepOutcome) -> None:
        assert self._context is not None
        info = outcome.info
        for index, action in enumerate(actions):
            if isinstance(action, ResponseAction):
                self._context.final_response = action.text
                outcome.terminated = True
                if index + 1 < len(actions):
                    info["ignored_actions"] = len(actions) - index - 1
                return
            step = await controller.step(self.screen_mapping.to_screen(action))
            info.update(step.info)
            if "position" in step.info and step.info["position"] is not None:
                info["position"] = self.screen_mapping.point_to_observation(*step.info["position"])
            if step.response is not None:
                self._context.final_response = step.response
                outcome.terminated = True
                return

    def _finish_info(self, info: dict[str, Any], timings: dict[str, float], started: float) -> dict[str, Any]:
        timings["total"] = time.perf_counter() - started
        info["timings"] = Timings(timings)
        info["step"] = self._steps
        info["task_id"] = self._current_task.id if self._current_task else None
        info["screen_mapping"] = self.screen_mapping.as_info(self.screen_size, self.observation_size)
        return info

    async def _evaluate(self) -> Grade:
        """The grade of the episode now, within ``step_timeout``; a NaN or infinite reward (from
        any controller, a remote one included) becomes an error grade.

        Raises:
            asyncio.TimeoutError: the evaluation did not finish in time (it is cancelled).
        """
        if self._context is None or self._controller is None:
            return Grade.error("nothing to evaluate: call reset() first")
        task = self._current_task
        combine = (task.config or {}).get("evaluate_combine", self.evaluate_combine) if task else self.evaluate_combine
        try:
            grade = await within(
                self._controller.evaluate(self._evaluate_calls, self._context, combine), timeout=self.step_timeout
            )
        except asyncio.TimeoutError:
            self._last_grade = self._timeout_grade()
            raise
        except Exception as exc:  # noqa: BLE001  (evaluation failures are grades, not crashes)
            grade = Grade.error(f"evaluation failed: {type(exc).__name__}: {exc}")
        grade = check_reward(grade, (-math.inf, math.inf), "the evaluation")
        self._last_grade = grade
        return grade

    async def _evaluate_now(self) -> Grade:
        if self._context is None or self._controller is None:
            return Grade.error("nothing to evaluate: call reset() first")
        try:
            grade = await self._evaluate()
        except asyncio.TimeoutError:
            grade = self._timeout_grade()
        for listener in self.listeners:
            graded = getattr(listener, "on_evaluate", None)
            if graded is not None:
                await graded(self, grade)
        return grade

    async def _controller_healthy(self, controller: Controller) -> bool:
        """Whether ``controller`` still works (asked after a failed evaluation, to tell an
        evaluator's failure from the controller's)."""
        try:
            return bool(await within(controller.health(), timeout=min(self.step_timeout, 10.0)))
        except Exception:  # noqa: BLE001  (a health check that fails or hangs: not healthy)
            return False

    def _timeout_grade(self) -> Grade:
        return Grade.error(f"the evaluation did not finish within {self.step_timeout} s", timeout=True)

    async def _end_episode(self, status: str, error: str | None) -> None:
        if status not in FAILED:
            raise ValueError(f"end_episode takes a failure status ({', '.join(sorted(FAILED))}), got {status!r}")
        if self._needs_reset:
            return
        self._episode_over = True
        for listener in self.listeners:
            end = getattr(listener, "on_end_episode", None)
            if end is not None:
                await end(self, status, error)

    async def _close(self) -> None:
        for listener in self.listeners:
            await listener.on_close(cast("HudEnv", self))
        await self._shutdown_controller()
        self._needs_reset = True
        self._episode_over = True
