"""The desktop controller of ``hud/Ubuntu-v0``: one Xvfb display, a window manager and real X input.

Session (started lazily, on the env's first reset; :mod:`~hud_gym.controllers.ubuntu.session`): a
private Xvfb display (a free number from :data:`~hud_gym.controllers.x11.xvfb.FIRST_DISPLAY` up)
authorised by a fresh cookie, openbox with a minimal configuration (or no WM), a private home and
temp directory, one persistent X connection, one MIT-SHM screen grabber. By default (``sandbox``)
all of it runs in bubblewrap sandboxes as an unprivileged uid (:mod:`~hud_gym.controllers.ubuntu.sandboxed`),
the task processes (:meth:`UbuntuController.spawn`, :meth:`~UbuntuController.run`, the ``launch``
action, the clipboard owner) in one sandbox per episode; with ``sandbox=False`` they run in one
process group per episode (:mod:`~hud_gym.controllers.ubuntu.processes`) as this process's user.

Reset: kill the task's processes (the episode's sandbox, or SIGTERM then SIGKILL by process group;
no survivor), close the windows left over, release held keys and buttons, give remapped keycodes
back, move the pointer to (0, 0), empty the home and temp directories.

Actions: XTEST input (:mod:`~hud_gym.controllers.ubuntu.xinput`), synced with the server after each
action. Scroll amounts are pixels, positive = down/right, one wheel click per
:data:`PIXELS_PER_WHEEL_CLICK` pixels (rounded; a non-zero amount scrolls at least one click).

Observation: :meth:`~hud_gym.controllers.x11.connection.XConnection.settle` (XSync, then XDamage
events until the repaints stop) and one MIT-SHM grab; the text is ``"Focused window: <title>"``.

Every X request runs on the X connection's own thread (:mod:`~hud_gym.controllers.x11.xthread`),
never on the hud-gym loop: a desktop whose X server is grabbed (``XGrabServer`` by an agent's
script) or stopped times its own step out and stops no other env.

The controller is composed of parts, one job each (see the package docstring): :mod:`.lifecycle`
(start, reset, close), :mod:`.input` (the XTEST actions), :mod:`.desktop` (the API of the gym's
functions: permissions, processes, windows, clipboard), :mod:`.custom` (``launch``,
``key_sequence``, ``clipboard_set``) and the pure :mod:`.policy` (what ``launch`` starts, which
paths a task reaches). This module puts them together, runs each CLA action through
:data:`ACTIONS` and observes.

Safety: a task's or an agent's programs reach only the sandbox (see docs/security.md).
``launch`` starts only the apps of :data:`LAUNCHABLE` with checked arguments unless shell commands
are allowed (``allow_shell=True``, or inside the gym's container: then they run in the sandbox);
paths of tasks stay inside the env's home unless ``allow_absolute_paths=True``; the network is
there only for a task that asks for it (``config={"network": true}``) on an env made with
``allow_network=True``.
"""

from __future__ import annotations

import hud_gym.controllers.ubuntu.windows as xwindows
from hud_gym.actions import (
    CLAAction,
    ClickAction,
    CustomAction,
    DragAction,
    KeyDownAction,
    KeyUpAction,
    MoveAction,
    PositionFetch,
    PressAction,
    ScreenshotFetch,
    ScrollAction,
    TypeAction,
    WaitAction,
)
from hud_gym.controllers.base import ActionOutcome, ControllerError, Frame
from hud_gym.controllers.dispatch import ActionTable
from hud_gym.controllers.ubuntu.custom import CUSTOM, CUSTOM_ACTIONS, DesktopCustom
from hud_gym.controllers.ubuntu.input import PIXELS_PER_WHEEL_CLICK, Settled, wheel_clicks
from hud_gym.controllers.ubuntu.policy import LAUNCHABLE
from hud_gym.controllers.x11.connection import X_ERRORS

__all__ = [
    "ACTIONS",
    "CUSTOM",
    "CUSTOM_ACTIONS",
    "LAUNCHABLE",
    "PIXELS_PER_WHEEL_CLICK",
    "Settled",
    "UbuntuController",
    "wheel_clicks",
]


