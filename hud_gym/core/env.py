"""The environment every gym type shares: :class:`HudEnv`, a ``gymnasium.Env`` whose sync API is a
facade over the async core it owns (``env.episode``, an :class:`~hud_gym.core.episode.EpisodeRunner`,
where the episode rules are) running on the private loop thread (:mod:`hud_gym.core.loop`).

A gym type subclasses :class:`HudEnv` and describes itself with a
:class:`~hud_gym.core.gym_type.GymType` (its controller, functions, id, step limit): the env finds
its descriptor by its class, and makes its controller from it, in this process or at another
*placement* (``controller=``: :mod:`hud_gym.core.placement`). A new env is handed to the job
linker (:mod:`hud_gym.core.listeners`), which :mod:`hud_gym.jobs` installs: the core never
imports the jobs, nor the remote controllers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Coroutine, Sequence
from typing import Any, ClassVar, TypeVar

import gymnasium
import numpy as np
from gymnasium.envs.registration import EnvSpec
from gymnasium.error import ResetNeeded

from hud_gym.controllers.base import Controller, Frame
from hud_gym.core.episode import EpisodeRunner, Observation, StepResult
from hud_gym.core.gym_options import GymOptions
from hud_gym.core.gym_type import GymType, gym_of_env
from hud_gym.core.listeners import EnvListener, link_new_env
from hud_gym.core.loop import get_loop_thread
from hud_gym.core.observation import format_prompt, observed_pixels
from hud_gym.core.options import (
    NO_HUMAN_RENDERING,
    check_env_options,
    gym_options,
    live_view_requested,
    parse_size,
)
from hud_gym.core.placement import LOCAL, check_placement, remote_controller
from hud_gym.core.scaling import screen_geometry
from hud_gym.core.suite_hooks import EnvSuites, default_crop
from hud_gym.core.time_limit import effective_limit, make_human_rendering, make_time_limit
from hud_gym.evaluation import Grade
from hud_gym.spaces import ActionSpaceConfig, make_action_space, make_observation_space, sanitize_text
from hud_gym.task import Task, TaskSet
from hud_gym.tasksets import resolve_task, resolve_taskset

__all__ = ["HudEnv", "Observation", "format_prompt"]

T = TypeVar("T")


class HudEnv(gymnasium.Env[Observation, dict[str, Any]]):
    """Base of ``hud/QA-v0``, ``hud/Browser-v0``, ``hud/Ubuntu-v0`` and every other gym type.

    Args:
        task: the task of every episode: a :class:`Task`, a dict, or a reference such as
            ``"qa-basic/capital-france"`` (task set name, then task id).
        taskset: tasks to draw from at each reset (a :class:`TaskSet`, a list, a bundled name or a
            file path); the draw uses the env's seeded ``np_random``.
        render_mode: ``None`` (the default, as Gymnasium's envs: ``render()`` returns nothing) or
            ``"rgb_array"`` (``render()`` returns the last screenshot; ``"rgb_array_list"``
            through ``gymnasium.make``, which adds its ``RenderCollection``).
        screen_size: ``(width, height)`` of the controlled screen (or ``"1280x720"``).
        observation_size: ``(width, height)`` of the screenshot observation; actions are then in
            observation pixels and mapped to the screen. Defaults to the observed region's size.
        observation_crop: ``(x, y, width, height)`` of the screen region to observe (e.g.
            MiniWoB's task area ``(0, 0, 160, 210)``); when ``None``, the whole screen, or the
            region of the suite every task belongs to (``Suite.observation_crop``) unless
            ``observation_size`` is given.
        max_steps: steps before truncation, after which the final step is graded (defaults to the
            gym's limit). ``gymnasium.make(..., max_episode_steps=N)`` works too: the env adopts
            the ``TimeLimit``'s N and grades that step (:mod:`hud_gym.core.time_limit`).
        evaluate_every_step: grade after every step (reward each step; ``done`` ends the episode);
            a task's ``config["evaluate_every_step"]`` overrides it.
        step_timeout: seconds one ``step`` may take before it reports ``status="timeout"``.
        reset_timeout: seconds one ``reset`` may take.
        max_text_length: length of the observation's ``text`` space.
        action_space_config: limits of the action ``Dict`` (width/height follow the observation;
            waits and click delays are cut to fit ``step_timeout``: :meth:`ActionSpaceConfig.bounded_by`).
        evaluate_combine: how several evaluate calls combine (``mean``, ``min``, ``max``,
            ``product``); a task's ``config["evaluate_combine"]`` overrides it.
        job: a :class:`hud_gym.jobs.Job` (or job id) that records every episode of this env;
            defaults to the current job (``@register_job``, ``with job:``), else none.
        controller: where the controller runs, the env's :attr:`placement`: ``"local"`` (in this
            process, the default), ``"subprocess"`` (a controller server on loopback, shared by
            this process's envs and stopped with the last), ``"docker"`` (the gym's container) or
            ``"ws://host:port"`` (a running ``hud-gym serve``); see :mod:`hud_gym.controllers.remote`.
            The controller object itself is :attr:`controller`.
        controller_token: the token of a ``ws://`` server (default ``$HUD_GYM_CONTROLLER_TOKEN``).
        live_view: record the env's episodes (in ``job``, else the current job, else a job of its
            own named ``"live"``) and print, at its first reset, the URL of its live page in
            ``hud-gym ui`` (:mod:`hud_gym.jobs.live_view`); default ``$HUD_GYM_LIVE_VIEW``.
        options: the gym's options, whole (an instance of its descriptor's ``options`` model,
            such as :class:`~hud_gym.envs.browser_options.BrowserOptions`); keywords that name
            its fields override them.
        **named_options: the gym's options one by one (the fields of its options model:
            ``headless=True``; :mod:`hud_gym.core.gym_options`) and the env options of its suites
            (:mod:`hud_gym.core.suite`), such as MiniWoB++'s ``reward_processor``; another name is
            an ``UnknownEnvOptionError``, a bad value an ``InvalidOptionError``.

    Attributes:
        gym: the gym's name (``"qa"``, ``"browser"``, ``"ubuntu"``, ...), as tasks give it.
        descriptor: the gym's :class:`~hud_gym.core.gym_type.GymType` (``None`` for a subclass no
            gym was registered with).
        options: the gym's options (frozen), which its controller is made with.
        placement: where the controller runs (the ``controller=`` argument, normalised).
        live_view: whether the env shows a live view (the ``live_view`` argument, resolved).
        live_url: with ``live_view``, the URL of the env's live page, which follows its episodes
            across resets (also in the reset's ``info["live_url"]``); ``None`` before the first reset.
        suites: suite name to its extension in this env (:class:`~hud_gym.core.suite_hooks.EnvSuites`).
        episode: the env's episodes (:class:`~hud_gym.core.episode.EpisodeRunner`: reset, step,
            evaluate, end, close; its ``state`` holds the controller and the current episode).
    """

    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 2}
    _spec: EnvSpec | None = None
    _init_args: tuple[tuple[Any, ...], dict[str, Any]] = ((), {})
    default_max_episode_steps: ClassVar[int | None] = None
    """The step limit of a subclass no gym was registered with (a registered gym's limit is its
    descriptor's ``max_episode_steps``)."""
    reset_options: frozenset[str] = frozenset({"task", "task_index", "trajectory"})
    """The ``reset(options=...)`` keys the env takes (``trajectory``: a job's hint); a gym adds its own."""

    def __new__(cls, *args: Any, **kwargs: Any) -> HudEnv:
        # Kept for pickling: an env pickles as its constructor's arguments (see __reduce__).
        env = super().__new__(cls)
        env._init_args = (args, dict(kwargs))
        return env

    def __init__(
        self,
        task: Task | dict[str, Any] | str | None = None,
        taskset: TaskSet | Sequence[Task] | str | None = None,
        *,
        render_mode: str | None = None,
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
        controller: str = LOCAL,
        controller_token: str | None = None,
        live_view: bool | None = None,
        options: GymOptions | None = None,
        **named_options: Any,
    ) -> None:
        if render_mode == "human" and "human" not in self.metadata["render_modes"]:
            raise ValueError(NO_HUMAN_RENDERING)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.descriptor: GymType | None = gym_of_env(type(self))
        self.gym: str = self.descriptor.name if self.descriptor else ""
        label = self.descriptor.id if self.descriptor else type(self).__name__
        check_env_options(type(self), named_options, label)
        model = self.descriptor.options if self.descriptor else GymOptions
        self.options: GymOptions = gym_options(model, options, named_options, label)
        self.suites = EnvSuites(self.gym, {k: v for k, v in named_options.items() if k not in model.model_fields})
        self.reset_options = type(self).reset_options | self.suites.reset_options
        self.render_mode = render_mode
        self._task = resolve_task(task) if task is not None else None
        self._taskset = resolve_taskset(taskset) if taskset is not None else None
        if observation_crop is None and observation_size is None:
            observation_crop = default_crop(self.gym, [self._task] if self._task else list(self._taskset or ()))
        self.screen_size = parse_size(screen_size, "screen_size")
        self.observation_crop, self.observation_size, self.screen_mapping = screen_geometry(
            self.screen_size,
            None if observation_size is None else parse_size(observation_size, "observation_size"),
            observation_crop,
        )
        self._max_steps = max_steps
        self.evaluate_every_step = evaluate_every_step
        self.step_timeout = step_timeout
        self.reset_timeout = reset_timeout
        self.max_text_length = max_text_length
        self.evaluate_combine = evaluate_combine

        width, height = self.observation_size
        config = action_space_config or ActionSpaceConfig()
        config = ActionSpaceConfig(**{**config.__dict__, "width": width, "height": height})
        self.action_space_config = config.bounded_by(step_timeout)  # a sampled action fits in a step
        self.action_space = make_action_space(self.action_space_config)
        self.observation_space = make_observation_space(width, height, max_text_length)

        self.placement, self._controller_token = check_placement(controller, controller_token)
        self._runner = get_loop_thread()
        self.episode = EpisodeRunner(self)
        self._last_screenshot: np.ndarray | None = None
        self._last_text = ""
        # Notified after each reset and step and before close.
        self.listeners: list[EnvListener] = []
        self.live_view = live_view_requested(live_view)
        self.live_url: str | None = None
        link_new_env(self, job)

    # ----------------------------------------------------------------- subclass hooks

    def _make_controller(self) -> Controller:
        """Create this gym's controller (not started): the descriptor's, with :attr:`options`."""
        if self.descriptor is None:
            raise NotImplementedError(f"{type(self).__name__}: register a GymType for it, or define _make_controller")
        controller: Controller = self.descriptor.make_controller(self.screen_size, self.options)
        return controller

    def controller_options(self) -> dict[str, Any]:
        """This env's :attr:`options` as JSON: what a controller server is sent, so that it builds
        the same controller as :meth:`_make_controller`."""
        return self.options.to_json()

    def _new_controller(self) -> Controller:
        """This env's controller: its own (placement ``"local"``) or a remote one."""
        if self.placement == LOCAL:
            return self._make_controller()
        gym = self.descriptor.served_as if self.descriptor else self.gym
        return remote_controller(
            gym, self.screen_size, self.placement, self._controller_token, self.controller_options()
        )

    # ----------------------------------------------------------------- properties

    @property
    def task(self) -> Task | None:
        """The task of the current episode."""
        return self.episode.state.task

    @property
    def final_response(self) -> str | None:
        """The agent's final answer in this episode, from a ``ResponseAction``."""
        context = self.episode.state.context
        return context.final_response if context else None

    @property
    def controller(self) -> Controller | None:
        """The live controller object (``None`` before the first reset); where it runs is :attr:`placement`."""
        return self.episode.state.controller

    @property
    def max_episode_steps(self) -> int | None:
        """Steps before truncation: ``max_steps``, else the registered limit, else the gym's default."""
        if self._max_steps is not None:
            return self._max_steps
        if self._spec is not None and self._spec.max_episode_steps is not None:
            return self._spec.max_episode_steps
        if self.descriptor is not None and self.descriptor.max_episode_steps is not None:
            return self.descriptor.max_episode_steps
        return self.default_max_episode_steps

    @property
    def spec(self) -> EnvSpec | None:
        """Gymnasium's spec of the env (set by ``gymnasium.make``), its ``max_episode_steps`` the
        env's own step limit (:attr:`max_episode_steps`)."""
        spec = self._spec
        if spec is None or spec.max_episode_steps == self.max_episode_steps:
            return spec
        return dataclasses.replace(spec, max_episode_steps=self.max_episode_steps)

    @spec.setter
    def spec(self, value: EnvSpec | None) -> None:
        # gymnasium.make(id, max_episode_steps=N) sets the spec, then wraps the env in TimeLimit(N):
        # the env takes N as its own limit, so that it grades the step the TimeLimit ends.
        # gymnasium.make(id, render_mode="human") would wrap the env in a pygame window: refused.
        if make_human_rendering():
            raise ValueError(NO_HUMAN_RENDERING)
        limit = make_time_limit()
        if limit is not None:
            self._max_steps = effective_limit(self._max_steps, limit)
        self._spec = value

    # ----------------------------------------------------------------- sync facade

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._runner.run(coro)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Start an episode; see :mod:`hud_gym.core.episode`. ``options``: ``task`` (a Task, dict
        or reference) or ``task_index`` (into the task set), and a gym's own (:attr:`reset_options`).

        Raises:
            ValueError: an option the env does not take.
        """
        return self._call(self.episode.reset(seed, options))

    def step(self, action: Any) -> StepResult:
        """Execute ``action`` (a CLA, a CLA dict, a list of them, or an action-space sample).
        The reward is the float ``NaN`` when the step failed, ``info["status"]`` saying why (see
        :mod:`hud_gym.core.episode`)."""
        return self._call(self.episode.step(action))

    def evaluate(self) -> Grade:
        """Grade the current state and final response now (as HUD's ``env.evaluate()``), within
        ``step_timeout``. A failed grading (the evaluator raised, timed out, or gave a bad reward)
        is a grade with ``is_error`` set."""
        return self._call(self.episode.evaluate())

    def end_episode(self, status: str, error: str | None = None) -> None:
        """End the current episode with a failure that is not the env's own, such as
        ``policy_error`` (the policy raised) or ``timeout`` (the caller's budget for the run ran
        out): the next ``step`` needs a ``reset``, and a job linked to the env stores the episode
        now with this ``status``, ``error`` and no reward. No-op when no episode is open.

        Raises:
            ValueError: ``status`` is not a failure status (:data:`hud_gym.trajectory.FAILED`).
        """
        self._call(self.episode.end_episode(status, error))

    def render(self) -> np.ndarray | None:
        """A copy of the last screenshot observation (``rgb_array``), or ``None`` (no render mode,
        with Gymnasium's warning).

        Raises:
            gymnasium.error.ResetNeeded: no frame yet (no ``reset``), as ``gymnasium.make``'s
                ``OrderEnforcing`` says, rather than a ``None`` a frame-tiler cannot take.
        """
        if self.render_mode is None:
            gymnasium.logger.warn(
                "render() was called without a render_mode: make the env with render_mode='rgb_array'"
            )
            return None
        if self._last_screenshot is None:
            raise ResetNeeded("Cannot call `env.render()` before calling `env.reset()`: there is no frame yet")
        return self._last_screenshot.copy()

    def close(self) -> None:
        """Release the controller's resources. Safe to call more than once."""
        state = self.episode.state
        if state.closed and state.controller is None:
            return
        if self._runner.alive and not self._runner.in_loop_thread():
            self._call(self.episode.close())
        state.closed = True

    # ----------------------------------------------------------------- async API

    async def areset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Async :meth:`reset`, callable from any event loop."""
        return await self._runner.run_async(self.episode.reset(seed, options))

    async def astep(self, action: Any) -> StepResult:
        """Async :meth:`step`, callable from any event loop."""
        return await self._runner.run_async(self.episode.step(action))

    async def aevaluate(self) -> Grade:
        """Async :meth:`evaluate`, callable from any event loop."""
        return await self._runner.run_async(self.episode.evaluate())

    async def aend_episode(self, status: str, error: str | None = None) -> None:
        """Async :meth:`end_episode`, callable from any event loop."""
        await self._runner.run_async(self.episode.end_episode(status, error))

    async def aclose(self) -> None:
        """Async :meth:`close`, callable from any event loop."""
        await self._runner.run_async(self.episode.close())
        self.episode.state.closed = True

    # ----------------------------------------------------------------- observations

    def _seed_episode(self, seed: int | None) -> None:
        gymnasium.Env.reset(self, seed=seed)

    def _prompt(self) -> str:
        context = self.episode.state.context
        if context is not None and context.instruction:
            return context.instruction
        return format_prompt(self.episode.state.task)

    def _observation(self, frame: Frame) -> Observation:
        self.suites.frame_info(self, frame.info)
        # One copy of the frame per step: the agent gets it; the env keeps the frame's own
        # pixels (the controller made them for this observation) for render() and repeats.
        pixels = observed_pixels(frame, self.observation_crop, self.observation_size, copy=False)
        prompt = self._prompt()
        text = sanitize_text("\n".join(part for part in (prompt, frame.text) if part), self.max_text_length)
        self._last_screenshot = pixels
        self._last_text = text
        return {"screenshot": np.array(pixels, dtype=np.uint8, order="C", copy=True), "text": text}

    def _repeat_observation(self) -> Observation:
        width, height = self.observation_size
        screenshot = (
            self._last_screenshot if self._last_screenshot is not None else np.zeros((height, width, 3), np.uint8)
        )
        return {"screenshot": screenshot.copy(), "text": self._last_text}

    def __del__(self) -> None:
        # Best effort for envs that were never closed; closing normally is the caller's job.
        try:
            if self.episode.state.controller is not None and self._runner.alive and not self._runner.in_loop_thread():
                self._runner.run(self.episode.close(), timeout=10)
        except Exception:  # noqa: BLE001
            pass

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as the constructor's arguments (the controller, its loop and its episode are not
        state that can travel): the copy is a new env, made with the same arguments and spec,
        whose controller starts at its first ``reset``, as Gymnasium's ``EzPickle`` envs. A
        :class:`hud_gym.jobs.Job` argument travels as its id."""
        args, kwargs = self._init_args
        job = kwargs.get("job")
        if job is not None and not isinstance(job, str) and hasattr(job, "id"):
            kwargs = {**kwargs, "job": job.id}
        return (_rebuild_env, (type(self), args, kwargs, {"_spec": self._spec, "_max_steps": self._max_steps}))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} gym={self.gym!r} task={self._task.id if self._task else None!r}>"


def _rebuild_env(cls: type[HudEnv], args: tuple[Any, ...], kwargs: dict[str, Any], state: dict[str, Any]) -> HudEnv:
    """Unpickle a :class:`HudEnv` (see :meth:`HudEnv.__reduce__`)."""
    env = cls(*args, **kwargs)
    env.__dict__.update(state)
    return env
