"""The office oracles' keyboard: a script of CLA actions that also waits, on what the env shows
(its screenshot and ``info``'s window titles), for the app to be ready and for the save dialog.

LibreOffice maps its window before it draws the document, and keys sent meanwhile are lost;
saving an ``.xlsx``/``.docx`` asks whether to keep the format (answered with Enter: keep it).
An oracle polls with short waits rather than sleeping blindly, so it is as fast as the
desktop allows and still correct on a loaded machine.

Example:
    >>> [getattr(step, "type", "until") for step in goto_cell("B3")]
    ['until', 'press', 'press', 'press', 'press', 'until']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from hud_gym.actions import CLAAction, PressAction, TypeAction, WaitAction

__all__ = ["KeyScript", "Until", "goto_cell", "open_document", "save_keeping_format", "type_rows"]

POLL_MS = 500
"""The wait between two looks at the screen."""
SETTLE_MS = 2500
"""The wait after the document is drawn, for the app's menus and shortcuts to be live."""

MOVE_MS = 1000
"""The pause after moving Calc's cursor, before typing."""
MOVE_TIMEOUT = 10.0
"""Seconds to wait for Calc's cursor to be seen moving (it may already be there)."""
SAVE_MS = 3000
"""The wait after the save dialog closed and the screen settled, for the file to be written."""

Check = Callable[[dict[str, Any], dict[str, Any]], bool]


@dataclass(frozen=True)
class Until:
    """Wait (in steps of :data:`POLL_MS`) until ``check(observation, info)`` holds, at most
    ``timeout`` seconds (then go on: the grade will tell)."""

    check: Check
    timeout: float = 120.0


Step = CLAAction | Until


class KeyScript:
    """An oracle playing ``steps``: actions in order, :class:`Until` steps as polling waits."""

    def __init__(self, steps: Iterable[Step]) -> None:
        self.steps = list(steps)
        self._next = 0
        self._waited = 0.0

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> CLAAction | None:
        """The next action (``None``: done)."""
        while self._next < len(self.steps):
            step = self.steps[self._next]
            if not isinstance(step, Until):
                self._next += 1
                return step
            if self._waited >= step.timeout or step.check(observation, info):
                self._next += 1
                self._waited = 0.0
                continue
            self._waited += POLL_MS / 1000
            return WaitAction(time=POLL_MS)
        return None


def _drawn(observation: dict[str, Any]) -> bool:
    """The app's window is drawn with its menu bar: not the blank window of an app still loading,
    nor its document without the menus and toolbars (keys sent then are lost). The menu bar's
    first word ("File") is dark text at the top left of the maximized window."""
    screenshot = observation.get("screenshot") if isinstance(observation, dict) else None
    if screenshot is None:
        return True
    pixels = np.asarray(screenshot)
    menu = pixels[22:37, 8:36]
    return bool(float(pixels[40:-40].std()) > 20.0 and menu.size and int(menu.min()) < 90)


class _Steady:
    """A check that holds once ``check`` has held and the screen has not changed for ``polls``
    looks in a row (the app has finished drawing: it takes keys again)."""

    def __init__(self, check: Check, polls: int = 4) -> None:
        self.check = check
        self.polls = polls
        self._last: bytes | None = None
        self._same = 0

    def __call__(self, observation: dict[str, Any], info: dict[str, Any]) -> bool:
        screenshot = observation.get("screenshot") if isinstance(observation, dict) else None
        frame = np.asarray(screenshot)[::8, ::8].tobytes() if screenshot is not None else b""
        self._same = self._same + 1 if frame == self._last else 0
        self._last = frame
        return self.check(observation, info) and self._same >= self.polls


def open_document(name: str) -> list[Step]:
    """Wait until the window of the document ``name`` has the focus, is drawn and has stopped
    changing, then settle."""

    def ready(observation: dict[str, Any], info: dict[str, Any]) -> bool:
        return name in str(info.get("focused_window") or "") and _drawn(observation)

    return [Until(_Steady(ready)), WaitAction(time=SETTLE_MS)]


def _dialog_open(observation: dict[str, Any], info: dict[str, Any]) -> bool:
    return any(str(title).casefold().startswith("confirm file format") for title in info.get("windows") or ())


def save_keeping_format(name: str) -> list[Step]:
    """Ctrl+S, Enter in the keep-format dialog (keep the file's format), then wait for the
    document's window to have the focus again."""

    def back(observation: dict[str, Any], info: dict[str, Any]) -> bool:
        return not _dialog_open(observation, info) and name in str(info.get("focused_window") or "")

    return [
        PressAction(keys=["ctrl", "s"]),
        Until(_dialog_open, timeout=60.0),
        PressAction(keys=["enter"]),
        Until(_Steady(back, polls=3), timeout=60.0),
        WaitAction(time=SAVE_MS),
    ]


def _cell(ref: str) -> tuple[int, int]:
    """``"B3"`` -> (column 1, row 2), zero-based."""
    letters = ref.rstrip("0123456789")
    column = 0
    for letter in letters.upper():
        column = column * 26 + ord(letter) - ord("A") + 1
    return column - 1, int(ref[len(letters) :]) - 1


def _frame(observation: dict[str, Any]) -> bytes:
    screenshot = observation.get("screenshot") if isinstance(observation, dict) else None
    return np.asarray(screenshot)[::4, ::4].tobytes() if screenshot is not None else b""


class _Moved:
    """Remembers the screen (:meth:`mark`), then holds once it has changed (:meth:`changed`)."""

    def __init__(self) -> None:
        self._before = b""

    def mark(self, observation: dict[str, Any], info: dict[str, Any]) -> bool:
        self._before = _frame(observation)
        return True

    def changed(self, observation: dict[str, Any], info: dict[str, Any]) -> bool:
        return _frame(observation) != self._before


def goto_cell(ref: str) -> list[Step]:
    """Keys that put Calc's cursor on ``ref`` (Ctrl+Home, then the arrows), then a wait until the
    screen shows the cursor moved: a busy Calc handles arrow keys after text typed right behind
    them otherwise."""
    column, row = _cell(ref)
    moved = _Moved()
    moves = [PressAction(keys=["ctrl", "home"]), *[PressAction(keys=["down"])] * row]
    moves += [PressAction(keys=["right"])] * column
    return [Until(moved.mark), *moves, Until(_Steady(moved.changed, polls=1), timeout=MOVE_TIMEOUT)]


def type_rows(start: str, rows: Iterable[Iterable[Any]]) -> list[Step]:
    """Type ``rows`` into Calc from the cell ``start``: Tab between cells, Enter after each row
    (Calc returns to the row's first column)."""
    return [*goto_cell(start), *(TypeAction(text="\t".join(str(c) for c in row) + "\n") for row in rows)]
