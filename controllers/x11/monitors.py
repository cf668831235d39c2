"""Virtual monitors on one X screen (RandR 1.5 ``SetMonitor``): a screen cut into tiles.

:func:`set_monitors` declares rectangles of a display's screen as monitors, as ``xrandr
--setmonitor`` does, so that applications which place windows per monitor (Chromium's kiosk
fullscreen fills the monitor its window is on) treat each rectangle as a screen of its own. The
first rectangle is the primary monitor and takes the screen's output, which removes the automatic
monitor covering the whole screen (a window would otherwise sit on two monitors at once).

python-xlib 0.33's ``xrandr_set_monitor`` cannot pack its request (an ``rq.Object`` inside a
request), hence the request spelled out here.
"""

from __future__ import annotations

from collections.abc import Sequence

from Xlib import display as xdisplay
from Xlib.ext import randr
from Xlib.protocol import rq

from hud_gym.controllers.base import ControllerError

__all__ = ["Rect", "get_monitors", "set_monitors"]

Rect = tuple[int, int, int, int]
"""``(x, y, width, height)`` in screen pixels."""


class _SetMonitor(rq.Request):
    _request = rq.Struct(
        rq.Card8("opcode"),
        rq.Opcode(43),
        rq.RequestLength(),
        rq.Window("window"),
        rq.Card32("name"),
        rq.Bool("primary"),
        rq.Bool("automatic"),
        rq.LengthOf("outputs", 2),
        rq.Int16("x"),
        rq.Int16("y"),
        rq.Card16("width_in_pixels"),
        rq.Card16("height_in_pixels"),
        rq.Card32("width_in_millimeters"),
        rq.Card32("height_in_millimeters"),
        rq.List("outputs", rq.Card32Obj),
    )


def set_monitors(display: xdisplay.Display, rects: Sequence[Rect], prefix: str = "TILE") -> None:
    """Declare ``rects`` as the monitors of ``display``'s screen (named ``prefix0``, ``prefix1``,
    ...; the first is primary and holds the screen's outputs).

    Raises:
        ControllerError: the server has no RandR 1.5.
    """
    if not display.has_extension(randr.extname):
        raise ControllerError("the X server has no RandR extension (virtual monitors)")
    version = display.xrandr_query_version()
    if (version.major_version, version.minor_version) < (1, 5):
        raise ControllerError(f"the X server's RandR is {version.major_version}.{version.minor_version}, not 1.5+")
    root = display.screen().root
    outputs = list(root.xrandr_get_screen_resources().outputs)
    opcode = display.display.get_extension_major(randr.extname)
    for index, (x, y, width, height) in enumerate(rects):
        _SetMonitor(
            display=display.display,
            opcode=opcode,
            window=root,
            name=display.intern_atom(f"{prefix}{index}"),
            primary=index == 0,
            automatic=False,
            outputs=outputs if index == 0 else [],
            x=x,
            y=y,
            width_in_pixels=width,
            height_in_pixels=height,
            width_in_millimeters=max(1, width // 4),
            height_in_millimeters=max(1, height // 4),
        )
    display.sync()


def get_monitors(display: xdisplay.Display) -> list[Rect]:
    """The monitors of ``display``'s screen, as rectangles."""
    reply = display.screen().root.xrandr_get_monitors()
    return [(m.x, m.y, m.width_in_pixels, m.height_in_pixels) for m in reply.monitors]
