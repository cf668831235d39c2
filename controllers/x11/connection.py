"""One persistent X connection per env (python-xlib), with XDamage tracking of screen changes.

Every X request of a desktop env (XTest input, pointer and window queries, keyboard remaps) goes
through the :class:`XConnection` of that env, on the connection's own thread (see below). Its event queue carries
only what the connection selected: ``DamageNotify`` events of a damage object on the root window
(the X server reports every drawing on the screen to it, whoever draws) and the
``MappingNotify`` events every client gets after a keyboard remap.

Settling (:meth:`XConnection.settle`): after input, ``XSync`` makes sure the server has processed
the input and handed the events to the applications; then the screen is considered settled when
the applications' repaints have stopped: the first ``DamageNotify`` is waited for up to
``first_paint`` seconds (no damage by then: the action changed nothing on screen), after each one
until ``quiet`` seconds pass without another, never longer than ``limit`` seconds in all. The
waits are event-driven (the connection's socket is watched by the event loop), not sleeps.

Every request goes through the connection's own thread (:mod:`.xthread`: :meth:`XConnection.run`),
never the hud-gym loop thread: a grabbed or stopped X server blocks that thread only, and the env's
deadline still fires. :meth:`XConnection.close` shuts the socket down, which ends a request
blocked there.

With a ``region`` (one env's rectangle of a screen shared by several, :mod:`~hud_gym.controllers.
browser.tiles`), the damage object reports raw rectangles and only those intersecting the region
count: other windows' drawing elsewhere on the screen is neither a first damage nor breaks a quiet.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from Xlib import X, Xatom
from Xlib import display as xdisplay
from Xlib import error as xerror

try:
    from Xlib.ext import damage
except ImportError as _exc:  # pragma: no cover
    # pyautogui depends on the old python3-xlib 0.15, which installs into the same Xlib folder.
    raise ImportError(
        "the desktop gym needs python-xlib >= 0.33 (Xlib.ext.damage); another package (python3-xlib, a "
        "pyautogui dependency) overwrote it: run `pip install --force-reinstall --no-deps 'python-xlib>=0.33'`"
    ) from _exc

from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.x11.xthread import XThread

__all__ = ["XConnection", "X_ERRORS"]

X_ERRORS: tuple[type[BaseException], ...] = (xerror.XError, xerror.ConnectionClosedError, OSError)
"""Exceptions an X request can raise when the server or a window is gone."""

T = TypeVar("T")


class XConnection:
    """An open connection to one X display; see the module docstring.

    Args:
        name: the display name, e.g. ``":57"``.
        region: ``(x, y, width, height)``: count only damage intersecting it (``None``: the screen).

    Attributes:
        display: the python-xlib ``Display``.
        root: the root window of screen 0.
        damage_events: ``DamageNotify`` events received so far (a counter).
        last_damage: ``time.perf_counter()`` of the last ``DamageNotify``.
        errors: the last few asynchronous X errors (for debugging; requests without replies).
    """

    def __init__(self, name: str, region: tuple[int, int, int, int] | None = None) -> None:
        try:
            self.display = xdisplay.Display(name)
        except X_ERRORS as exc:
            raise ControllerError(f"cannot connect to X display {name}: {exc}") from exc
        except Exception as exc:  # python-xlib raises plain errors for some connection failures
            raise ControllerError(f"cannot connect to X display {name}: {type(exc).__name__}: {exc}") from exc
        self.name = name
        self.region = region
        self.display.set_error_handler(self._on_error)
        self.root = self.display.screen().root
        self.errors: list[str] = []
        self.damage_events = 0
        self.last_damage = 0.0
        self._mark = 0
        self.mapping_changes = 0
        self._atoms: dict[str, int] = {}
        self._damage: int | None = None
        if self.display.has_extension("DAMAGE"):
            # The extension must be told our version before its first request.
            self.display.damage_query_version()
            level = damage.DamageReportNonEmpty if region is None else damage.DamageReportRawRectangles
            self._damage = int(self.root.damage_create(level))
        self.display.sync()
        self.thread = XThread(name)

    # ----------------------------------------------------------------- basics

    async def run(self, work: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """``await work()`` on the connection's thread (see :class:`~.xthread.XThread`); an X
        error it raises becomes a :class:`ControllerError`.

        Raises:
            ControllerError: the X server is gone (or the connection closed).
        """
        try:
            return await self.thread.run(work)
        except X_ERRORS as exc:
            raise ControllerError(f"the X server of {self.name} failed: {type(exc).__name__}: {exc}") from exc

    async def call(self, func: Callable[[], T]) -> T:
        """``func()`` on the connection's thread (as :meth:`run`, for a plain function)."""
        try:
            return await self.thread.call(func)
        except X_ERRORS as exc:
            raise ControllerError(f"the X server of {self.name} failed: {type(exc).__name__}: {exc}") from exc

    def _on_error(self, error: Any, request: Any = None) -> None:
        # Errors of requests without replies (a window that vanished under XKillClient, ...)
        # arrive here asynchronously; they are expected during teardown and never fatal.
        self.errors = [*self.errors[-9:], f"{type(error).__name__}"]

    def atom(self, name: str) -> int:
        """The atom ``name`` (interned once per connection)."""
        atom = self._atoms.get(name)
        if atom is None:
            atom = self._atoms[name] = self.display.intern_atom(name)
        return atom

    def fileno(self) -> int:
        """The connection's socket."""
        return self.display.fileno()

    def sync(self) -> None:
        """``XSync``: return once the server has processed every request sent so far.

        Raises:
            ControllerError: the X server is gone.
        """
        try:
            self.display.sync()
        except X_ERRORS as exc:
            raise ControllerError(f"the X server of {self.name} is gone: {exc}") from exc

    def close(self) -> None:
        """Close the connection (idempotent; never blocks): its socket is shut down at once (a
        request blocked on it in the connection's thread returns), then the thread closes the
        display and ends."""
        with contextlib.suppress(Exception):
            self.display.display.socket.shutdown(socket.SHUT_RDWR)
        self.thread.call_soon(self._close_display)
        self.thread.stop()

    def _close_display(self) -> None:
        with contextlib.suppress(Exception):
            self.display.close()
        with contextlib.suppress(Exception):  # the flush of close() failed on the shut socket
            self.display.display.socket.close()

    def get_property(self, window: Any, name: str, kind: int = X.AnyPropertyType) -> Any:
        """``window``'s property ``name`` (``None`` when unset or the window is gone)."""
        try:
            return window.get_full_property(self.atom(name), kind)
        except xerror.XError:
            return None

    def window_ids(self, name: str, window: Any = None) -> list[int]:
        """A window-list property such as ``_NET_CLIENT_LIST`` of the root (or ``window``)."""
        prop = self.get_property(window if window is not None else self.root, name, Xatom.WINDOW)
        return [int(v) for v in prop.value] if prop is not None and prop.value is not None else []

    # ----------------------------------------------------------------- events

    def drain(self) -> int:
        """Handle every queued event; returns the number of ``DamageNotify`` among them (those in
        the region, with one)."""
        damaged = reported = 0
        while self.display.pending_events():
            event = self.display.next_event()
            if event.type == X.MappingNotify:
                self.mapping_changes += 1
                with contextlib.suppress(Exception):
                    self.display.refresh_keyboard_mapping(event)
            elif self._damage is not None and getattr(event, "damage", None) == self._damage:
                reported += 1
                damaged += self._ours(event)
        if damaged:
            self.damage_events += damaged
            self.last_damage = time.perf_counter()
        if reported:
            # With DamageReportNonEmpty the server reports again only once the region is emptied
            # (with raw rectangles, emptying keeps the server's damage region small).
            self.display.damage_subtract(self._damage, X.NONE, X.NONE)
            self.display.flush()
        return damaged

    def _ours(self, event: Any) -> int:
        """1 when a ``DamageNotify`` counts (in the region, or no region), else 0."""
        if self.region is None:
            return 1
        x, y, width, height = self.region
        area = event.area
        inside = area.x < x + width and x < area.x + area.width and area.y < y + height and y < area.y + area.height
        return int(inside)

    async def wait_readable(self, timeout: float) -> None:
        """Wait until the socket has data (or ``timeout`` seconds), without blocking the loop;
        :meth:`drain` then handles it."""
        loop = asyncio.get_running_loop()
        ready = loop.create_future()
        fd = self.fileno()

        def wake() -> None:
            if not ready.done():
                ready.set_result(None)

        loop.add_reader(fd, wake)
        try:
            await asyncio.wait_for(ready, max(timeout, 0.0))
        except asyncio.TimeoutError:
            pass
        finally:
            loop.remove_reader(fd)

    def begin(self) -> None:
        """Forget damage reported before an action (call before sending its input)."""
        try:
            self.drain()
        except X_ERRORS as exc:
            raise ControllerError(f"the X server of {self.name} is gone: {exc}") from exc
        self._mark = self.damage_events

    async def settle(self, first_paint: float = 0.05, quiet: float = 0.005, limit: float = 1.0) -> dict[str, float]:
        """Wait until the applications have repainted after our input; see the module docstring.

        Returns:
            ``{"settle": seconds waited, "damage": DamageNotify events seen, "first_damage": seconds
            from the start to the first one (-1: none)}``.

        Raises:
            ControllerError: the X server is gone.
        """
        started = time.perf_counter()
        first: float | None = None
        try:
            self.sync()
            while True:
                self.drain()
                seen = self.damage_events > self._mark  # damage since begin(), drained by anyone
                if seen and first is None:
                    first = max(self.last_damage, started) - started
                now = time.perf_counter()
                deadline = max(self.last_damage, started) + quiet if seen else started + first_paint
                deadline = min(deadline, started + limit)
                if now >= deadline or self._damage is None:
                    break
                await self.wait_readable(deadline - now)
        except X_ERRORS as exc:
            raise ControllerError(f"the X server of {self.name} is gone: {exc}") from exc
        count = self.damage_events - self._mark
        self._mark = self.damage_events
        return {
            "settle": time.perf_counter() - started,
            "damage": float(count),
            "first_damage": -1.0 if first is None else first,
        }
