"""``hud/Browser-v0``: a Chromium tab driven with CLA actions, observed as pixels.

Every env in a process shares one Chromium (launched on the first reset, closed with the last
env) and has its own isolated browser context: cookies, storage, cache and downloads are never
seen by another env, nor by the next episode of the same env. The gym's descriptor is :data:`GYM`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hud_gym.controllers.base import Controller, Frame
from hud_gym.core.env import HudEnv, Observation
from hud_gym.core.gym_type import GymType
from hud_gym.task import Task
from hud_gym.tasksets import resolve_task, resolve_taskset

if TYPE_CHECKING:
    from hud_gym.controllers.browser.controller import ResetMode
    from hud_gym.controllers.browser.miniwob_env import RewardProcessor, TerminalFrame
    from hud_gym.controllers.browser.observation import ImageFormat

__all__ = ["GYM", "BrowserEnv"]


class BrowserEnv(HudEnv):
    """A browser tab. Observations: the viewport's pixels and ``"URL: ...\\nTitle: ..."``;
    ``info`` adds ``url``, ``title``, ``tabs``, the ``dialogs`` and ``downloads`` of the step, and
    ``elements`` when asked for. Custom actions: ``goto`` (``{"url"}``), ``back``, ``forward``,
    ``reload``, ``new_tab`` (``{"url"}`` optional), ``switch_tab`` (``{"index"}``), ``close_tab``
    (``{"index"}`` optional).

    Nondeterministic (real pages, real time), so ``check_env``'s determinism checks are skipped
    through the registration's ``nondeterministic=True``.

    MiniWoB++ tasks observe their task area unless ``observation_crop`` or ``observation_size``
    is given, report MiniWoB's ``fields`` in ``info``, and take ``reset(options={"data_mode":
    "test"})`` (:mod:`~hud_gym.controllers.browser.miniwob_env`).

    Args:
        elements: report the visible interactive and text elements in ``info["elements"]``
            (``tag``, ``text``, ``value``, ``id``, ``bbox`` = ``[x, y, width, height]`` in
            observation pixels, ...) and, on a MiniWoB++ page, MiniWoB's own DOM observation in
            ``info["dom_elements"]``, whose refs the ``click_element`` / ``type_field`` custom
            actions take (:mod:`~hud_gym.controllers.browser.miniwob_dom`).
        headless: run Chromium without a window.
        executable_path: the Chromium to run (default: ``$HUD_GYM_CHROMIUM``, Playwright's cache,
            then the system's Chromium).
        launch_args: extra Chromium flags (e.g.
            :data:`~hud_gym.controllers.browser.binary.UNLIMITED_FRAME_RATE_ARGS`: no 60 Hz frame
            clock, faster single steps on pages that never animate, both cores for one that does).
        context_options: extra Playwright ``new_context`` options (``locale``, ``timezone_id``, ...).
        reset_mode: ``"clear"`` (clear cookies/storage/tabs, ~30 ms) or ``"fresh"`` (a new context,
            ~170 ms).
        fresh_context_every: with ``"clear"``, a new context every this many episodes (0 = never).
        screenshot_format: ``"jpeg"`` (fast, default) or ``"png"`` (lossless).
        jpeg_quality: JPEG quality 1-100.
        navigation_timeout: seconds a navigation (goto, a clicked link, a new tab's load) is waited
            for before the page is observed as it is.
        max_elements: cap on ``info["elements"]``.
        allow_file_urls: the one directory whose files pages may open as ``file:`` URLs (its
            sub-directories included; symlinks and ``..`` resolved). ``None`` (default): no
            ``file:`` URL at all. ``chrome:``, ``devtools:``, ``view-source:`` and ``javascript:``
            URLs are never opened. A controller server refuses this option from its clients unless
            started with ``--trust-client-options`` (the path is on the server's machine).
        reward_processor: MiniWoB++ tasks: ``"raw"`` (default), ``"original"``, ``"binary"`` or
            ``"thresholded"``, MiniWoB's reward processors
            (:mod:`~hud_gym.controllers.browser.miniwob_env`).
        reward_threshold: the ``"thresholded"`` processor's threshold.
        terminal_frame: MiniWoB++ tasks: ``"page"`` (default: the page, done cover included) or
            ``"black"`` (an all-zero screenshot once done, as the official env).
        capture: how frames are taken. ``"cdp"`` (default): the DevTools ``Page.captureScreenshot``
            JPEG, every env a context of the one shared Chromium. ``"headed"``: the env's own
            Chromium draws on a private Xvfb (its own cookie) and frames are grabbed through MIT-SHM
            once the action's frame is on the display (a third or less of the CPU of a step, never
            a stale frame; a browser per env, so more memory). ``"auto"``: ``"headed"`` where Xvfb
            is installed and ``headless=True`` (falling back to CDP when the display does not
            start), else ``"cdp"``.
        warm_pages: MiniWoB++ tasks: how many recently used task pages stay warm (each paused in
            a browser context of its own), so that a reset onto one of them loads nothing (2-5x
            faster than loading the page, ``benchmarks/README.md``; each costs a renderer's memory,
            ~25-40 MiB); 0 turns this off. A reset onto a task that is not warm costs more than
            with 0 (measured: 60 switches through 60 different tasks, 14-16 s against 8 s, the
            tab's scripts are paused and resumed), so sample from many tasks uniformly with 0.
        limits: what each of the browser's renderers (a page's JavaScript) may use, a dict of
            ``memory_mb`` (1024), ``pids`` (256 threads), ``cpu_cores`` (1.0 at once) and
            ``cpu_seconds`` (10: a renderer busy at its quota that long in a row is killed);
            ``None`` for no limit of that kind. A cgroup per renderer where this process can make
            one, else ``RLIMIT_DATA`` (``hud-gym doctor`` says which). A renderer past a limit
            dies, and its env's episode ends as ``env_error``. Envs with different limits get
            different browsers.
        **kwargs: :class:`~hud_gym.core.env.HudEnv` arguments (``task``, ``taskset``,
            ``screen_size``, ``observation_size``, ``max_episode_steps``, ``step_timeout``, ...).

    Example:
        >>> import gymnasium, hud_gym
        >>> from hud_gym import CustomAction
        >>> env = gymnasium.make("hud/Browser-v0", screen_size=(800, 600))  # doctest: +SKIP
        >>> obs, info = env.reset(seed=0)                                    # doctest: +SKIP
        >>> obs, r, term, trunc, info = env.step(CustomAction(action="goto", args={"url": "about:blank"}))  # doctest: +SKIP
        >>> env.close()                                                      # doctest: +SKIP
    """

    reset_options = HudEnv.reset_options | {"data_mode"}

    def __init__(
        self,
        *args: Any,
        elements: bool = False,
        headless: bool = True,
        executable_path: str | None = None,
        launch_args: tuple[str, ...] | list[str] = (),
        context_options: dict[str, Any] | None = None,
        reset_mode: ResetMode = "clear",
        fresh_context_every: int = 100,
        screenshot_format: ImageFormat = "jpeg",
        jpeg_quality: int = 85,
        navigation_timeout: float = 10.0,
        max_elements: int = 500,
        allow_file_urls: str | Path | None = None,
        reward_processor: RewardProcessor = "raw",
        reward_threshold: float = 1.0,
        terminal_frame: TerminalFrame = "page",
        capture: str = "cdp",
        warm_pages: int = 4,
        limits: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        from hud_gym.controllers.browser import miniwob_env

        miniwob_env.check_options(reward_processor, reward_threshold, terminal_frame)
        self.reward_processor = reward_processor
        self.reward_threshold = float(reward_threshold)
        self.terminal_frame = terminal_frame
        self.data_mode: str | None = None  # set by reset(options={"data_mode": ...})
        if kwargs.get("observation_crop") is None and kwargs.get("observation_size") is None:
            # MiniWoB tasks observe their task area, as the official env does.
            tasks = _given_tasks(args, kwargs)
            if miniwob_env.all_miniwob(tasks):
                from hud_gym.controllers.browser.miniwob import MINIWOB_TASK_AREA

                kwargs["observation_crop"] = MINIWOB_TASK_AREA
        super().__init__(*args, **kwargs)
        self._controller_options: dict[str, Any] = {
            "headless": headless,
            "elements": elements,
            "executable_path": executable_path,
            "launch_args": tuple(launch_args),
            "context_options": dict(context_options or {}),
            "reset_mode": reset_mode,
            "fresh_context_every": fresh_context_every,
            "screenshot_format": screenshot_format,
            "jpeg_quality": jpeg_quality,
            "navigation_timeout": navigation_timeout,
            "max_elements": max_elements,
            "allow_file_urls": allow_file_urls,
            "capture": capture,
            "warm_pages": warm_pages,
            "limits": dict(limits) if limits is not None else None,
        }
        # Fail at make time, not at the first reset, on a bad option. The allowed directory of a
        # controller in a container or on another machine is a path there, not here.
        checked = dict(self._controller_options)
        if self.placement not in ("local", "subprocess"):
            checked["allow_file_urls"] = None
        assert self.descriptor is not None
        self.descriptor.make_controller(self.screen_size, **checked)
        if allow_file_urls is not None:
            from hud_gym.controllers.browser.urls import UrlPolicy

            UrlPolicy.check_path(allow_file_urls)

    def _make_controller(self) -> Controller:
        assert self.descriptor is not None
        controller: Controller = self.descriptor.make_controller(self.screen_size, **self._controller_options)
        return controller

    def controller_options(self) -> dict[str, Any]:
        """The options of this env's :class:`~hud_gym.controllers.browser.BrowserController` (JSON-ready)."""
        files = self._controller_options["allow_file_urls"]
        return {
            **self._controller_options,
            "launch_args": list(self._controller_options["launch_args"]),
            "allow_file_urls": os.fspath(files) if isinstance(files, os.PathLike) else files,
        }

    def _pick_task(self, options: dict[str, Any]) -> Task | None:
        """As :class:`HudEnv`; ``options["data_mode"]`` sets the MiniWoB data mode of this episode
        and the next ones (as the official env's ``set_data_mode``)."""
        from hud_gym.controllers.browser import miniwob_env

        task = super()._pick_task(options)
        if "data_mode" in options:
            if not miniwob_env.is_miniwob(task):
                raise ValueError(
                    f"reset option 'data_mode' applies to MiniWoB++ tasks, not {task.id if task else None!r}"
                )
            assert task is not None
            task = miniwob_env.with_data_mode(task, options["data_mode"])
            self.data_mode = options["data_mode"]
        elif self.data_mode is not None and miniwob_env.is_miniwob(task):
            assert task is not None
            task = miniwob_env.with_data_mode(task, self.data_mode)
        return task

    def set_data_mode(self, mode: str) -> None:
        """MiniWoB's data mode (``"train"``, ``"test"``, ...) from the next episode on, as the
        official env's ``set_data_mode`` (or ``reset(options={"data_mode": mode})``)."""
        if not isinstance(mode, str) or not mode:
            raise ValueError(f"a data mode is a non-empty string such as 'test', got {mode!r}")
        self.data_mode = mode

    def _finish_step(
        self, observation: Observation, reward: float | None, terminated: bool, truncated: bool, info: dict[str, Any]
    ) -> tuple[Observation, float | None]:
        """MiniWoB tasks: the reward processor and the terminal frame (:mod:`~hud_gym.controllers.browser.miniwob_env`)."""
        from hud_gym.controllers.browser import miniwob_env

        if not miniwob_env.is_miniwob(self.task):
            return observation, reward
        grade = info.get("grade")
        if reward is not None and grade is not None and self.reward_processor != "raw":
            reward = miniwob_env.process_reward(self.reward_processor, grade, self.reward_threshold)
        if self.terminal_frame == "black" and grade is not None and grade.done and terminated:
            observation = {**observation, "screenshot": np.zeros_like(observation["screenshot"])}
            self._last_screenshot = observation["screenshot"].copy()
        return observation, reward

    def _observation(self, frame: Frame) -> Observation:
        """As :class:`HudEnv`, with element boxes mapped from screen to observation pixels and
        the elements wholly outside the observed region (a crop) left out."""
        elements = frame.info.get("elements")
        if elements and (self.observation_crop is not None or not self.screen_mapping.identity):
            width, height = self.observation_size
            visible = []
            for element in elements:
                x, y, w, h = self.screen_mapping.box(*element["bbox"])
                if x + w <= 0 or y + h <= 0 or x >= width or y >= height:
                    continue
                element["bbox"] = [round(x, 1), round(y, 1), round(w, 1), round(h, 1)]
                visible.append(element)
            frame.info["elements"] = visible
        dom = frame.info.get("dom_elements")
        if dom and not self.screen_mapping.identity:
            # MiniWoB's own DOM observation: every element kept (as the official env), in observation pixels.
            for element in dom:
                box = self.screen_mapping.box(element["left"], element["top"], element["width"], element["height"])
                element["left"], element["top"], element["width"], element["height"] = (round(v, 1) for v in box)
        return super()._observation(frame)


def _given_tasks(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Task | None]:
    """The tasks an env is made with (``task``, else ``taskset``), resolved; [] when neither, or
    when they cannot be resolved (the env's own constructor then reports the error)."""
    task = kwargs.get("task", args[0] if args else None)
    taskset = kwargs.get("taskset", args[1] if len(args) > 1 else None)
    try:
        if task is not None:
            return [resolve_task(task)]
        if taskset is not None:
            return list(resolve_taskset(taskset))
    except Exception:  # noqa: BLE001  (reported by HudEnv.__init__, which resolves them again)
        return []
    return []


GYM = GymType(
    name="browser",
    id="hud/Browser-v0",
    env=BrowserEnv,
    controller="hud_gym.controllers.browser:BrowserController",
    aliases=("hud-browser",),
    function_modules=("hud_gym.controllers.browser.functions", "hud_gym.controllers.browser.miniwob"),
    function_prefixes=("browser", "chrome", "chromium", "page"),
    tasksets={
        "miniwob": "hud_gym.controllers.browser.miniwob:miniwob_taskset",
        "miniwob-flight": "hud_gym.controllers.browser.miniwob:miniwob_flight_taskset",
        "miniwob-official": "hud_gym.controllers.browser.miniwob:miniwob_official_taskset",
    },
    max_episode_steps=50,
    description="a Chromium tab (Playwright), one isolated context per env",
)
"""The browser gym."""