class UbuntuController(DesktopCustom):
    """Drives one private X desktop; see the module docstring.

    Args:
        screen_size: ``(width, height)`` of the display.
        options: the env's :class:`~hud_gym.envs.ubuntu_options.UbuntuOptions` (default: the
            defaults): ``allow_shell`` (:meth:`shell_allowed`), ``allow_absolute_paths``
            (:meth:`resolve_path`), ``sandbox``, ``allow_network``, the settle timings, ``limits``
            (over :data:`~hud_gym.controllers.sandbox.limits.DESKTOP_LIMITS`), ...

    Attributes:
        display: the X display name (``":57"``), set by :meth:`start`.
        home: the env's home directory (emptied at every reset).
        tmp: the env's temp directory (emptied at every reset).
        child_env: the environment of task processes (``DISPLAY``, ``HOME``, ``TMPDIR``, ...).
        options: as given.
        in_container, sandbox: ``options.in_container`` and ``options.sandbox`` resolved.
        limits: the episode's limits (``options.limits`` over the defaults).
        episode_network: the current episode has the network (its task asked for it, and the env
            allows it); what ``download_file`` may reach follows it.
        last_settle: ``{"settle": s, "damage": n, "first_damage": s}`` of the last observation
            (see :meth:`~hud_gym.controllers.x11.connection.XConnection.settle`).
    """

    async def step(self, action: CLAAction) -> ActionOutcome:
        """Execute one CLA action (screen pixels) with XTEST input, then ``XSync``, on the X
        connection's thread (custom actions run here and hand their X work to it).

        Raises:
            ActionError: an invalid action (unknown custom action, a disallowed launch, ...).
            ControllerError: the display is gone.
        """
        await self._check_limits()
        conn, _ = self._x
        try:
            if isinstance(action, CustomAction):
                await conn.call(conn.begin)
                outcome, settle = await ACTIONS.run(self, action)
                await conn.call(conn.sync)
            else:
                outcome, settle = await conn.run(lambda: self._x_step(action))
        except ControllerError:
            self._check_alive()
            raise
        if settle is not None:
            first, quiet = self._pending_settle or (0.0, 0.0)
            self._pending_settle = (max(first, self.options.first_paint), max(quiet, settle))
        return outcome

    async def _x_step(self, action: CLAAction) -> Settled:
        """``action``'s input, then ``XSync`` (on the X connection's thread)."""
        conn, _ = self._io
        conn.begin()
        try:
            result = await ACTIONS.run(self, action)
            conn.sync()
        except X_ERRORS as exc:
            raise ControllerError(f"X input on {self.display} failed: {type(exc).__name__}: {exc}") from exc
        return result

    async def observe(self) -> Frame:
        """The screen once the applications have repainted after the last action; see the module
        docstring. The X work runs on the X connection's thread.

        Raises:
            ControllerError: the display is gone.
        """
        await self._check_limits()
        conn, _ = self._x
        pending, self._pending_settle = self._pending_settle, None
        try:
            frame: Frame = await conn.run(lambda: self._x_observe(pending))
        except ControllerError:
            self._check_alive()
            raise
        return frame

    async def _x_observe(self, pending: tuple[float, float] | None) -> Frame:
        conn, _ = self._io
        assert self._capture is not None
        if pending is not None:
            first_paint, quiet = pending
            self.last_settle = await conn.settle(first_paint, quiet, self.options.settle_limit)
        else:
            self.last_settle = {"settle": 0.0, "damage": 0.0}
        screenshot = self._capture.grab()
        try:
            managed = self._wm is not None
            focused = xwindows.focused_window(conn, managed)
            titles = xwindows.window_titles(conn, managed)
        except X_ERRORS as exc:
            raise ControllerError(f"cannot read the windows of {self.display}: {exc}") from exc
        title = focused["title"] if focused is not None else None
        return Frame(
            screenshot=screenshot,
            text=f"Focused window: {title if title is not None else '(none)'}",
            info={"focused_window": title, "windows": titles, "display": self.display},
        )


ACTIONS: ActionTable[UbuntuController, Settled] = ActionTable(
    UbuntuController.gym,
    {
        ClickAction: UbuntuController._click,
        PressAction: UbuntuController._press,
        KeyDownAction: UbuntuController._key_down,
        KeyUpAction: UbuntuController._key_up,
        TypeAction: UbuntuController._type,
        ScrollAction: UbuntuController._scroll,
        MoveAction: UbuntuController._move,
        DragAction: UbuntuController._drag,
        WaitAction: UbuntuController._wait,
        PositionFetch: UbuntuController._position,
        ScreenshotFetch: UbuntuController._screenshot,
        CustomAction: UbuntuController._custom,
    },
)
"""What :meth:`UbuntuController.step` runs for each CLA type (``ResponseAction`` never reaches a controller)."""
