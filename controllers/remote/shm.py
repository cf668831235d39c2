"""Screenshots through shared memory, for a controller server on the same machine as its env
(``controller="subprocess"``): the frame format ``shm``.

The server writes each env's pixels into a file of its own in ``/dev/shm`` (created ``0600`` with
a name starting :data:`PREFIX`) and sends that path in the binary frame instead of the pixels; the
env maps the file, copies the pixels out, and removes the name at once (both mappings stay valid),
so nothing is left in ``/dev/shm`` whichever side dies first. An env has at most one ``observe`` in
flight, so a frame is copied out before the server writes the next one.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import tempfile
from pathlib import Path

import numpy as np

__all__ = ["PREFIX", "SHM_DIR", "SharedFrameReader", "SharedFrameWriter", "shm_available"]

SHM_DIR = Path("/dev/shm")
PREFIX = "hud-gym-frame-"


def shm_available() -> bool:
    """True where ``/dev/shm`` is a writable directory (Linux)."""
    return SHM_DIR.is_dir() and os.access(SHM_DIR, os.W_OK)


class SharedFrameWriter:
    """The server side: one env's frame file, grown when a larger frame comes."""

    def __init__(self) -> None:
        self.path: str | None = None
        self._map: mmap.mmap | None = None

    def write(self, pixels: np.ndarray) -> str:
        """Copy ``pixels`` (C-contiguous uint8) into the file; return its path.

        Raises:
            OSError: the file cannot be created (no ``/dev/shm``, full).
        """
        size = pixels.nbytes
        if self._map is None or size > len(self._map):
            self._create(max(size, 1))
        assert self._map is not None
        np.frombuffer(self._map, dtype=np.uint8, count=size)[:] = pixels.reshape(-1)
        assert self.path is not None
        return self.path

    def _create(self, size: int) -> None:
        self.close()
        fd, path = tempfile.mkstemp(prefix=f"{PREFIX}{os.getpid()}-", dir=SHM_DIR)
        try:
            os.ftruncate(fd, size)
            self._map = mmap.mmap(fd, size)
        except BaseException:
            os.unlink(path)
            raise
        finally:
            os.close(fd)
        self.path = path

    def close(self) -> None:
        """Unmap and remove the file (the env may have removed the name already)."""
        mapping, self._map = self._map, None
        path, self.path = self.path, None
        if mapping is not None:
            mapping.close()
        if path is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)


class SharedFrameReader:
    """The env side: maps the server's frame file (once per file) and copies frames out."""

    def __init__(self) -> None:
        self._path: str | None = None
        self._map: mmap.mmap | None = None

    def read(self, path: str, width: int, height: int) -> np.ndarray:
        """A copy of the ``(height, width, 3)`` frame in the file at ``path``.

        Raises:
            ValueError: ``path`` is not a hud-gym frame file, or is smaller than the frame.
            OSError: the file cannot be opened.
        """
        if path != self._path:
            self._attach(path)
        assert self._map is not None
        size = width * height * 3
        if size > len(self._map):
            raise ValueError(
                f"shared frame file {path} holds {len(self._map)} bytes, a {width}x{height} frame needs {size}"
            )
        return np.frombuffer(self._map, dtype=np.uint8, count=size).reshape(height, width, 3).copy()

    def _attach(self, path: str) -> None:
        candidate = Path(path)
        # The server names the file; never map or remove anything else.
        if candidate.parent != SHM_DIR or not candidate.name.startswith(PREFIX) or "/" in candidate.name:
            raise ValueError(f"{path!r} is not a hud-gym shared frame file")
        self.close()
        fd = os.open(candidate, os.O_RDONLY | os.O_NOFOLLOW)
        try:
            self._map = mmap.mmap(fd, os.fstat(fd).st_size, prot=mmap.PROT_READ)
        finally:
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(candidate)
        self._path = path

    def close(self) -> None:
        """Unmap the current file."""
        mapping, self._map, self._path = self._map, None, None
        if mapping is not None:
            mapping.close()
