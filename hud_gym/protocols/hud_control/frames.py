"""Newline-delimited JSON-RPC 2.0 frames of HUD 0.6's control channel, as ``hud`` 0.6.21 reads them.

A frame is one JSON object on one line (UTF-8, compact separators), at most
:data:`FRAME_LIMIT_BYTES` (16 MiB, HUD's ``CONTROL_FRAME_LIMIT_BYTES``) without its newline. A
longer frame cannot be resynchronised, so it ends the connection after one error frame. A line that
is not a JSON object gets an error frame (``-32700``) and the connection keeps serving.

Example:
    >>> encode_frame(reply(1, {"ok": True}))
    b'{"jsonrpc":"2.0","id":1,"result":{"ok":true}}\\n'
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hud_gym.errors import HudGymError

__all__ = [
    "FRAME_LIMIT_BYTES",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "SERVER_ERROR",
    "FrameError",
    "FrameTooLargeError",
    "encode_frame",
    "error",
    "read_frame",
    "reply",
]

FRAME_LIMIT_BYTES = 16 * 1024 * 1024
"""Largest frame either side sends or reads (bytes, the newline excluded): HUD's limit."""
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_ERROR = -32000
"""The JSON-RPC codes HUD's server uses (``-32000``: the task's own failure)."""


class FrameError(HudGymError, ValueError):
    """A line that is not one JSON object: answered with a parse error, the connection kept."""


class FrameTooLargeError(HudGymError, ValueError):
    """A frame over :data:`FRAME_LIMIT_BYTES`: answered once, then the connection is closed."""


def encode_frame(message: dict[str, Any], *, max_bytes: int = FRAME_LIMIT_BYTES) -> bytes:
    """``message`` as one frame (with its newline).

    Raises:
        FrameTooLargeError: the encoded frame is over ``max_bytes``.
    """
    data = json.dumps(message, separators=(",", ":"), allow_nan=False).encode("utf-8")
    if len(data) > max_bytes:
        raise FrameTooLargeError(f"a control-channel frame is {len(data)} bytes; the limit is {max_bytes} bytes")
    return data + b"\n"


async def read_frame(reader: asyncio.StreamReader, *, max_bytes: int = FRAME_LIMIT_BYTES) -> dict[str, Any] | None:
    """The next frame, or ``None`` at the end of the stream. At most ``max_bytes`` + 1 bytes are
    buffered however long the line is (the reader's own limit bounds each chunk).

    Raises:
        FrameTooLargeError: the line is longer than ``max_bytes``.
        FrameError: the line is not a JSON object.
    """
    while True:
        line = await _read_line(reader, max_bytes)
        if not line:
            return None
        if line.strip():
            break
    try:
        message = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FrameError(f"not a JSON frame: {exc}") from None
    if not isinstance(message, dict):
        raise FrameError(f"a frame must be a JSON object, not {type(message).__name__}")
    return message


async def _read_line(reader: asyncio.StreamReader, max_bytes: int) -> bytes:
    line = bytearray()
    while True:
        try:
            chunk = await reader.readuntil(b"\n")
        except asyncio.LimitOverrunError as exc:
            if len(line) + exc.consumed > max_bytes:
                raise FrameTooLargeError(f"a control-channel frame exceeds the limit of {max_bytes} bytes") from None
            line.extend(await reader.readexactly(exc.consumed))
            continue
        except asyncio.IncompleteReadError as exc:
            chunk = exc.partial
        line.extend(chunk)
        if len(line) - line.endswith(b"\n") > max_bytes:
            raise FrameTooLargeError(f"a control-channel frame exceeds the limit of {max_bytes} bytes")
        return bytes(line)


def reply(msg_id: int | str | None, result: dict[str, Any]) -> dict[str, Any]:
    """A JSON-RPC 2.0 result frame."""
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def error(msg_id: int | str | None, code: int, message: str) -> dict[str, Any]:
    """A JSON-RPC 2.0 error frame (``message`` cut to 4,096 characters)."""
    text = message if len(message) <= 4096 else message[:4096] + "… [cut]"
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": text}}
