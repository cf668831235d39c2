"""The frames of the evaluation worker channel: an 8-byte big-endian length, then a pickle."""

from __future__ import annotations

import pickle
import socket
import struct
from typing import Any

__all__ = ["HEADER", "READY", "frame", "read_frame"]

HEADER = struct.Struct("!Q")
READY = b"R"
"""The one byte a worker sends, before any frame, once its imports are done."""


def frame(value: Any) -> bytes:
    """``value`` as one frame (length header + pickle)."""
    body = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(body)) + body


def _read_exactly(sock: socket.socket, size: int) -> bytes | None:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(min(size - len(chunks), 1 << 20))
        if not chunk:
            return None
        chunks += chunk
    return bytes(chunks)


def read_frame(sock: socket.socket) -> Any:
    """The next frame's value from a blocking socket; raises ``EOFError`` at the end of the socket."""
    header = _read_exactly(sock, HEADER.size)
    if header is None:
        raise EOFError
    body = _read_exactly(sock, HEADER.unpack(header)[0])
    if body is None:
        raise EOFError
    return pickle.loads(body)
