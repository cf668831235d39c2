"""Running a protocol server's ASGI app with uvicorn on a socket bound first (so that port 0
gives a free port, announced once the server accepts connections), and its token."""

from __future__ import annotations

import secrets
import socket
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["bind", "run_asgi", "server_token"]


def server_token(token: str | None) -> str:
    """``token``, or a generated one printed on stderr (stdout may carry the protocol)."""
    if token:
        return token
    token = secrets.token_urlsafe(24)
    print(f"token: {token}", file=sys.stderr, flush=True)
    return token


def bind(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` (IPv6 when ``host`` has a colon).

    Raises:
        OSError: the address cannot be bound.
    """
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


async def run_asgi(app: Any, sock: socket.socket, ready: Callable[[int], None]) -> None:
    """Serve ``app`` on ``sock`` until SIGINT or SIGTERM; ``ready(port)`` once it accepts connections."""
    import anyio
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False))

    async def announce() -> None:
        while not server.started:
            await anyio.sleep(0.05)
        ready(sock.getsockname()[1])

    async with anyio.create_task_group() as group:
        group.start_soon(announce)
        await server.serve(sockets=[sock])
        group.cancel_scope.cancel()
