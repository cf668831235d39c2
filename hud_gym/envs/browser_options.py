"""The options of ``hud/Browser-v0`` (:class:`BrowserOptions`), declared once: the env's keywords,
the :class:`~hud_gym.controllers.browser.BrowserController`'s options and a controller server's
JSON are this model (:mod:`hud_gym.core.gym_options`). Importing it imports no browser.

Example:
    >>> BrowserOptions(reset_mode="fresh", jpeg_quality=90).jpeg_quality
    90
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, ValidationInfo, field_validator

from hud_gym.core.gym_options import GymOptions, LimitsOption

__all__ = ["BrowserOptions", "Capture", "ImageFormat", "ResetMode"]

ResetMode = Literal["clear", "fresh"]
"""How an episode starts: the context cleared, or a new one."""
Capture = Literal["auto", "headed", "cdp"]
"""How frames are taken (see :attr:`BrowserOptions.capture`)."""
ImageFormat = Literal["jpeg", "png"]
"""The screenshot's encoding in Chromium."""


def _fspath(value: Any) -> Any:
    return os.fspath(value) if isinstance(value, os.PathLike) else value


def _a_directory(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError(
            "names the one directory whose files pages may open (a path): there is no 'every file' setting"
        )
    return value


class BrowserOptions(GymOptions):
    """The options of a browser env and its controller (each field's description is its doc)."""

    elements: bool = Field(
        default=False,
        description="Report the visible interactive and text elements in `info['elements']` (`tag`, `text`, "
        "`value`, `id`, `bbox` = `[x, y, width, height]` in observation pixels, ...) and the suites' page probes.",
    )
    headless: bool = Field(default=True, description="Run Chromium without a window.")
    executable_path: Annotated[str | None, BeforeValidator(_fspath)] = Field(
        default=None,
        max_length=4096,
        description="The Chromium to run (default: `$HUD_GYM_CHROMIUM`, Playwright's cache, then the system's).",
    )
    launch_args: tuple[Annotated[str, Field(max_length=4096)], ...] = Field(
        default=(),
        max_length=256,
        description="Extra Chromium flags (e.g. `UNLIMITED_FRAME_RATE_ARGS`: no 60 Hz frame clock); envs with "
        "different flags get different browsers.",
    )
    context_options: dict[str, Any] = Field(
        default_factory=dict,
        description="Extra Playwright `new_context` options (`locale`, `timezone_id`, `user_agent`, ...).",
    )
    reset_mode: ResetMode = Field(
        default="clear",
        description="`'clear'` (clear cookies, storage and tabs, ~30 ms) or `'fresh'` (a new context, ~170 ms).",
    )
    fresh_context_every: int = Field(
        default=100, ge=0, description="With `reset_mode='clear'`, a new context every this many episodes (0: never)."
    )
    screenshot_format: ImageFormat = Field(
        default="jpeg", description="`'jpeg'` (fast) or `'png'` (lossless, about twice as slow)."
    )
    jpeg_quality: int = Field(default=85, ge=1, le=100, description="JPEG quality, 1-100.")
    navigation_timeout: float = Field(
        default=10.0,
        gt=0,
        le=3600,
        description="Seconds a navigation (goto, a clicked link, a new tab's load) is waited for before the "
        "page is observed as it is.",
    )
    max_elements: int = Field(default=500, ge=0, le=100_000, description="Cap on `info['elements']`.")
    axtree: bool = Field(
        default=False,
        description="Add `obs['axtree']`: the page's accessibility tree, pruned to its visible elements, as JSON "
        "text (each node `id`, `role`, `name`, `depth`, `bbox` in observation pixels, `value` and states such as "
        "`focused`, `checked`, `disabled` when set); `id` is what `click_element` / `type_field` take as `node`.",
    )
    som: bool = Field(
        default=False,
        description="Add `obs['som']` (set-of-marks: the screenshot with the page's clickable elements boxed and "
        "numbered) and its table `info['som']` (`id`, `tag`, `text`, `bbox`); `click_element` / `type_field` "
        "take an `id` as `{'node': id}`.",
    )
    max_nodes: int = Field(
        default=200, ge=1, le=2000, description="Cap on the nodes of `obs['axtree']` and the marks of `info['som']`."
    )
    allow_file_urls: Annotated[Path | None, BeforeValidator(_a_directory)] = Field(
        default=None,
        description="The one directory whose files pages may open as `file:` URLs (its sub-directories "
        "included; symlinks and `..` resolved); `None`: no `file:` URL at all. `chrome:`, `devtools:`, "
        "`view-source:` and `javascript:` URLs are never opened. A controller server refuses it from its "
        "clients unless started with `--trust-client-options` (the path is on the server's machine).",
    )
    capture: Capture = Field(
        default="cdp",
        description="How frames are taken. `'cdp'`: DevTools `Page.captureScreenshot`, every env a context of "
        "the one shared Chromium. `'headed'`: the env's own Chromium draws on a private Xvfb and frames are "
        "grabbed through MIT-SHM once the action's frame is on the display (a third or less of the CPU of a "
        "step; a browser per env, so more memory; needs `headless=True`). `'auto'`: `'headed'` where Xvfb is "
        "installed and `headless=True` (falling back to CDP when the display does not start), else `'cdp'`.",
    )
    warm_pages: int = Field(
        default=4,
        strict=True,
        ge=0,
        le=32,
        description="For tasks that keep their page (`config['keep_page']`): how many recently used task pages "
        "stay warm, each paused in a browser context of its own, so that a reset onto one loads nothing "
        "(2-5x faster; each costs a renderer's memory, ~25-40 MiB); 0 turns this off. A reset onto a page "
        "that is not warm costs more than with 0: sample from many tasks uniformly with 0.",
    )
    limits: LimitsOption = Field(
        default=None,
        description="What each of the browser's renderers may use: some of `memory_mb` (1024), `pids` (256 "
        "threads), `cpu_cores` (1.0 at once), `cpu_seconds` (10 busy in a row); `None` for no limit of that "
        "kind. A cgroup per renderer where possible, else `RLIMIT_DATA`; a renderer past a limit dies and its "
        "episode ends as `env_error`. Envs with different limits get different browsers.",
    )

    @field_validator("capture")
    @classmethod
    def _headed_needs_headless(cls, capture: Capture, info: ValidationInfo) -> Capture:
        if capture == "headed" and info.data.get("headless") is False:
            raise ValueError("'headed' draws on a private display: it needs headless=True")
        return capture
