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
- **A reward is graded or absent, never a silent 0**: a step that fails returns ``reward=None``,
  with ``info["status"]`` naming the failure and ``info["error"]`` the message:

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
  episode ended; reward 0).
- ``info`` carries ``status``, ``action_error``/``error`` messages, the ``grade``, ``timings`` in
  seconds, the ``step`` count, the ``task_id`` and the ``screen_mapping`` (observation pixels to
  screen pixels: ``screen = offset + observation * scale``, :meth:`ScreenMapping.as_info`), plus whatever the controller reports
  (``position``, ...) and what the setup functions reported (``FunctionContext.info``).
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
StepResult = tuple[Observation, "float | None", bool, bool, dict[str, Any]]


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
        if self._needs_reset:
            raise ResetNeeded("call reset() before step()")
        started = time.perf_counter()
        info: dict[str, Any] = {"status": "ok", "action_error": None, "error": None, "grade": None}
        timings: dict[str, float] = {}
        if self._episode_over:
            warnings.warn("step() called after the episode ended; call reset()", stacklevel=3)
            info["status"] = "episode_over"
            return self._repeat_observation(), 0.0, True, False, self._finish_info(info, timings, started)
        controller = self._controller
        assert controller is not None and self._context is not None
        terminated = truncated = False
        env_error = False

        try:
            actions = self._to_actions(action)
        except ActionError as exc:
            actions = []
            info.update(status="action_error", action_error=str(exc))

        action_started = time.perf_counter()
        try:
            await within(self._execute(controller, actions, info), timeout=self.step_timeout)
        except ActionError as exc:
            info.update(status="action_error", action_error=str(exc))
        except asyncio.TimeoutError:
            info.update(status="timeout", error=f"the step did not finish within {self.step_timeout} s")
            truncated = True
            self._restart_controller = True
        except Exception as exc:  # noqa: BLE001  (any controller failure is reported, never raised)
            info.update(status="env_error", error=f"{type(exc).__name__}: {exc}")
            env_error = True
        timings["action"] = time.perf_counter() - action_started
        if info.pop("_response", False):
            terminated = True

        observation = None
        if not env_error and info["status"] != "timeout":
            observe_started = time.perf_counter()
            try:
                frame = await within(controller.observe(), timeout=self.step_timeout)
                observation = self._observation(frame)
                info.update(frame.info)
            except asyncio.TimeoutError:
                info.update(status="timeout", error=f"the observation did not finish within {self.step_timeout} s")
                truncated = True
                self._restart_controller = True
            except Exception as exc:  # noqa: BLE001
                info.update(status="env_error", error=f"observation failed: {type(exc).__name__}: {exc}")
                env_error = True
            timings["observe"] = time.perf_counter() - observe_started
        if observation is None:
            observation = self._repeat_observation()
        if env_error:
            terminated = True
            self._restart_controller = True

        self._steps += 1
        limit = self.max_episode_steps
        if not terminated and limit is not None and self._steps >= limit:
            truncated = True

        reward: float | None = None if env_error or info["status"] == "timeout" else 0.0
        if reward is not None and (terminated or truncated or self._evaluates_every_step):
            evaluate_started = time.perf_counter()
            try:
                grade = await self._evaluate()
            except asyncio.TimeoutError:
                grade = self._timeout_grade()
                info.update(status="timeout", error=grade.content)
                truncated = True
                self._restart_controller = True
            timings["evaluate"] = time.perf_counter() - evaluate_started
            info["grade"] = grade
            if info["status"] == "timeout":
                reward = None
            elif (grade.is_error or is_absent(grade)) and not await self._controller_healthy(controller):
                # The evaluator did not fail, and its target did not go by the agent's doing:
                # the browser, desktop or server it read died.
                info.update(status="env_error", error=f"the controller failed during the evaluation: {grade.content}")
                reward, terminated, self._restart_controller = None, True, True
            elif grade.is_error:
                info.update(status="eval_error", error=grade.content or "the evaluation failed")
                reward = None
            else:
                reward = float(grade.reward)
                if self._evaluates_every_step and grade.done:
                    terminated = True
        if terminated or truncated:
            self._episode_over = True
        info.update(self._context.info)
        observation, reward = self._finish_step(observation, reward, terminated, truncated, info)
        info = self._finish_info(info, timings, started)
        for listener in self.listeners:
            await listener.on_step(cast("HudEnv", self), action, observation, reward, terminated, truncated, info)
        return observation, reward, terminated, truncated, info

    async def _execute(self, controller: Controller, actions: list[CLAAction], info: dict[str, Any]) -> None:
        assert self._context is not None
        for index, action in enumerate(actions):
            if isinstance(action, ResponseAction):
                self._context.final_response = action.text
                info["_response"] = True
                if index + 1 < len(actions):
                    info["ignored_actions"] = len(actions) - index - 1
                return
            outcome = await controller.step(self.screen_mapping.to_screen(action))
            info.update(outcome.info)
            if "position" in outcome.info and outcome.info["position"] is not None:
                info["position"] = self.screen_mapping.point_to_observation(*outcome.info["position"])
            if outcome.response is not None:
                self._context.final_response = outcome.response
                info["_response"] = True
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
