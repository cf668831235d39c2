"""``hud/Ubuntu-v0``: a Linux desktop on a private X display, driven with CLA actions through real
X input and observed as pixels.

Every env owns its Xvfb display, window manager (openbox), home and temp directories, started on
the first reset (never at make time) and stopped by ``close()``. See
:class:`~hud_gym.controllers.ubuntu.controller.UbuntuController` for the episode reset, the input
and the observation's synchronisation. The gym's descriptor is :data:`GYM`.
"""

from __future__ import annotations

from typing import Any

from hud_gym.controllers.base import Frame
from hud_gym.core.env import HudEnv, Observation
from hud_gym.core.gym_type import GymType

__all__ = ["GYM", "UbuntuEnv"]


class UbuntuEnv(HudEnv):
    """A Linux desktop. Observations: the screen's pixels and ``"Focused window: <title>"``;
    ``info`` adds ``focused_window`` (its title) and ``windows`` (the titles of the mapped windows).
    ``info["display"]`` and :attr:`display` name the X display (``":57"``) once reset.
    Custom actions: ``launch`` (``{"app": name, "args": [...]}``: ``xterm``, ``editor``,
    ``eventlog``, ``xcalc``, ``xclock``, ``xeyes``, ``xlogo``, ``xedit`` with checked arguments; any
    program with ``allow_shell``, inside the sandbox), ``key_sequence`` (``{"keys": ["ctrl+a", "delete"]}``, pressed one
    after another) and ``clipboard_set`` (``{"text"}``).

    Scroll amounts are pixels (positive = down/right), 100 px per wheel click. Nondeterministic
    (real applications, real time), so ``check_env``'s determinism checks are skipped through the
    registration's ``nondeterministic=True``.

    Args:
        allow_shell: allow what runs arbitrary commands: ``launch`` of any program, the setup and
            evaluate functions that run shell commands (always allowed inside the gym's container).
        allow_absolute_paths: let task paths point outside the env's home directory.
        window_manager: ``"openbox"`` (title bars, focus on click, Alt+Tab) or ``None``.
        in_container: whether this runs inside the gym's container (``None``: detect).
        sandbox: run the desktop (Xvfb, window manager, apps, task processes, setup/evaluate
            commands) in bubblewrap sandboxes as an unprivileged uid, with a private home and tmp,
            the host's ``/usr`` read-only and no network (``None``, the default: yes, except inside
            the gym's container, itself the sandbox). ``False`` runs them as this process's user
            with the host's files and network, and warns.
        allow_network: a task whose ``config`` says ``{"network": true}`` gets the host's network in
            its sandbox (without this option such a task's reset raises ``PermissionError``).
        first_paint: seconds an observation waits for the first repaint after input.
        quiet: seconds without repaint after which the screen counts as settled.
        settle_limit: most seconds an observation waits for the screen to settle.
        limits: what one episode's programs may use (sandboxed), a dict of ``memory_mb`` (2048),
            ``pids`` (512 processes and threads), ``cpu_cores`` (1.0 at once) and
            ``cpu_seconds`` (300 per episode); ``None`` for no limit of that kind. Enforced by a
            cgroup per episode where this process can make one, else by rlimits (``hud-gym
            doctor`` says which). An episode that reaches one ends as ``env_error``.
        **kwargs: :class:`~hud_gym.core.env.HudEnv` arguments (``task``, ``taskset``,
            ``screen_size``, ``observation_size``, ``max_steps``, ``step_timeout``, ...).

    Example:
        >>> import gymnasium, hud_gym
        >>> from hud_gym import CustomAction
        >>> env = gymnasium.make("hud/Ubuntu-v0", screen_size=(1024, 768))          # doctest: +SKIP
        >>> obs, info = env.reset(seed=0)                                           # doctest: +SKIP
        >>> obs, r, term, trunc, info = env.step(CustomAction(action="launch", args={"app": "xterm"}))  # doctest: +SKIP
        >>> env.close()                                                             # doctest: +SKIP
    """

    def __init__(
        self,
        *args: Any,
        allow_shell: bool = False,
        allow_absolute_paths: bool = False,
        window_manager: str | None = "openbox",
        in_container: bool | None = None,
        sandbox: bool | None = None,
        allow_network: bool = False,
        first_paint: float = 0.05,
        quiet: float = 0.005,
        settle_limit: float = 1.0,
        limits: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._controller_options: dict[str, Any] = {
            "allow_shell": allow_shell,
            "allow_absolute_paths": allow_absolute_paths,
            "window_manager": window_manager,
            "in_container": in_container,
            "sandbox": sandbox,
            "allow_network": allow_network,
            "first_paint": first_paint,
            "quiet": quiet,
            "settle_limit": settle_limit,
            "limits": dict(limits) if limits is not None else None,
        }
        # Fail at make time, not at the first reset, on a bad option (nothing starts here).
        self._make_controller()
        self._display: str | None = None

    @property
    def display(self) -> str | None:
        """The X display of the desktop (``":57"``), ``None`` before the first reset. With a
        remote controller (``controller="subprocess"``, ``"docker"``, ``"ws://..."``) it is the
        controller server's display, on that server's host (or container). A sandboxed display
        needs its cookie: X clients of this process's user connect with ``XAUTHORITY`` set to
        ``env.unwrapped.controller.xauthority`` (a local controller)."""
        return self._display

    def _observation(self, frame: Frame) -> Observation:
        display = frame.info.get("display")
        if isinstance(display, str) and display:
            self._display = display
        return super()._observation(frame)

    def controller_options(self) -> dict[str, Any]:
        """The options of this env's :class:`~hud_gym.controllers.ubuntu.UbuntuController` (JSON-ready)."""
        return dict(self._controller_options)


GYM = GymType(
    name="ubuntu",
    id="hud/Ubuntu-v0",
    env=UbuntuEnv,
    controller="hud_gym.controllers.ubuntu:UbuntuController",
    aliases=("hud-ubuntu", "desktop"),
    # The OSWorld functions (download_file, command_output_check, file_content_check) are desktop
    # functions too, whichever module defines them.
    function_modules=("hud_gym.controllers.ubuntu.functions", "hud_gym.controllers.ubuntu.osworld_functions"),
    function_prefixes=("ubuntu", "desktop", "os"),
    max_episode_steps=50,
    description="a Linux desktop on a private X display, driven through real X input",
)
"""The desktop gym."""
