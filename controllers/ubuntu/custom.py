"""The desktop gym's custom actions: ``launch``, ``key_sequence``, ``clipboard_set``
(``CustomAction(action=name, args={...})``).

``launch`` starts an app of :data:`~.policy.LAUNCHABLE` (any program with shell permission) as a
task process, with arguments checked by :func:`.policy.launch_argv`, and waits for its first
window (up to ``launch_timeout``); ``info`` says what started (``launched``, ``pid``, ``window``,
or ``exit_code`` when it exited first). ``key_sequence`` presses chords one after the other;
``clipboard_set`` owns the CLIPBOARD with a text. :class:`DesktopCustom` works on the env's
:class:`~.state.DesktopState` through the input and desktop API parts.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from hud_gym.actions import ActionError, CustomAction
from hud_gym.controllers.base import ActionOutcome
from hud_gym.controllers.dispatch import CustomActions
from hud_gym.controllers.ubuntu.desktop import DesktopAPI
from hud_gym.controllers.ubuntu.input import DesktopInput, Settled
from hud_gym.controllers.ubuntu.policy import LAUNCHABLE
from hud_gym.controllers.ubuntu.state import DesktopState
from hud_gym.keys import UnknownKeyError, normalize_keys

__all__ = ["CUSTOM", "CUSTOM_ACTIONS", "DesktopCustom"]


class DesktopCustom:
    """The handlers of the custom actions (a part of :class:`~.controller.UbuntuController`).

    Args:
        state: the env's desktop state.
        input: the part that sends X input (``key_sequence``).
        desktop: the part that starts processes and reads windows (``launch``, ``clipboard_set``).
    """

    def __init__(self, state: DesktopState, input: DesktopInput, desktop: DesktopAPI) -> None:
        self.state = state
        self.input = input
        self.desktop = desktop

    async def run(self, action: CustomAction) -> Settled:
        """Run ``action`` with its handler in :data:`CUSTOM`.

        Raises:
            ActionError: not a custom action of the desktop gym, or bad arguments.
        """
        return await CUSTOM.run(self, action)

    # One handler per custom action (the table is :data:`CUSTOM`, after the class).

    async def _key_sequence(self, args: dict[str, Any]) -> Settled:
        conn, xin = self.state.io
        keys = args.get("keys")
        if not isinstance(keys, list) or not keys or not all(isinstance(k, (str, list)) for k in keys):
            raise ActionError("custom action 'key_sequence' needs args {'keys': ['ctrl+a', 'Delete', ...]}")
        try:
            chords = [normalize_keys(k) for k in keys]
        except UnknownKeyError as exc:
            raise ActionError(f"custom action 'key_sequence': {exc}") from None

        async def press_all() -> None:  # on the X connection's thread
            for chord in chords:
                await self.input.keys_ready(conn, xin, chord)
                xin.press(chord)

        await conn.run(press_all)
        return ActionOutcome(), self.state.options.quiet

    async def _clipboard_set(self, args: dict[str, Any]) -> Settled:
        text = args.get("text")
        if not isinstance(text, str):
            raise ActionError("custom action 'clipboard_set' needs args {'text': '<text>'}")
        await self.desktop.clipboard_set(text)
        return ActionOutcome(), None

    async def _launch(self, args: dict[str, Any]) -> Settled:
        app = args.get("app")
        extra = args.get("args", [])
        if not isinstance(app, str) or not app:
            raise ActionError(
                f"custom action 'launch' needs args {{'app': <name>, 'args': [...]}}; apps: {', '.join(LAUNCHABLE)}"
            )
        if not isinstance(extra, list) or not all(isinstance(a, str) for a in extra):
            raise ActionError("custom action 'launch': 'args' must be a list of strings")
        try:
            argv = self.desktop.launch_argv(app, extra)
        except (PermissionError, ValueError) as exc:
            raise ActionError(str(exc) if str(exc).startswith("launch") else f"launch {app!r}: {exc}") from None
        before = {w["id"] for w in await self.desktop.windows()}
        try:
            process = await self.desktop.spawn(argv)
        except (FileNotFoundError, PermissionError) as exc:
            raise ActionError(f"launch {app!r}: {exc}") from None
        info: dict[str, Any] = {"launched": app, "pid": process.pid, "window": None}
        deadline = time.monotonic() + self.state.options.launch_timeout
        while time.monotonic() < deadline:
            new = [w for w in await self.desktop.windows() if w["id"] not in before]
            if new:
                info["window"] = new[-1]["title"]
                break
            if process.returncode is not None:
                info["exit_code"] = process.returncode
                break
            await asyncio.sleep(0.01)
        # A new window paints its content in a few bursts: settle with a longer quiet time.
        return ActionOutcome(info=info), max(self.state.options.quiet, 0.1)


CUSTOM: CustomActions[DesktopCustom, Settled] = CustomActions(
    "ubuntu",
    {
        "launch": DesktopCustom._launch,
        "key_sequence": DesktopCustom._key_sequence,
        "clipboard_set": DesktopCustom._clipboard_set,
    },
)
"""The desktop gym's custom actions (``CustomAction(action=name, args={...})``)."""

CUSTOM_ACTIONS: tuple[str, ...] = CUSTOM.names
"""The names of the desktop gym's custom actions."""
