"""A Tk test window that logs every input event it receives to a JSON-lines file.

Usage: ``python eventlog.py --log PATH [--title TITLE] [--geometry +X+Y]``

The window's client area has a fixed layout (pixels, relative to the client area's top-left):

- ``pad``    (0, 0, 400, 200): a canvas; button presses/releases (``num`` 1-9, including the wheel
  buttons 4/5; Tk 8.6 reports the horizontal wheel buttons 6/7 as Shift + 4/5), double and triple
  clicks, and motion are logged with window and root coordinates;
- ``toggle`` (420, 0, 150, 60): a block that turns from red to blue (and back) on each click;
- ``entry``  (0, 220, 400, 30): a text field that has the keyboard focus; its content is logged
  after every change (``text``) and when Return is pressed (``return``).

Every key press and release anywhere in the window is logged with its keysym, keycode, X state
and character. Records look like ``{"type": "button", "event": "press", "num": 1, "x": 10, ...}``.
A ``geometry`` record (widget boxes in root coordinates) is written each time the window moves or
is resized, the first one when the window is shown. Only the standard library is used.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tkinter as tk
from typing import Any, TextIO

LAYOUT: dict[str, tuple[int, int, int, int]] = {
    "pad": (0, 0, 400, 200),
    "toggle": (420, 0, 150, 60),
    "entry": (0, 220, 400, 30),
}
"""Widget boxes ``(x, y, width, height)`` inside the client area."""
SIZE = (600, 270)
COLOURS = ("#ff0000", "#0000ff")


class EventLog:
    """The window and its log file."""

    def __init__(self, root: tk.Tk, log: TextIO, title: str) -> None:
        self.root = root
        self.log = log
        root.title(title)
        root.configure(background="#ffffff")
        self.pad = tk.Canvas(root, background="#f0f0f0", highlightthickness=0, borderwidth=0)
        self.toggle = tk.Frame(root, background=COLOURS[0], borderwidth=0, highlightthickness=0)
        self.text = tk.StringVar(root)
        # No cursor blink: the window changes only when an event changes it.
        self.entry = tk.Entry(root, textvariable=self.text, font=("DejaVu Sans", 12), insertofftime=0)
        for name, widget in (("pad", self.pad), ("toggle", self.toggle), ("entry", self.entry)):
            x, y, w, h = LAYOUT[name]
            widget.place(x=x, y=y, width=w, height=h)
        self.colour = 0
        self._last_geometry: dict[str, Any] | None = None

        for sequence in ("<ButtonPress>", "<ButtonRelease>"):
            self.pad.bind(sequence, self.on_button, add="+")
        # Multi-clicks on a tag of their own: Tk runs only the most specific binding of a tag, and
        # every press must still reach on_button.
        self.pad.bindtags((str(self.pad), "MultiClick", *self.pad.bindtags()[1:]))  # before KeyLog is added
        self.pad.bind_class("MultiClick", "<Double-Button-1>", lambda e: self.on_multi(e, "double"))
        self.pad.bind_class("MultiClick", "<Triple-Button-1>", lambda e: self.on_multi(e, "triple"))
        self.pad.bind("<Motion>", self.on_motion, add="+")
        self.pad.bind("<MouseWheel>", self.on_wheel, add="+")
        self.pad.bind("<Shift-MouseWheel>", self.on_wheel, add="+")
        self.toggle.bind("<ButtonPress-1>", self.on_toggle)
        # Keys on a tag of their own, first on every widget: Tk's "all" tag has more specific
        # bindings (<Tab>, <F10>) that would hide a generic <KeyPress> there.
        widgets: tuple[tk.Misc, ...] = (root, self.pad, self.toggle, self.entry)
        for tagged in widgets:
            tagged.bindtags(("KeyLog", *tagged.bindtags()))
        root.bind_class("KeyLog", "<KeyPress>", lambda e: self.on_key(e, "press"))
        root.bind_class("KeyLog", "<KeyRelease>", lambda e: self.on_key(e, "release"))
        self.entry.bind("<Return>", lambda e: self.write(type="return", value=self.text.get()), add="+")
        self.text.trace_add("write", lambda *_: self.write(type="text", value=self.text.get()))
        root.bind("<Configure>", self.on_configure, add="+")
        root.bind("<Map>", self.on_configure, add="+")
        root.protocol("WM_DELETE_WINDOW", self.quit)
        self.entry.focus_set()

    def write(self, **record: Any) -> None:
        """Append one record and flush it at once (the tests read the file while we run)."""
        self.log.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.log.flush()

    def on_button(self, event: tk.Event) -> None:
        kind = "press" if str(event.type) in ("ButtonPress", "4") else "release"
        self.write(
            type="button",
            event=kind,
            num=int(event.num),
            x=event.x,
            y=event.y,
            x_root=event.x_root,
            y_root=event.y_root,
            state=int(event.state),
        )

    def on_multi(self, event: tk.Event, kind: str) -> None:
        self.write(type=kind, num=int(event.num), x=event.x, y=event.y, state=int(event.state))

    def on_motion(self, event: tk.Event) -> None:
        self.write(
            type="motion", x=event.x, y=event.y, x_root=event.x_root, y_root=event.y_root, state=int(event.state)
        )

    def on_wheel(self, event: tk.Event) -> None:
        self.write(type="wheel", delta=int(event.delta), x=event.x, y=event.y, state=int(event.state))

    def on_toggle(self, event: tk.Event) -> None:
        self.colour = 1 - self.colour
        self.toggle.configure(background=COLOURS[self.colour])
        self.write(type="toggle", colour=COLOURS[self.colour], state=int(event.state))

    def on_key(self, event: tk.Event, kind: str) -> None:
        self.write(
            type="key",
            event=kind,
            keysym=event.keysym,
            keycode=int(event.keycode),
            state=int(event.state),
            char=event.char,
        )

    def on_configure(self, _event: tk.Event) -> None:
        if not self.root.winfo_ismapped():
            return
        x0, y0 = self.root.winfo_rootx(), self.root.winfo_rooty()
        boxes = {name: [x0 + x, y0 + y, w, h] for name, (x, y, w, h) in LAYOUT.items()}
        record = {"type": "geometry", "window": [x0, y0, self.root.winfo_width(), self.root.winfo_height()], **boxes}
        if record != self._last_geometry:
            self._last_geometry = record
            self.write(**record)

    def quit(self) -> None:
        self.write(type="quit")
        self.root.destroy()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", required=True, help="JSON-lines file to append the events to")
    parser.add_argument("--title", default="hud-gym event log")
    parser.add_argument("--geometry", default="+40+40", help="window position (Tk geometry, e.g. +40+40)")
    args = parser.parse_args(argv)
    root = tk.Tk(className="HudGymEventLog")
    root.geometry(f"{SIZE[0]}x{SIZE[1]}{args.geometry if args.geometry.startswith(('+', '-')) else ''}")
    root.resizable(False, False)
    with open(args.log, "a", encoding="utf-8") as log:
        app = EventLog(root, log, args.title)
        app.write(type="start", pid=os.getpid())
        root.mainloop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
