"""The async core of every env (:class:`EpisodeRunner`, which a :class:`~hud_gym.core.env.HudEnv`
owns as ``env.episode``): reset, step, evaluate, end and close, as coroutines on the private loop
thread (:mod:`hud_gym.core.loop`), driving a :class:`~hud_gym.controllers.base.Controller`. The
runner sees its env as an :class:`~hud_gym.core.episode_state.EpisodeHost`; its state
(:class:`~hud_gym.core.episode_state.EpisodeState`) is shared with its step part
(:class:`~hud_gym.core.episode_step.StepRunner`).

Episode rules:

- ``reset`` refuses an option it does not know (:attr:`HudEnv.reset_options <hud_gym.core.env.HudEnv.reset_options>`), picks the task
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
  rewards up; :func:`hud_gym.rewards.graded_reward` reads it as ``None``), with
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
  episode ended; no reward: NaN, not a grade). The statuses are :class:`~hud_gym.core.step_status.StepStatus` (a
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
import time
from typing import Any

from hud_gym.controllers.base import Controller, ControllerError
from hud_gym.core.deadline import within
from hud_gym.core.episode_state import EpisodeHost, EpisodeState, Observation, StepResult
from hud_gym.core.episode_step import StepRunner
from hud_gym.core.timings import Timings
from hud_gym.evaluation import FunctionContext, Grade
from hud_gym.evaluation.worker_pool import get_worker_pool
from hud_gym.task import Task
from hud_gym.tasksets import resolve_task
from hud_gym.trajectory import FAILED

__all__ = ["EpisodeRunner", "Observation", "StepResult"]


class EpisodeRunner:
    """The episodes of one env (see the module docstring).

    Args:
        host: the env that owns this runner.

    Attributes:
        state: the episode state (the controller, the current task, the step count, ...).
        steps: the step part (:class:`~hud_gym.core.episode_step.StepRunner`).
    """

    def __init__(self, host: EpisodeHost) -> None:
        self.host = host
        self.state = EpisodeState()
        self.steps = StepRunner(host, self.state)

    def _check_options(self, options: dict[str, Any]) -> None:
        unknown = sorted(set(options) - self.host.reset_options)
        if unknown:
            raise ValueError(
                f"unknown reset option(s) {', '.join(map(repr, unknown))}: "
                f"{type(self.host).__name__} takes {', '.join(sorted(self.host.reset_options))}"
            )

    def _pick_task(self, options: dict[str, Any]) -> Task | None:
        """The task of the episode a reset with ``options`` starts, after the suites' hooks."""
        return self.host.suites.pick_task(self._drawn_task(options), options)

    def _drawn_task(self, options: dict[str, Any]) -> Task | None:
        host = self.host
        if options.get("task") is not None:
            return resolve_task(options["task"])
        if host._taskset is not None and len(host._taskset) > 0:
            if "task_index" in options:
                return host._taskset[int(options["task_index"])]
            if host._task is None:
                return host._taskset[int(host.np_random.integers(len(host._taskset)))]
        return host._task

    async def _ensure_controller(self) -> Controller:
        state = self.state
        if state.controller is not None and state.restart_controller:
            await self._shutdown_controller()
        if state.controller is None:
            controller = self.host._new_controller()
            if controller.supports_capture_region:
                controller.capture_region = self.host.observation_crop
            await controller.start()
            state.controller = controller
            state.restart_controller = False
        return state.controller

    async def _shutdown_controller(self) -> None:
        controller, self.state.controller = self.state.controller, None
        if controller is not None:
            try:
                await within(controller.close(), timeout=30)
            except Exception:  # noqa: BLE001  (a dead controller may fail to close; it is gone either way)
                pass

    async def reset(self, seed: int | None, options: dict[str, Any] | None) -> tuple[Observation, dict[str, Any]]:
        """Start an episode (see the module docstring).

        Raises:
            ValueError: an option the env does not take.
            ControllerError: the reset failed twice, the second time after a controller restart.
        """
        state, host = self.state, self.host
        started = time.perf_counter()
        # A reset ends the previous episode whether or not it succeeds: after a failed one there
        # is no episode to step or to end (``end_episode`` must not reach the listeners).
        state.needs_reset = state.episode_over = True
        options = dict(options or {})
        self._check_options(options)
        host._seed_episode(seed)
        task = self._pick_task(options)
        episode_seed = seed if seed is not None else int(host.np_random.integers(2**31 - 1))
        state.closed = False
        attempts = 2
        for attempt in range(attempts):
            try:
                observation, info = await within(
                    self._reset_once(task, episode_seed, started), timeout=host.reset_timeout
                )
                for listener in host.listeners:
                    await listener.on_reset(host, observation, info, options)
                return observation, info
            except (ControllerError, asyncio.TimeoutError) as exc:
                state.restart_controller = True
                if attempt == attempts - 1:
                    raise ControllerError(
                        f"reset failed after a controller restart: {type(exc).__name__}: {exc}"
                    ) from exc
        raise AssertionError("unreachable")

    async def _reset_once(
        self, task: Task | None, seed: int | None, started: float
    ) -> tuple[Observation, dict[str, Any]]:
        state, host = self.state, self.host
        controller = await self._ensure_controller()
        setup_calls = controller.resolve("setup", task.setup if task else None)
        state.evaluate_calls = controller.resolve("evaluate", task.evaluate if task else None)
        if host.placement == "local" and all(call.function.isolated for call in state.evaluate_calls):
            get_worker_pool().prestart()  # the grading runs in a worker process: start it now
        await controller.reset(task, seed)
        state.task = task
        state.context = context = FunctionContext(gym=controller.gym, controller=controller, task=task, seed=seed)
        setup_started = time.perf_counter()
        await controller.setup(setup_calls, context)
        setup_s = time.perf_counter() - setup_started
        frame = await controller.observe()
        state.steps = 0
        state.episode_over = False
        state.needs_reset = False
        state.last_grade = None
        observation = host._observation(frame)
        info = {
            "status": "ok",
            "task_id": task.id if task else None,
            "prompt": host._prompt() or None,
            "seed": seed,
            "step": 0,
            "timings": Timings({"setup": setup_s, "total": time.perf_counter() - started}),
            "screen_mapping": host.screen_mapping.as_info(host.screen_size, host.observation_size),
            **frame.info,
            **context.info,
        }
        return observation, info

    async def step(self, action: Any) -> StepResult:
        """One step (:meth:`StepRunner.step <hud_gym.core.episode_step.StepRunner.step>`)."""
        return await self.steps.step(action)

    async def evaluate(self) -> Grade:
        """The grade of the episode now (an error grade when grading failed or timed out), handed
        to the listeners that define ``on_evaluate``."""
        if self.state.context is None or self.state.controller is None:
            return Grade.error("nothing to evaluate: call reset() first")
        try:
            grade = await self.steps.evaluate()
        except asyncio.TimeoutError:
            grade = self.steps.timeout_grade()
        for listener in self.host.listeners:
            graded = getattr(listener, "on_evaluate", None)
            if graded is not None:
                await graded(self.host, grade)
        return grade

    async def end_episode(self, status: str, error: str | None) -> None:
        """End the open episode with a failure from outside the env (no-op when none is open).

        Raises:
            ValueError: ``status`` is not a failure status.
        """
        if status not in FAILED:
            raise ValueError(f"end_episode takes a failure status ({', '.join(sorted(FAILED))}), got {status!r}")
        if self.state.needs_reset:
            return
        self.state.episode_over = True
        for listener in self.host.listeners:
            end = getattr(listener, "on_end_episode", None)
            if end is not None:
                await end(self.host, status, error)

    async def close(self) -> None:
        """Tell the listeners, then close the controller."""
        for listener in self.host.listeners:
            await listener.on_close(self.host)
        await self._shutdown_controller()
        self.state.needs_reset = True
        self.state.episode_over = True
