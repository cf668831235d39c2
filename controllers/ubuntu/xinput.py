"""Real X input through the XTEST extension (python-xlib ``fake_input``) on an env's connection.

Keyboard: a key is sent as its keycode in the current keyboard mapping; a keysym that the mapping
has only on its shifted level (``A``, ``!``) is sent with Shift_L around it. A keysym the mapping
lacks (``é``, ``日``, ``Ω``, media keys) is given a spare keycode (one with no symbols), as xdotool
does, with the keysym on every level so Shift and Caps Lock cannot change it. Keypad digits and
operators (``KP_0``) get a spare keycode too: the keymap has them on the NumLock level of the
keypad keys, which applications read differently with Shift (Tk reads Shift+KP_Insert as KP_Insert).

An application learns of a keymap change from the ``MappingNotify`` event, and may translate a
key event that arrives in the same read as that notification with its old keymap (Tk does: it
looks key events up when it takes them off the socket). So the keysyms a text needs are mapped
*before* its keys are sent, and the keys follow :data:`KEYMAP_SETTLE` seconds later (only when the
mapping changed). Conversely a keycode is remapped no sooner than :data:`KEYMAP_SETTLE` seconds
after its last key event, which may still wait in an application's queue. A text needing more
new characters than there are spare keycodes (19 on Xvfb's default keymap) is typed in chunks,
each mapped first. Spare keycodes are reused in least-recently-used order and given back
(emptied) by :meth:`XInput.restore_keymap` at the next reset, never right after the key press
(xdotool's known race). These two waits are the only timed ones of the input path: an
application's keymap refresh cannot be observed from outside.

Pointer: motion is absolute on the root window; buttons are X buttons (1 left, 2 middle,
3 right, 4/5 wheel up/down, 6/7 wheel left/right, 8 back, 9 forward).

Every method sends requests without waiting; the caller syncs (``XConnection.sync``/``settle``).
"""

from __future__ import annotations

import time
from collections import OrderedDict

from Xlib import XK, X
from Xlib.ext import xtest

from hud_gym.controllers.ubuntu.keysyms import char_keysym, key_keysym
from hud_gym.controllers.x11.connection import XConnection

__all__ = ["BUTTONS", "KEYMAP_SETTLE", "XInput"]

KEYMAP_SETTLE = 0.03
"""Seconds between a keymap change and the first key event that uses it (see the module docstring)."""

BUTTONS: dict[str, int] = {"left": 1, "middle": 2, "right": 3, "back": 8, "forward": 9}
"""CLA button names to X button numbers."""

_SHIFT_L = XK.XK_Shift_L
_KEYPAD_FIRST, _KEYPAD_LAST = 0xFF80, 0xFFBD  # KP_Space .. KP_9
_BUTTON_MASKS: dict[int, int] = {
    1: X.Button1Mask,
    2: X.Button2Mask,
    3: X.Button3Mask,
    4: X.Button4Mask,
    5: X.Button5Mask,
}


