"""The desktop controller of ``hud/Ubuntu-v0``: one Xvfb display, a window manager and real X input.

Session (started lazily, on the env's first reset; :mod:`~hud_gym.controllers.ubuntu.session`): a
private Xvfb display (a free number from :data:`~hud_gym.controllers.x11.xvfb.FIRST_DISPLAY` up)
authorised by a fresh cookie, openbox with a minimal configuration (or no WM), a private home and
temp directory, one persistent X connection, one MIT-SHM screen grabber. By default (``sandbox``)
all of it runs in bubblewrap sandboxes as an unprivileged uid (:mod:`~hud_gym.controllers.ubuntu.sandboxed`),
the task processes (:meth:`.desktop.DesktopAPI.spawn`, :meth:`~.desktop.DesktopAPI.run`, the
``launch`` action, the clipboard owner) in one sandbox per episode; with ``sandbox=False`` they run in one
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

The controller owns one state object, the desktop session (:class:`~.state.DesktopState`), and
small parts that each receive it, one job each (see the package docstring): :attr:`~UbuntuController.lifecycle`
(:mod:`.lifecycle`: start, reset, close), :attr:`~UbuntuController.input` (:mod:`.input`: the
XTEST actions), :attr:`~UbuntuController.desktop` (:mod:`.desktop`: the API of the gym's functions,
``ctx.controller.desktop``: permissions, processes, windows, clipboard),
:attr:`~UbuntuController.custom` (:mod:`.custom`: ``launch``, ``key_sequence``, ``clipboard_set``);
the pure :mod:`.policy` decides what ``launch`` starts and which paths a task reaches. This module
implements the :class:`~hud_gym.controllers.base.Controller` interface over them: it runs each CLA
action through :data:`ACTIONS` (action type -> a part's method) and observes.

Safety: a task's or an agent's programs reach only the sandbox (see docs/security.md).
``launch`` starts only the apps of :data:`LAUNCHABLE` with checked arguments unless shell commands
are allowed (``allow_shell=True``, or inside the gym's container: then they run in the sandbox);
paths of tasks stay inside the env's home unless ``allow_absolute_paths=True``; the network is
there only for a task that asks for it (``config={"network": true}``) on an env made with
``allow_network=True``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

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
from hud_gym.controllers.base import ActionOutcome, Controller, ControllerError, Frame
from hud_gym.controllers.dispatch import ActionTable
from hud_gym.controllers.ubuntu.custom import CUSTOM, CUSTOM_ACTIONS, DesktopCustom
from hud_gym.controllers.ubuntu.desktop import DesktopAPI
from hud_gym.controllers.ubuntu.input import PIXELS_PER_WHEEL_CLICK, DesktopInput, Settled, wheel_clicks
from hud_gym.controllers.ubuntu.lifecycle import DesktopLifecycle
from hud_gym.controllers.ubuntu.policy import LAUNCHABLE
from hud_gym.controllers.ubuntu.state import DesktopState
from hud_gym.controllers.x11.connection import X_ERRORS
from hud_gym.envs.ubuntu_options import UbuntuOptions
from hud_gym.task import Task

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


class UbuntuController(Controller):
    """Drives one private X desktop; see the module docstring.

    Args:
        screen_size: ``(width, height)`` of the display (at least 16x16).
        options: the env's :class:`~hud_gym.envs.ubuntu_options.UbuntuOptions` (default: the
            defaults): ``allow_shell`` (:meth:`.desktop.DesktopAPI.shell_allowed`),
            ``allow_absolute_paths`` (:meth:`.desktop.DesktopAPI.resolve_path`), ``sandbox``,
            ``allow_network``, the settle timings, ``limits`` (over
            :data:`~hud_gym.controllers.sandbox.limits.DESKTOP_LIMITS`), ...

    Attributes:
        state: the desktop session (:class:`~.state.DesktopState`: the options, the display, the
            home and temp folders, the X connection, ...), which the parts below share.
        lifecycle: start, reset, health, close (:class:`~.lifecycle.DesktopLifecycle`).
        input: the XTEST actions (:class:`~.input.DesktopInput`).
        desktop: the API of the gym's functions (:class:`~.desktop.DesktopAPI`).
        custom: the custom actions (:class:`~.custom.DesktopCustom`).

    Raises:
        ValueError: a screen smaller than 16x16.
    """

    gym = "ubuntu"

    def __init__(self, screen_size: tuple[int, int] = (1280, 720), options: UbuntuOptions | None = None) -> None:
        super().__init__((int(screen_size[0]), int(screen_size[1])))
        if self.screen_size[0] < 16 or self.screen_size[1] < 16:
            raise ValueError(f"screen_size must be at least 16x16, got {screen_size}")
        self.state = DesktopState(self.screen_size, options if options is not None else UbuntuOptions())
        self.lifecycle = DesktopLifecycle(self.state)
        self.input = DesktopInput(self.state)
        self.desktop = DesktopAPI(self.state)
        self.custom = DesktopCustom(self.state, self.input, self.desktop)

    async def start(self) -> None:
        """:meth:`.lifecycle.DesktopLifecycle.start`."""
        await self.lifecycle.start()

    async def reset(self, task: Task | None, seed: int | None) -> None:
        """:meth:`.lifecycle.DesktopLifecycle.reset`."""
        await self.lifecycle.reset(task, seed)

    async def health(self) -> bool:
        """:meth:`.lifecycle.DesktopLifecycle.health`."""
        return await self.lifecycle.health()

    async def close(self) -> None:
        """:meth:`.lifecycle.DesktopLifecycle.close`."""
        await self.lifecycle.close()

    async def step(self, action: CLAAction) -> ActionOutcome:
        """Execute one CLA action (screen pixels) with XTEST input, then ``XSync``, on the X
        connection's thread (custom actions run here and hand their X work to it).

        Raises:
            ActionError: an invalid action (unknown custom action, a disallowed launch, ...).
            ControllerError: the display is gone.
        """
        state = self.state
        await self.lifecycle.check_limits()
        conn, _ = state.x
        try:
            if isinstance(action, CustomAction):
                await conn.call(conn.begin)
                outcome, settle = await ACTIONS.run(self, action)
                await conn.call(conn.sync)
            else:
                outcome, settle = await conn.run(lambda: self._x_step(action))
        except ControllerError:
            state.check_alive()
            raise
        if settle is not None:
            first, quiet = state.pending_settle or (0.0, 0.0)
            state.pending_settle = (max(first, state.options.first_paint), max(quiet, settle))
        return outcome

    async def _x_step(self, action: CLAAction) -> Settled:
        """``action``'s input, then ``XSync`` (on the X connection's thread)."""
        conn, _ = self.state.io
        conn.begin()
        try:
            result = await ACTIONS.run(self, action)
            conn.sync()
        except X_ERRORS as exc:
            raise ControllerError(f"X input on {self.state.display} failed: {type(exc).__name__}: {exc}") from exc
        return result

    async def observe(self) -> Frame:
        """The screen once the applications have repainted after the last action; see the module
        docstring. The X work runs on the X connection's thread.

        Raises:
            ControllerError: the display is gone.
        """
        state = self.state
        await self.lifecycle.check_limits()
        conn, _ = state.x
        pending, state.pending_settle = state.pending_settle, None
        try:
            frame: Frame = await conn.run(lambda: self._x_observe(pending))
        except ControllerError:
            state.check_alive()
            raise
        return frame

    async def _x_observe(self, pending: tuple[float, float] | None) -> Frame:
        state = self.state
        conn, _ = state.io
        assert state.capture is not None
        if pending is not None:
            first_paint, quiet = pending
            state.last_settle = await conn.settle(first_paint, quiet, state.options.settle_limit)
        else:
            state.last_settle = {"settle": 0.0, "damage": 0.0}
        screenshot = state.capture.grab()
        try:
            managed = state.wm is not None
            focused = xwindows.focused_window(conn, managed)
            titles = xwindows.window_titles(conn, managed)
        except X_ERRORS as exc:
            raise ControllerError(f"cannot read the windows of {state.display}: {exc}") from exc
        title = focused["title"] if focused is not None else None
        return Frame(
            screenshot=screenshot,
            text=f"Focused window: {title if title is not None else '(none)'}",
            info={"focused_window": title, "windows": titles, "display": state.display},
        )


def _on_input(
    handler: Callable[[DesktopInput, Any], Awaitable[Settled]],
) -> Callable[[UbuntuController, Any], Awaitable[Settled]]:
    """``handler``, a method of the input part, as a handler of the controller's table."""
    return lambda controller, action: handler(controller.input, action)


async def _on_custom(controller: UbuntuController, action: CustomAction) -> Settled:
    return await controller.custom.run(action)


ACTIONS: ActionTable[UbuntuController, Settled] = ActionTable(
    UbuntuController.gym,
    {
        ClickAction: _on_input(DesktopInput.click),
        PressAction: _on_input(DesktopInput.press),
        KeyDownAction: _on_input(DesktopInput.key_down),
        KeyUpAction: _on_input(DesktopInput.key_up),
        TypeAction: _on_input(DesktopInput.type_text),
        ScrollAction: _on_input(DesktopInput.scroll),
        MoveAction: _on_input(DesktopInput.move),
        DragAction: _on_input(DesktopInput.drag),
        WaitAction: _on_input(DesktopInput.wait),
        PositionFetch: _on_input(DesktopInput.position),
        ScreenshotFetch: _on_input(DesktopInput.screenshot),
        CustomAction: _on_custom,
    },
)
"""What :meth:`UbuntuController.step` runs for each CLA type: a method of its input part, or of
its custom actions part (``ResponseAction`` never reaches a controller)."""
