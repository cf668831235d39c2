"""``hud/Browser-v0``: a Chromium tab driven with CLA actions, observed as pixels.

Every env in a process shares one Chromium (launched on the first reset, closed with the last
env) and has its own isolated browser context: cookies, storage, cache and downloads are never
seen by another env, nor by the next episode of the same env. The gym's descriptor is :data:`GYM`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hud_gym.controllers.base import Controller, Frame
from hud_gym.core.env import HudEnv, Observation
from hud_gym.core.gym_type import GymType

if TYPE_CHECKING:
    from hud_gym.controllers.browser.controller import ResetMode
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

    The gym's suites (:mod:`hud_gym.suites`) add task sets, env options, reset options, custom
    actions and ``info`` entries for their tasks (:mod:`hud_gym.core.suite`).

    Args:
        elements: report the visible interactive and text elements in ``info["elements"]``
            (``tag``, ``text``, ``value``, ``id``, ``bbox`` = ``[x, y, width, height]`` in
            observation pixels, ...) and the suites' page probes
            (:mod:`~hud_gym.controllers.browser.extensions`).
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
        capture: how frames are taken. ``"cdp"`` (default): the DevTools ``Page.captureScreenshot``
            JPEG, every env a context of the one shared Chromium. ``"headed"``: the env's own
            Chromium draws on a private Xvfb (its own cookie) and frames are grabbed through MIT-SHM
            once the action's frame is on the display (a third or less of the CPU of a step, never
            a stale frame; a browser per env, so more memory). ``"auto"``: ``"headed"`` where Xvfb
            is installed and ``headless=True`` (falling back to CDP when the display does not
            start), else ``"cdp"``.
        warm_pages: tasks that keep their page (``config["keep_page"]``): how many recently used task pages stay warm (each paused in
            a browser context of its own), so that a reset onto one of them loads nothing (2-5x
            faster than loading the page, ``benchmarks/README.md``; each costs a renderer's memory,
            ~25-40 MiB); 0 turns this off. A reset onto a task that is not warm costs more than
            with 0 (measured: 60 switches through 60 different tasks, 14-16 s against 8 s, the
            tab's scripts are paused and resumed), so sample from many tasks uniformly with 0.
        **kwargs: :class:`~hud_gym.core.env.HudEnv` arguments (``task``, ``taskset``,
            ``screen_size``, ``observation_size``, ``max_episode_steps``, ``step_timeout``, ...)
            and the suites' options.

    Example:
        >>> import gymnasium, hud_gym
        >>> from hud_gym import CustomAction
        >>> env = gymnasium.make("hud/Browser-v0", screen_size=(800, 600))  # doctest: +SKIP
        >>> obs, info = env.reset(seed=0)                                    # doctest: +SKIP
        >>> obs, r, term, trunc, info = env.step(CustomAction(action="goto", args={"url": "about:blank"}))  # doctest: +SKIP
        >>> env.close()                                                      # doctest: +SKIP
    """

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
        capture: str = "cdp",
        warm_pages: int = 4,
        **kwargs: Any,
    ) -> None:
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
        return super()._observation(frame)


GYM = GymType(
    name="browser",
    id="hud/Browser-v0",
    env=BrowserEnv,
    controller="hud_gym.controllers.browser:BrowserController",
    aliases=("hud-browser",),
    function_modules=("hud_gym.controllers.browser.functions",),
    function_prefixes=("browser", "chrome", "chromium", "page"),
    max_episode_steps=50,
    description="a Chromium tab (Playwright), one isolated context per env",
)
"""The browser gym."""
