"""Screenshots of an X display (or of one rectangle of it) through MIT-SHM (mss's ``XShmGetImage``).

One :class:`ScreenCapture` per env, kept for the env's lifetime: its shared-memory segment is
attached once and every grab is a single ``XShmGetImage`` round trip into it. The pixels are then
converted BGRX -> RGB by three numpy channel copies straight out of that segment into the one new
array the caller gets (~0.9 ms for 1280x720; Pillow's ``frombuffer`` unpacker took 6.8 ms from
mss's mapping, and ``mss.grab()``'s own copy of the segment ~5 ms more). No second copy of the
frame is made. Where that fast path does not apply (mss without MIT-SHM, e.g. a container without
a shared ``/dev/shm``, where mss falls back to ``XGetImage``; another mss version), the public
``mss.grab()`` is used.

The segment is mss's own ``memfd`` handed to the X server over the connection (``ShmAttachFd``), not
a SysV segment: no other process can attach it. Xvfb runs without ``-shmem`` (:mod:`.xvfb`): that
flag puts the *server's* framebuffer in a SysV segment of mode 0777 any local user could read, and
MIT-SHM grabs do not need it.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any

import mss
import numpy as np

from hud_gym.controllers.base import ControllerError

_xcb: Any
try:  # mss >= 10.2's XCB binding (the fast path of ScreenCapture.grab)
    from mss.linux import xcb as _xcb
except ImportError:  # pragma: no cover
    _xcb = None

__all__ = ["ScreenCapture", "bgrx_to_rgb"]


def _open_mss(display: str) -> Any:
    factory = getattr(mss, "MSS", None)
    if factory is not None:  # mss >= 10.2
        return factory(display=display)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return mss.mss(display=display)


def bgrx_to_rgb(raw: Any, width: int, height: int) -> np.ndarray:
    """A new ``(height, width, 3)`` RGB array from ``width * height`` BGRX pixels (a buffer)."""
    src = np.frombuffer(raw, np.uint8, count=width * height * 4).reshape(height, width, 4)
    out = np.empty((height, width, 3), np.uint8)
    out[..., 0] = src[..., 2]
    out[..., 1] = src[..., 1]
    out[..., 2] = src[..., 0]
    return out


class ScreenCapture:
    """Grabs a rectangle of ``display`` as an ``(H, W, 3)`` RGB ``uint8`` array.

    Args:
        display: the X display name (``":57"``).
        size: ``(width, height)`` of the rectangle (the whole screen of the desktop gym).
        origin: its top-left corner on the screen.
    """

    def __init__(self, display: str, size: tuple[int, int], origin: tuple[int, int] = (0, 0)) -> None:
        self.display = display
        self.size = size
        self.origin = origin
        try:
            self._mss = _open_mss(display)
        except Exception as exc:
            raise ControllerError(f"cannot capture display {display}: {exc}") from exc
        self._monitor = {"left": origin[0], "top": origin[1], "width": size[0], "height": size[1]}

    @property
    def backend(self) -> str:
        """How grabs are made: mss's notes (e.g. ``MIT-SHM is working correctly.``)."""
        impl = getattr(self._mss, "_impl", self._mss)
        notes = getattr(impl, "performance_status", None)
        return "; ".join(notes) if notes else type(impl).__name__

    def grab(self) -> np.ndarray:
        """The rectangle now, as a new ``(H, W, 3)`` RGB array (never shared with a later grab).

        Raises:
            ControllerError: the display is gone.
        """
        width, height = self.size
        try:
            raw = self._grab_shm()
            if raw is None:
                shot = self._mss.grab(self._monitor)
                raw, (width, height) = shot.raw, shot.size
            return bgrx_to_rgb(raw, width, height)
        except Exception as exc:
            raise ControllerError(f"screenshot of {self.display} failed: {type(exc).__name__}: {exc}") from exc

    def _grab_shm(self) -> Any:
        """``XShmGetImage`` into mss's segment; the segment (or ``None``: use ``mss.grab()``)."""
        impl = getattr(self._mss, "_impl", None)
        if _xcb is None or impl is None or getattr(getattr(impl, "shm_status", None), "name", "") != "AVAILABLE":
            return None
        buffer, segment, conn = getattr(impl, "_buf", None), getattr(impl, "_shmseg", None), getattr(impl, "conn", None)
        width, height = self.size
        if buffer is None or segment is None or conn is None or getattr(impl, "_bufsize", 0) < width * height * 4:
            return None
        x, y = self.origin
        reply = _xcb.shm_get_image(
            conn, impl.drawable, x, y, width, height, 0xFFFFFFFF, _xcb.ImageFormat.ZPixmap, segment, 0
        )
        if reply.depth != impl.drawable_depth:
            return None
        return memoryview(buffer)[: width * height * 4]

    def close(self) -> None:
        """Release the shared memory and the connection (idempotent)."""
        with contextlib.suppress(Exception):
            self._mss.close()
