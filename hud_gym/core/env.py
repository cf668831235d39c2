"""The environment core every gym type shares: a ``gymnasium.Env`` whose work runs as coroutines
on the private loop thread (:mod:`hud_gym.core.loop`), driving a :class:`Controller`.

Episode rules:

- ``reset`` picks the task (``options["task"]``, the task given at make time, or one drawn from
  the task set with the reset seed), checks every setup and evaluate call against the registry,
  resets the controller and runs the setup.
- ``step`` executes one CLA action or a list of them (any of: a CLA model, a dict in CLA form, an
  element of :attr:`action_space`). A ``ResponseAction`` stores :attr:`final_response` and ends the
  episode (``terminated``); so does an evaluator that says ``done`` when ``evaluate_every_step``.
  ``truncated`` comes after ``max_steps`` steps or when a step times out.
- The reward is the evaluator's reward on the final step (on every step with
  ``evaluate_every_step=True``), else 0.
- **A reward is graded or absent, never a silent 0**: a step that fails returns ``reward=None``,
  with ``info["status"]`` naming the failure and ``info["error"]`` the message:

  - ``env_error``: the controller failed (dead browser or display); the episode ends and the next
    ``reset`` restarts the controller;
  - ``timeout``: the action, observation or evaluation outlived ``step_timeout``; the episode is
    truncated and the next ``reset`` restarts the controller;
  - ``eval_error``: the evaluator raised, or gave an error grade (``Grade.is_error``: an invalid
    task regex, a task the evaluator cannot grade), a NaN, an infinity, or a reward outside its
    declared range (``[0, 1]`` unless the evaluate function or the task's
    ``config["reward_range"]`` says otherwise); the episode ends only if the step ended it anyway.

  ``action_error`` is not a failure: the agent's action was malformed or impossible, the step
  reports it and the episode goes on. Other statuses: ``ok``, ``episode_over`` (a step after the
  episode ended; reward 0).
- ``info`` carries ``status``, ``action_error``/``error`` messages, the ``grade``, ``timings`` in
  seconds, the ``step`` count and the ``task_id``, plus whatever the controller reports
  (``position``, ...). ``env.evaluate()`` returns the :class:`Grade` itself (``is_error`` set when
  grading failed).
- Setup and evaluate functions never run on the event loop when they are sync
  (:mod:`hud_gym.evaluation.calls`), so a hanging one cannot freeze the other envs and its step
  reports ``timeout``.
- :meth:`HudEnv.end_episode` ends an episode with a failure from outside the env (the policy
  raised, a run's budget ran out), so a job records it at once.
"""

from __future__ import annotations

import asyncio
import math
import time
import warnings
from collections.abc import Coroutine, Sequence
from typing import Any, ClassVar, TypeVar

import gymnasium
import numpy as np
from gymnasium.error import ResetNeeded
from PIL import Image

from hud_gym.actions import ActionError, CLAAction, ResponseAction, parse_actions
from hud_gym.controllers.base import Controller, ControllerError, Frame
from hud_gym.core.loop import EventLoopThread, get_loop_thread
from hud_gym.core.scaling import ScreenMapping
from hud_gym.core.timings import Timings
from hud_gym.evaluation import BoundCall, FunctionContext, Grade
from hud_gym.evaluation.grade import check_reward
from hud_gym.evaluation.worker_pool import get_worker_pool
from hud_gym.spaces import (
    ActionSpaceConfig,
    decode,
    is_encoded_action,
    make_action_space,
    make_observation_space,
    sanitize_text,
)
from hud_gym.task import Task, TaskSet
from hud_gym.tasksets import resolve_task, resolve_taskset
from hud_gym.trajectory import FAILED

__all__ = ["HudEnv"]

T = TypeVar("T")
Observation = dict[str, Any]