class XInput:
    """Keyboard and pointer input on one display; see the module docstring.

    Args:
        conn: the env's X connection.
    """

    def __init__(self, conn: XConnection) -> None:
        self.conn = conn
        self.display = conn.display
        info = self.display.display.info
        self.min_keycode: int = info.min_keycode
        self.max_keycode: int = info.max_keycode
        self._mapping: list[list[int]] = []
        self._mapping_serial = -1
        self._spares: list[int] = []
        self._remapped: OrderedDict[int, int] = OrderedDict()  # keysym -> spare keycode, LRU order
        self._shift_keycode = 0
        self.pressed: list[int] = []  # keycodes held down by keydown actions, in order
        self._last_used: dict[int, float] = {}  # spare keycode -> time.monotonic() of its last key event
        self._load_keymap()
        self._spares = [kc for kc, syms in self._keycodes() if not any(syms)]

    # ----------------------------------------------------------------- keyboard mapping

    def _keycodes(self) -> list[tuple[int, list[int]]]:
        return [(self.min_keycode + i, syms) for i, syms in enumerate(self._mapping)]

    def _load_keymap(self) -> None:
        count = self.max_keycode - self.min_keycode + 1
        self._mapping = [list(row) for row in self.display.get_keyboard_mapping(self.min_keycode, count)]
        self._mapping_serial = self.conn.mapping_changes
        self._index: dict[int, tuple[int, bool]] = {}
        for level in (1, 0):  # the unshifted level wins, then the lowest keycode
            for keycode, syms in reversed(self._keycodes()):
                if len(syms) > level and syms[level]:
                    if level == 1 and _KEYPAD_FIRST <= syms[0] <= _KEYPAD_LAST:
                        # Keypad keys reach their second level with NumLock, not reliably with
                        # Shift (Tk, for one, reads Shift+KP_Insert as KP_Insert): use a spare.
                        continue
                    self._index[syms[level]] = (keycode, level == 1)
        self._shift_keycode = self._find(_SHIFT_L)[0] or 0

    def _current(self) -> None:
        """Reload the mapping if another client changed it since we last read it."""
        self.conn.drain()
        if self.conn.mapping_changes != self._mapping_serial:
            self._load_keymap()

    def _find(self, keysym: int) -> tuple[int | None, bool]:
        """``(keycode, needs_shift)`` of ``keysym`` on level 1 or 2 of the mapping, if any."""
        found = self._index.get(keysym)
        return found if found is not None else (None, False)

    def plan(self, keysyms: list[int]) -> dict[int, int]:
        """Spare keycodes for the keysyms of ``keysyms`` the keymap lacks: ``{keysym: keycode}``.

        Free spares first, then the least recently used remapped ones that ``keysyms`` do not need.

        Raises:
            RuntimeError: more new keysyms than spare keycodes (type in :meth:`chunks`).
        """
        self._current()
        needed = list(dict.fromkeys(keysyms))
        missing = [k for k in needed if k not in self._index]
        if len(missing) > len(self._spares):
            raise RuntimeError(f"{len(missing)} new keysyms at once, but only {len(self._spares)} spare keycodes")
        keep = {self._remapped[k] for k in needed if k in self._remapped}
        used = set(self._remapped.values())
        free = [kc for kc in self._spares if kc not in used]
        evictable = [kc for ks, kc in self._remapped.items() if kc not in keep]  # least recently used first
        choice = (free + evictable)[: len(missing)]
        return dict(zip(missing, choice, strict=True))

    def reuse_delay(self, plan: dict[int, int]) -> float:
        """Seconds to wait before applying ``plan``: a keycode typed less than :data:`KEYMAP_SETTLE`
        ago may still be in an application's queue, to be translated with the keymap of its time."""
        now = time.monotonic()
        return max([0.0, *(self._last_used.get(kc, 0.0) + KEYMAP_SETTLE - now for kc in plan.values())])

    def apply(self, plan: dict[int, int]) -> None:
        """Change the keyboard mapping as :meth:`plan` said."""
        width = max(2, len(self._mapping[0]) if self._mapping else 2)
        by_keycode = {kc: ks for ks, kc in self._remapped.items()}
        for keysym, keycode in plan.items():
            old = by_keycode.pop(keycode, None)
            if old is not None:
                del self._remapped[old]
                self._index.pop(old, None)
            self.display.change_keyboard_mapping(keycode, [[keysym] * width])
            self._mapping[keycode - self.min_keycode] = [keysym] * width
            self._remapped[keysym] = keycode
            self._index[keysym] = (keycode, False)

    def chunks(self, text: str) -> list[str]:
        """``text`` cut so that no piece needs more keysyms on spare keycodes than there are spares."""
        self._current()
        pieces: list[str] = []
        current: list[str] = []
        new: set[int] = set()
        for char in text:
            keysym = char_keysym(char)
            # Counted: every keysym that needs a spare keycode, mapped already or not.
            needs_spare = keysym not in self._index or keysym in self._remapped
            if needs_spare and keysym not in new:
                if len(new) >= max(1, len(self._spares)):
                    pieces.append("".join(current))
                    current, new = [], set()
                new.add(keysym)
            current.append(char)
        if current:
            pieces.append("".join(current))
        return pieces

    def keycode(self, keysym: int) -> tuple[int, bool]:
        """``(keycode, needs_shift)`` to type ``keysym`` (mapping a spare keycode if needed: the
        caller should have :meth:`apply`-ed a :meth:`plan` and waited :data:`KEYMAP_SETTLE`)."""
        keycode, shift = self._find(keysym)
        if keycode is not None:
            return keycode, shift
        self.apply(self.plan([keysym]))
        return self._index[keysym][0], False

    def restore_keymap(self) -> None:
        """Give the spare keycodes their original (empty) mapping back."""
        if not self._remapped:
            return
        width = max(2, len(self._mapping[0]) if self._mapping else 2)
        for keycode in self._remapped.values():
            self.display.change_keyboard_mapping(keycode, [[X.NoSymbol] * width])
            self._mapping[keycode - self.min_keycode] = [X.NoSymbol] * width
        for keysym in self._remapped:
            self._index.pop(keysym, None)
        self._remapped.clear()

    # ----------------------------------------------------------------- keys

    def key_event(self, keycode: int, down: bool) -> None:
        """Press (``down``) or release ``keycode``."""
        xtest.fake_input(self.display, X.KeyPress if down else X.KeyRelease, keycode)
        if keycode in self._spares:
            self._last_used[keycode] = time.monotonic()
            keysym = self._mapping[keycode - self.min_keycode][0]
            if keysym in self._remapped:
                self._remapped.move_to_end(keysym)

    def chord_keycodes(self, keysyms: list[int]) -> list[int]:
        """Keycodes to press in order for a chord of ``keysyms`` (Shift_L added before a shifted one)."""
        self._current()
        codes: list[int] = []
        for keysym in keysyms:
            keycode, shift = self.keycode(keysym)
            if shift and self._shift_keycode and self._shift_keycode not in codes:
                codes.append(self._shift_keycode)
            if keycode not in codes:
                codes.append(keycode)
        return codes

    def press(self, keys: list[str]) -> None:
        """Press the canonical ``keys`` as one chord: down in order, up in reverse order."""
        codes = self.chord_keycodes([key_keysym(k) for k in keys])
        for keycode in codes:
            self.key_event(keycode, True)
        for keycode in reversed(codes):
            self.key_event(keycode, False)

    def key_down(self, keys: list[str]) -> None:
        """Hold the canonical ``keys`` down (in order) until :meth:`key_up` or a reset."""
        for keycode in self.chord_keycodes([key_keysym(k) for k in keys]):
            self.key_event(keycode, True)
            if keycode not in self.pressed:
                self.pressed.append(keycode)

    def key_up(self, keys: list[str]) -> None:
        """Release the canonical ``keys`` (in reverse order)."""
        for keycode in reversed(self.chord_keycodes([key_keysym(k) for k in keys])):
            self.key_event(keycode, False)
            if keycode in self.pressed:
                self.pressed.remove(keycode)

    def type_text(self, text: str) -> None:
        """Type ``text`` character by character (any Unicode; ``\n`` and ``\r`` = Return, tab = Tab).

        Characters the keymap lacks should have been mapped first (:meth:`plan`, :meth:`apply`,
        :meth:`chunks`); otherwise they are mapped here, without the wait."""
        self._current()
        for char in text:
            keycode, shift = self.keycode(char_keysym(char))
            use_shift = shift and self._shift_keycode and self._shift_keycode not in self.pressed
            if use_shift:
                self.key_event(self._shift_keycode, True)
            self.key_event(keycode, True)
            self.key_event(keycode, False)
            if use_shift:
                self.key_event(self._shift_keycode, False)

    # ----------------------------------------------------------------- pointer

    def move(self, x: int, y: int) -> None:
        """Move the pointer to ``(x, y)`` (root coordinates)."""
        xtest.fake_input(self.display, X.MotionNotify, x=int(x), y=int(y))

    def button(self, number: int, down: bool) -> None:
        """Press or release X button ``number``."""
        xtest.fake_input(self.display, X.ButtonPress if down else X.ButtonRelease, int(number))

    def click(self, number: int) -> None:
        """Press and release X button ``number`` where the pointer is."""
        self.button(number, True)
        self.button(number, False)

    def pointer(self) -> tuple[int, int, int]:
        """The real pointer position and button/modifier mask (``XQueryPointer``)."""
        reply = self.conn.root.query_pointer()
        return int(reply.root_x), int(reply.root_y), int(reply.mask)

    # ----------------------------------------------------------------- reset

    def release_all(self) -> None:
        """Release every key and button the server sees down, and switch Caps Lock off."""
        self.pressed = []
        keys = self.display.query_keymap()
        for index, byte in enumerate(keys):
            for bit in range(8):
                if byte & (1 << bit):
                    self.key_event(index * 8 + bit, False)
        _x, _y, mask = self.pointer()
        for number, bit in _BUTTON_MASKS.items():
            if mask & bit:
                self.button(number, False)
        if mask & X.LockMask:
            caps = self._find(XK.XK_Caps_Lock)[0]
            if caps is not None:
                self.key_event(caps, True)
                self.key_event(caps, False)
