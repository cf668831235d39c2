"""The options of ``hud/Ubuntu-v0`` (:class:`UbuntuOptions`), declared once: the env's keywords,
the :class:`~hud_gym.controllers.ubuntu.UbuntuController`'s options and a controller server's JSON
are this model (:mod:`hud_gym.core.gym_options`). Importing it imports no desktop.

Example:
    >>> UbuntuOptions(window_manager=None).sandbox is None
    True
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from hud_gym.core.gym_options import GymOptions, LimitsOption

__all__ = ["UbuntuOptions", "WindowManager"]

WindowManager = Literal["openbox"]
"""The window managers the desktop runs (``hud_gym.controllers.ubuntu.display.WINDOW_MANAGERS``)."""


class UbuntuOptions(GymOptions):
    """The options of a desktop env and its controller (each field's description is its doc)."""

    allow_shell: bool = Field(
        default=False,
        description="Allow what runs arbitrary commands: `launch` of any program, the setup and evaluate "
        "functions that run shell commands (always allowed inside the gym's container).",
    )
    allow_absolute_paths: bool = Field(
        default=False, description="Let task paths point outside the env's home directory."
    )
    window_manager: WindowManager | None = Field(
        default="openbox",
        description="`'openbox'` (title bars, focus on click, Alt+Tab) or `None` (bare X: no title bars, no "
        "focus handling).",
    )
    in_container: bool | None = Field(
        default=None,
        description="Whether this runs inside the gym's container, where shell commands are allowed; `None`: "
        "detect (`HUD_GYM_IN_CONTAINER=1`, set by the `docker/ubuntu` image).",
    )
    sandbox: bool | None = Field(
        default=None,
        description="Run the desktop (Xvfb, window manager, apps, task processes, setup/evaluate commands) in "
        "bubblewrap sandboxes as an unprivileged uid, with a private home and tmp, the host's `/usr` read-only "
        "and no network. `None`: yes, except inside the gym's container (itself the sandbox). `False` runs "
        "them as this process's user with the host's files and network, and warns.",
    )
    allow_network: bool = Field(
        default=False,
        description="A task whose `config` says `{'network': true}` gets the host's network in its sandbox "
        "(without this option such a task's reset raises `PermissionError`).",
    )
    first_paint: float = Field(
        default=0.05, ge=0, le=60, description="Seconds an observation waits for the first repaint after input."
    )
    quiet: float = Field(
        default=0.005, ge=0, le=60, description="Seconds without repaint after which the screen counts as settled."
    )
    settle_limit: float = Field(
        default=1.0, ge=0, le=600, description="Most seconds an observation waits for the screen to settle."
    )
    kill_grace: float = Field(
        default=0.5, ge=0, le=60, description="Seconds task processes get between SIGTERM and SIGKILL."
    )
    launch_timeout: float = Field(
        default=10.0, gt=0, le=600, description="Seconds `launch` waits for the app's first window."
    )
    limits: LimitsOption = Field(
        default=None,
        description="What one episode's programs may use (sandboxed): some of `memory_mb` (2048), `pids` (512 "
        "processes and threads), `cpu_cores` (1.0 at once), `cpu_seconds` (300 per episode); `None` for no "
        "limit of that kind. A cgroup per episode where possible, else rlimits; an episode that reaches one "
        "ends as `env_error`.",
    )