def format_prompt(task: Task | None) -> str:
    """The prompt shown to the agent: the task's prompt, then its choices lettered A, B, ..."""
    if task is None:
        return ""
    if not task.choices:
        return task.prompt
    letters = [f"{chr(ord('A') + i)}. {c}" for i, c in enumerate(task.choices)]
    return task.prompt + "\n" + "\n".join(letters)


class HudEnv(gymnasium.Env[Observation, dict[str, Any]]):
    """Base of ``hud/QA-v0``, ``hud/Browser-v0`` and ``hud/Ubuntu-v0``.

    Args:
        task: the task of every episode: a :class:`Task`, a dict, or a reference such as
            ``"qa-basic/capital-france"`` (task set name, then task id).
        taskset: tasks to draw from at each reset (a :class:`TaskSet`, a list, a bundled name or a
            file path); the draw uses the env's seeded ``np_random``.
        render_mode: ``"rgb_array"`` (``render()`` returns the last screenshot) or ``None``.
        screen_size: ``(width, height)`` of the controlled screen.
        observation_size: ``(width, height)`` of the screenshot observation; actions are then in
            observation pixels and mapped to the screen. Defaults to the observed region's size.
        observation_crop: ``(x, y, width, height)`` of the screen region to observe (e.g.
            MiniWoB's task area ``(0, 0, 160, 210)``); the whole screen when ``None``.
        max_steps: steps before truncation, after which the final step is graded (defaults to the
            gym's limit). Named so that ``gymnasium.make(..., max_steps=N)`` reaches the env:
            Gymnasium keeps ``max_episode_steps`` for its ``TimeLimit`` wrapper, which cannot grade
            the final step (``hud_gym.make`` maps ``max_episode_steps`` to ``max_steps``).
        evaluate_every_step: grade after every step (reward each step; ``done`` ends the episode);
            a task's ``config["evaluate_every_step"]`` overrides it.
        step_timeout: seconds one ``step`` may take before it reports ``status="timeout"``.
        reset_timeout: seconds one ``reset`` may take.
        max_text_length: length of the observation's ``text`` space.
        action_space_config: limits of the action ``Dict`` (width/height follow the observation).
        evaluate_combine: how several evaluate calls combine (``mean``, ``min``, ``max``,
            ``product``); a task's ``config["evaluate_combine"]`` overrides it.
        job: a :class:`hud_gym.jobs.Job` (or job id) that records every episode of this env;
            defaults to the current job (``@register_job``, ``with job:``), else none.
        controller: where the controller runs: ``"local"`` (in this process, the default),
            ``"subprocess"`` (a controller server on loopback, shared by this process's envs and
            stopped with the last), ``"docker"`` (the gym's container) or ``"ws://host:port"`` (a
            running ``hud-gym serve``); see :mod:`hud_gym.controllers.remote`.
        controller_token: the token of a ``ws://`` server (default ``$HUD_GYM_CONTROLLER_TOKEN``).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": 2}
    gym_type: ClassVar[str] = ""
    default_max_episode_steps: ClassVar[int | None] = None

    def __init__(
        self,
        task: Task | dict[str, Any] | str | None = None,
        taskset: TaskSet | Sequence[Task] | str | None = None,
        *,
        render_mode: str | None = "rgb_array",
        screen_size: tuple[int, int] = (1280, 720),
        observation_size: tuple[int, int] | None = None,
        observation_crop: tuple[int, int, int, int] | None = None,
        max_steps: int | None = None,
        evaluate_every_step: bool = False,
        step_timeout: float = 30.0,
        reset_timeout: float = 60.0,
        max_text_length: int = 4096,
        action_space_config: ActionSpaceConfig | None = None,
        evaluate_combine: str = "mean",
        job: Any = None,
        controller: str = "local",
        controller_token: str | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.render_mode = render_mode
        self.screen_size = (int(screen_size[0]), int(screen_size[1]))
        if observation_crop is not None:
            x, y, w, h = (int(v) for v in observation_crop)
            if w < 1 or h < 1 or x < 0 or y < 0 or x + w > self.screen_size[0] or y + h > self.screen_size[1]:
                raise ValueError(f"observation_crop {observation_crop} is not inside the {self.screen_size} screen")
            self.observation_crop: tuple[int, int, int, int] | None = (x, y, w, h)
        else:
            self.observation_crop = None
        region = self.observation_crop[2:] if self.observation_crop else self.screen_size
        self.observation_size = (
            (int(observation_size[0]), int(observation_size[1])) if observation_size else (int(region[0]), int(region[1]))
        )
        self.screen_mapping = ScreenMapping(
            scale_x=region[0] / self.observation_size[0],
            scale_y=region[1] / self.observation_size[1],
            origin_x=self.observation_crop[0] if self.observation_crop else 0,
            origin_y=self.observation_crop[1] if self.observation_crop else 0,
        )
        self._task = resolve_task(task) if task is not None else None
        self._taskset = resolve_taskset(taskset) if taskset is not None else None
        self._max_steps = max_steps
        self.evaluate_every_step = evaluate_every_step
        self.step_timeout = step_timeout
        self.reset_timeout = reset_timeout
        self.max_text_length = max_text_length
        self.evaluate_combine = evaluate_combine

        width, height = self.observation_size
        config = action_space_config or ActionSpaceConfig()
        self.action_space_config = ActionSpaceConfig(**{**config.__dict__, "width": width, "height": height})
        self.action_space = make_action_space(self.action_space_config)
        self.observation_space = make_observation_space(width, height, max_text_length)

        if controller != "local":
            from hud_gym.controllers.remote.client import check_controller_spec

            controller, controller_token = check_controller_spec(controller, controller_token)
        self.controller_spec = controller
        self._controller_token = controller_token
        self._runner: EventLoopThread = get_loop_thread()
        self._controller: Controller | None = None
        self._restart_controller = False
        self._closed = False
        self._current_task: Task | None = None
        self._evaluate_calls: list[BoundCall] = []
        self._context: FunctionContext | None = None
        self._steps = 0
        self._episode_over = True
        self._needs_reset = True
        self._last_screenshot: np.ndarray | None = None
        self._last_text = ""
        self._last_grade: Grade | None = None
        # Notified after each reset and step and before close: hud_gym.jobs.context.EnvListener.
        self.listeners: list[Any] = []
        from hud_gym.jobs.context import link_env

        link_env(self, job)

    # ----------------------------------------------------------------- subclass hooks

    def _make_controller(self) -> Controller:
        """Create this gym's controller (not started)."""
        raise NotImplementedError

    def controller_options(self) -> dict[str, Any]:
        """The keyword options this env gives its gym's controller (JSON-ready), so that a
        controller server builds the same controller as :meth:`_make_controller`."""
        return {}

    def _new_controller(self) -> Controller:
        """This env's controller: its own (``controller="local"``) or a remote one."""
        if self.controller_spec == "local":
            return self._make_controller()
        from hud_gym.controllers.remote.client import RemoteController

        return RemoteController(self.gym_type, self.screen_size, where=self.controller_spec,
                                token=self._controller_token, options=self.controller_options())

    # ----------------------------------------------------------------- properties

    @property
    def task(self) -> Task | None:
        """The task of the current episode."""
        return self._current_task

    @property
    def final_response(self) -> str | None:
        """The agent's final answer in this episode, from a ``ResponseAction``."""
        return self._context.final_response if self._context else None

    @property
    def controller(self) -> Controller | None:
        """The live controller (``None`` before the first reset)."""
        return self._controller

    @property
    def max_episode_steps(self) -> int | None:
        """Steps before truncation: ``max_steps``, else the registered limit, else the gym's default."""
        if self._max_steps is not None:
            return self._max_steps
        if self.spec is not None and self.spec.max_episode_steps is not None:
            return self.spec.max_episode_steps
        return self.default_max_episode_steps

    # ----------------------------------------------------------------- sync facade

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._runner.run(coro)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Observation, dict[str, Any]]:
        """Start an episode; see the module docstring. ``options``: ``task`` (a Task, dict or
        reference) or ``task_index`` (into the task set)."""
        return self._call(self._reset(seed, options))

    def step(self, action: Any) -> tuple[Observation, float | None, bool, bool, dict[str, Any]]:
        """Execute ``action`` (a CLA, a CLA dict, a list of them, or an action-space sample).
        The reward is ``None`` when the step failed (see the module docstring)."""
        return self._call(self._step(action))

    def evaluate(self) -> Grade:
        """Grade the current state and final response now (as HUD's ``env.evaluate()``), within
        ``step_timeout``. A failed grading (the evaluator raised, timed out, or gave a bad reward)
        is a grade with ``is_error`` set."""
        return self._call(self._evaluate_now())

    def end_episode(self, status: str, error: str | None = None) -> None:
        """End the current episode with a failure that is not the env's own, such as
        ``policy_error`` (the policy raised) or ``timeout`` (the caller's budget for the run ran
        out): the next ``step`` needs a ``reset``, and a job linked to the env stores the episode
        now with this ``status``, ``error`` and ``reward=None``. No-op when no episode is open.

        Raises:
            ValueError: ``status`` is not a failure status (:data:`hud_gym.trajectory.FAILED`).
        """
        self._call(self._end_episode(status, error))

    def render(self) -> np.ndarray | None:  # type: ignore[override]
        """A copy of the last screenshot observation (``rgb_array``), or ``None``."""
        if self.render_mode != "rgb_array" or self._last_screenshot is None:
            return None
        return self._last_screenshot.copy()

    def close(self) -> None:
        """Release the controller's resources. Safe to call more than once."""
        if self._closed and self._controller is None:
            return
        if self._runner.alive and not self._runner.in_loop_thread():
            self._call(self._close())
        self._closed = True

    # ----------------------------------------------------------------- async API

    async def areset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Observation, dict[str, Any]]:
        """Async :meth:`reset`, callable from any event loop."""
        return await self._runner.run_async(self._reset(seed, options))

    async def astep(self, action: Any) -> tuple[Observation, float | None, bool, bool, dict[str, Any]]:
        """Async :meth:`step`, callable from any event loop."""
        return await self._runner.run_async(self._step(action))

    async def aevaluate(self) -> Grade:
        """Async :meth:`evaluate`, callable from any event loop."""
        return await self._runner.run_async(self._evaluate_now())

    async def aend_episode(self, status: str, error: str | None = None) -> None:
        """Async :meth:`end_episode`, callable from any event loop."""
        await self._runner.run_async(self._end_episode(status, error))

    async def aclose(self) -> None:
        """Async :meth:`close`, callable from any event loop."""
        await self._runner.run_async(self._close())
        self._closed = True

    # ----------------------------------------------------------------- core (on the loop thread)

    def _pick_task(self, options: dict[str, Any]) -> Task | None:
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
                await asyncio.wait_for(controller.close(), timeout=30)
            except Exception:  # noqa: BLE001  (a dead controller may fail to close; it is gone either way)
                pass

    async def _reset(self, seed: int | None, options: dict[str, Any] | None) -> tuple[Observation, dict[str, Any]]:
        started = time.perf_counter()
        super().reset(seed=seed)
        options = dict(options or {})
        task = self._pick_task(options)
        episode_seed = seed if seed is not None else int(self.np_random.integers(2**31 - 1))
        self._closed = False
        attempts = 2
        for attempt in range(attempts):
            try:
                observation, info = await asyncio.wait_for(self._reset_once(task, episode_seed, started),
                                                           timeout=self.reset_timeout)
                for listener in self.listeners:
                    await listener.on_reset(self, observation, info, options)
                return observation, info
            except (ControllerError, asyncio.TimeoutError) as exc:
                self._restart_controller = True
                if attempt == attempts - 1:
                    raise ControllerError(f"reset failed after a controller restart: {type(exc).__name__}: {exc}") from exc
        raise AssertionError("unreachable")

    async def _reset_once(self, task: Task | None, seed: int | None, started: float) -> tuple[Observation, dict[str, Any]]:
        controller = await self._ensure_controller()
        setup_calls = controller.resolve("setup", task.setup if task else None)
        self._evaluate_calls = controller.resolve("evaluate", task.evaluate if task else None)
        if self.controller_spec == "local" and all(call.function.isolated for call in self._evaluate_calls):
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
            **frame.info,
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

    async def _step(self, action: Any) -> tuple[Observation, float | None, bool, bool, dict[str, Any]]:
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
            await asyncio.wait_for(self._execute(controller, actions, info), timeout=self.step_timeout)
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
                frame = await asyncio.wait_for(controller.observe(), timeout=self.step_timeout)
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
            elif grade.is_error:
                info.update(status="eval_error", error=grade.content or "the evaluation failed")
                reward = None
            else:
                reward = float(grade.reward)
                if self._evaluates_every_step and grade.done:
                    terminated = True
        if terminated or truncated:
            self._episode_over = True
        info = self._finish_info(info, timings, started)
        for listener in self.listeners:
            await listener.on_step(self, action, observation, reward, terminated, truncated, info)
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
            grade = await asyncio.wait_for(self._controller.evaluate(self._evaluate_calls, self._context, combine),
                                           timeout=self.step_timeout)
        except asyncio.TimeoutError:
            self._last_grade = self._timeout_grade()
            raise
        except Exception as exc:  # noqa: BLE001  (evaluation failures are grades, not crashes)
            grade = Grade.error(f"evaluation failed: {type(exc).__name__}: {exc}")
        grade = check_reward(grade, (-math.inf, math.inf), "the evaluation")
        self._last_grade = grade
        return grade

    async def _evaluate_now(self) -> Grade:
        try:
            return await self._evaluate()
        except asyncio.TimeoutError:
            return self._timeout_grade()

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
            await listener.on_close(self)
        await self._shutdown_controller()
        self._needs_reset = True
        self._episode_over = True

    # ----------------------------------------------------------------- observations

    def _prompt(self) -> str:
        if self._context is not None and self._context.instruction:
            return self._context.instruction
        return format_prompt(self._current_task)

    def _observation(self, frame: Frame) -> Observation:
        screenshot = np.asarray(frame.screenshot)
        if self.observation_crop is not None and frame.region != self.observation_crop:
            x, y, w, h = self.observation_crop
            if frame.region is not None:
                x, y = x - frame.region[0], y - frame.region[1]
            screenshot = screenshot[y : y + h, x : x + w]
        width, height = self.observation_size
        if screenshot.shape[:2] != (height, width):
            screenshot = np.asarray(Image.fromarray(screenshot).resize((width, height), Image.Resampling.BILINEAR))
        # The controller may reuse its buffer: keep our own copy, and hand out another.
        screenshot = np.array(screenshot[..., :3], dtype=np.uint8, order="C", copy=True)
        prompt = self._prompt()
        text = sanitize_text("\n".join(part for part in (prompt, frame.text) if part), self.max_text_length)
        self._last_screenshot = screenshot
        self._last_text = text
        return {"screenshot": screenshot.copy(), "text": text}

    def _repeat_observation(self) -> Observation:
        width, height = self.observation_size
        screenshot = self._last_screenshot if self._last_screenshot is not None else np.zeros((height, width, 3), np.uint8)
        return {"screenshot": screenshot.copy(), "text": self._last_text}

    def __del__(self) -> None:
        # Best effort for envs that were never closed; closing normally is the caller's job.
        try:
            if self._controller is not None and self._runner.alive and not self._runner.in_loop_thread():
                self._runner.run(self._close(), timeout=10)
        except Exception:  # noqa: BLE001
            pass

    def __repr__(self) -> str:
        return f"<{type(self).__name__} gym={self.gym_type!r} task={self._task.id if self._task else None!r}>"
