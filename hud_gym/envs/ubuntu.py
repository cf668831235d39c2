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
from hud_gym.envs.ubuntu_options import UbuntuOptions

__all__ = ["GYM", "UbuntuEnv", "UbuntuOptions"]


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

    Options: :class:`~hud_gym.envs.ubuntu_options.UbuntuOptions` (``allow_shell``, ``sandbox``,
    ``allow_network``, ``window_manager``, ``limits``, ...), given as keywords or whole as
    ``options=``.

    Args:
        *args: :class:`~hud_gym.core.env.HudEnv`'s positional arguments (``task``, ``taskset``).
        **kwargs: :class:`~hud_gym.core.env.HudEnv` arguments (``screen_size``,
            ``observation_size``, ``max_steps``, ``step_timeout``, ...) and the desktop's options.

    Example:
        >>> import gymnasium, hud_gym
        >>> from hud_gym import CustomAction
        >>> env = gymnasium.make("hud/Ubuntu-v0", screen_size=(1024, 768))          # doctest: +SKIP
        >>> obs, info = env.reset(seed=0)                                           # doctest: +SKIP
        >>> obs, r, term, trunc, info = env.step(CustomAction(action="launch", args={"app": "xterm"}))  # doctest: +SKIP
        >>> env.close()                                                             # doctest: +SKIP
    """

    options: UbuntuOptions

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Fail at make time, not at the first reset, on a bad option (nothing starts here).
        self._make_controller()
        self._display: str | None = None

    @property
    def display(self) -> str | None:
        """The X display of the desktop (``":57"``), ``None`` before the first reset. With a
        remote controller (``controller="subprocess"``, ``"docker"``, ``"ws://..."``) it is the
        controller server's display, on that server's host (or container). A sandboxed display
        needs its cookie: X clients of this process's user connect with ``XAUTHORITY`` set to
        ``env.unwrapped.controller.state.xauthority`` (a local controller)."""
        return self._display

    def _observation(self, frame: Frame) -> Observation:
        display = frame.info.get("display")
        if isinstance(display, str) and display:
            self._display = display
        return super()._observation(frame)


GYM = GymType(
    name="ubuntu",
    id="hud/Ubuntu-v0",
    env=UbuntuEnv,
    controller="hud_gym.controllers.ubuntu:UbuntuController",
    options=UbuntuOptions,
    aliases=("hud-ubuntu", "desktop"),
    # The OSWorld functions (download_file, command_output_check, file_content_check) are desktop
    # functions too, whichever module defines them.
    function_modules=("hud_gym.controllers.ubuntu.functions", "hud_gym.controllers.ubuntu.osworld_functions"),
    function_prefixes=("ubuntu", "desktop", "os"),
    max_episode_steps=50,
    description="a Linux desktop on a private X display, driven through real X input",
)
"""The desktop gym."""
