"""Top-level windows of a display, read through an env's X connection.

With a window manager the windows are the WM's ``_NET_CLIENT_LIST`` (mapping order) and the
focused one is ``_NET_ACTIVE_WINDOW``; without one they are the viewable, non-override-redirect
children of the root window and the focus is ``XGetInputFocus`` (walked up to its top-level).
A window that vanishes while it is read is skipped. An agent names its windows: a title is read
as at most :data:`~hud_gym.bounds.TITLE_CHARS` characters (cut ones end with the bounds' mark),
and at most :data:`MAX_WINDOWS` windows are listed.
"""

from __future__ import annotations

from typing import Any

from Xlib import X, Xatom
from Xlib import error as xerror
from Xlib.protocol import request

from hud_gym.bounds import CUT_MARK, TITLE_CHARS, clip_text
from hud_gym.controllers.x11.connection import XConnection

__all__ = [
    "SELECTIONS",
    "WindowInfo",
    "clear_selections",
    "focused_window",
    "has_window_manager",
    "list_windows",
    "window_info",
    "window_titles",
]

SELECTIONS = ("PRIMARY", "SECONDARY", "CLIPBOARD")
"""The selections an episode's programs can own (the clipboard of X)."""
CUT_BUFFERS = tuple(f"CUT_BUFFER{n}" for n in range(8))
"""Root-window properties that keep copied text after its program exits (xterm writes CUT_BUFFER0
and pastes from it when no program owns PRIMARY)."""

WindowInfo = dict[str, Any]
"""``{"id": int, "title": str, "pid": int | None, "class": str, "geometry": (x, y, w, h)}``."""


MAX_WINDOWS = 256
"""Most windows listed (an agent can open thousands)."""


def _read_title(conn: XConnection, window: Any, name: str, kind: int) -> tuple[bytes | str, bool] | None:
    """At most ``4 * (TITLE_CHARS + 2)`` bytes of the property, and whether it holds more: an agent
    sets its window's title, so it is never read whole (an 8 MB title was read, and stored, at
    every step)."""
    try:
        prop = window.get_property(conn.atom(name), kind, 0, TITLE_CHARS + 2)
    except xerror.XError:
        return None
    if prop is None or not prop.value:
        return None
    return prop.value, bool(prop.bytes_after)


def _title(conn: XConnection, window: Any) -> str:
    """The window's title, cut to :data:`~hud_gym.bounds.TITLE_CHARS` characters (then a mark)."""
    read = _read_title(conn, window, "_NET_WM_NAME", conn.atom("UTF8_STRING"))
    encoding = "utf-8"
    if read is None:
        read, encoding = _read_title(conn, window, "WM_NAME", X.AnyPropertyType), "latin-1"
    if read is None:
        return ""
    value, more = read
    text = value.decode(encoding, "replace") if isinstance(value, bytes) else str(value)
    return text[:TITLE_CHARS] + CUT_MARK if more else clip_text(text, TITLE_CHARS)


def window_info(conn: XConnection, window_id: int) -> WindowInfo | None:
    """What :data:`WindowInfo` says about ``window_id`` (``None`` when it is gone or unmapped)."""
    window = conn.display.create_resource_object("window", window_id)
    try:
        if window.get_attributes().map_state != X.IsViewable:
            return None
        geometry = window.get_geometry()
        origin = conn.root.translate_coords(window, 0, 0)
        pid_prop = conn.get_property(window, "_NET_WM_PID", Xatom.CARDINAL)
        wm_class = window.get_wm_class()
        return {
            "id": int(window_id),
            "title": _title(conn, window),
            "pid": int(pid_prop.value[0]) if pid_prop is not None and len(pid_prop.value) else None,
            "class": wm_class[1] if wm_class else "",
            "geometry": (int(origin.x), int(origin.y), int(geometry.width), int(geometry.height)),
        }
    except xerror.XError:
        return None


def has_window_manager(conn: XConnection) -> bool:
    """True when a window manager owns the screen (``_NET_SUPPORTING_WM_CHECK`` is set)."""
    return bool(conn.window_ids("_NET_SUPPORTING_WM_CHECK"))


def _top_level_ids(conn: XConnection, managed: bool) -> list[int]:
    """The top-level windows, the first :data:`MAX_WINDOWS` of them."""
    return _all_top_level_ids(conn, managed)[:MAX_WINDOWS]


def _all_top_level_ids(conn: XConnection, managed: bool) -> list[int]:
    if managed:
        return conn.window_ids("_NET_CLIENT_LIST")
    ids = []
    try:
        children = conn.root.query_tree().children
    except xerror.XError:
        return []
    for child in children:
        try:
            attributes = child.get_attributes()
        except xerror.XError:
            continue
        if attributes.map_state == X.IsViewable and not attributes.override_redirect:
            ids.append(int(child.id))
    return ids


def list_windows(conn: XConnection, managed: bool) -> list[WindowInfo]:
    """The mapped top-level windows (``managed``: read the WM's client list)."""
    windows = []
    for window_id in _top_level_ids(conn, managed):
        info = window_info(conn, window_id)
        if info is not None:
            windows.append(info)
    return windows


def window_titles(conn: XConnection, managed: bool) -> list[str]:
    """The titles of the top-level windows (fewer round trips than :func:`list_windows`)."""
    titles = []
    for window_id in _top_level_ids(conn, managed):
        window = conn.display.create_resource_object("window", window_id)
        try:
            if window.get_attributes().map_state == X.IsViewable:
                titles.append(_title(conn, window))
        except xerror.XError:
            continue
    return titles


def focused_window(conn: XConnection, managed: bool) -> WindowInfo | None:
    """The window with the keyboard focus, if it is a mapped top-level window."""
    candidates = _all_top_level_ids(conn, managed)
    if managed:
        active = conn.window_ids("_NET_ACTIVE_WINDOW")
        if active and active[0] in candidates:
            return window_info(conn, active[0])
    try:
        focus = conn.display.get_input_focus().focus
    except xerror.XError:
        return None
    if not hasattr(focus, "id") or int(focus.id) in (0, 1, int(conn.root.id)):
        return None
    # Walk up from the focused (sub)window to a top-level window.
    window: Any = focus
    try:
        while window is not None and int(window.id) != int(conn.root.id):
            if int(window.id) in candidates:
                return window_info(conn, int(window.id))
            window = window.query_tree().parent
    except xerror.XError:
        return None
    return None


def clear_selections(conn: XConnection) -> None:
    """Empty the display's clipboard: no owner for any of :data:`SELECTIONS` (the server's
    ``SetSelectionOwner(None)``), and no :data:`CUT_BUFFERS` on the root window. An episode's
    selections go with its programs, but its cut buffers would outlive it."""
    for name in SELECTIONS:
        request.SetSelectionOwner(
            display=conn.display.display, window=X.NONE, selection=conn.atom(name), time=X.CurrentTime
        )
    for name in CUT_BUFFERS:
        conn.root.delete_property(conn.atom(name))
