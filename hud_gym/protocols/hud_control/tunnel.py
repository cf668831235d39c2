"""``tunnel.open``: a connection whose first frame names a capability becomes a byte stream to it.

HUD's client reaches every binding through the control port: for each capability it opens a new
connection, sends ``{"method": "tunnel.open", "params": {"capability": NAME}}``, reads one reply
frame, then relays raw bytes. The server dials only the capabilities it published (by name, to
their loopback address; never an address a client names), and each capability authenticates its
own traffic (the MCP tools their session's bearer token).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from hud_gym.protocols.hud_control.frames import INVALID_PARAMS, SERVER_ERROR, encode_frame, error, reply

__all__ = ["open_tunnel", "splice"]

_CHUNK = 65536


async def open_tunnel(
    first: dict[str, Any],
    backends: dict[str, tuple[str, int]],
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
) -> None:
    """Answer a ``tunnel.open`` frame and relay bytes to the named capability until either side ends."""
    msg_id = first.get("id")
    params = first.get("params")
    name = params.get("capability") if isinstance(params, dict) else None
    if not isinstance(name, str) or name not in backends:
        known = ", ".join(sorted(backends)) or "none"
        writer.write(
            encode_frame(
                error(msg_id, INVALID_PARAMS, f"tunnel.open: no capability {str(name)[:80]!r} (known: {known})")
            )
        )
        await writer.drain()
        return
    host, port = backends[name]
    try:
        backend = await asyncio.open_connection(host, port)
    except OSError as exc:
        writer.write(
            encode_frame(error(msg_id, SERVER_ERROR, f"tunnel.open: capability {name!r} is not answering ({exc})"))
        )
        await writer.drain()
        return
    if msg_id is not None:
        writer.write(encode_frame(reply(msg_id, {"capability": name})))
        await writer.drain()
    await splice((reader, writer), backend)


async def splice(
    a: tuple[asyncio.StreamReader, asyncio.StreamWriter], b: tuple[asyncio.StreamReader, asyncio.StreamWriter]
) -> None:
    """Relay bytes both ways until both directions end; close both writers."""
    try:
        await asyncio.gather(_pump(a[0], b[1]), _pump(b[0], a[1]))
    finally:
        for stream in (a[1], b[1]):
            stream.close()
        for stream in (a[1], b[1]):
            with contextlib.suppress(Exception):
                await stream.wait_closed()


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()
    except OSError:
        writer.close()
        return
    if writer.can_write_eof():
        with contextlib.suppress(OSError):
            writer.write_eof()
