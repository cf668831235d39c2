"""A hud-gym env as an MCP server (the official ``mcp`` SDK): stdio and streamable HTTP.

``hud-gym serve GYM --mcp`` (stdio) or ``--mcp --transport http`` runs :func:`serve`; in code,
:func:`build_server` gives the ``MCPServer`` and :func:`http_app` its ASGI app behind the token,
for another server to mount (HUD's ``mcp`` capability).

Trust, as the WebSocket controller server (:mod:`hud_gym.controllers.remote.server`):

- Over HTTP every request must carry ``Authorization: Bearer TOKEN`` (constant-time compare;
  the token from ``--token-file``, else ``$HUD_GYM_SERVER_TOKEN``, else generated and printed;
  never on the command line); the server binds loopback unless told otherwise, and the SDK's DNS
  rebinding protection checks ``Host`` and ``Origin`` on loopback. A request body over
  ``max_message_size`` is refused (413). Over stdio the client started the server as itself: the
  pipe is the credential.
- Clients never set the env's options: the gym, its options and its task set are the operator's
  (the command line). A client picks a task by reference only
  (:func:`hud_gym.protocols.session.pick_task`) and acts through the tools of :mod:`.tools`;
  every string argument is bounded by the tools' schemas.
"""

from __future__ import annotations

import contextlib
import hmac
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

from hud_gym.protocols.mcp.tools import add_tools
from hud_gym.protocols.session import ServedEnv

__all__ = ["DEFAULT_MAX_MESSAGE_SIZE", "MCP_PATH", "READY_PREFIX", "build_server", "http_app", "serve"]

DEFAULT_MAX_MESSAGE_SIZE = 4 * 2**20
"""Largest request body the HTTP transport reads, in bytes."""
MCP_PATH = "/mcp"
"""Where the streamable HTTP endpoint is."""
READY_PREFIX = "HUD_GYM_MCP_READY "
"""The line the HTTP server prints on stdout, followed by its URL, once it accepts connections."""

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]


def build_server(served: ServedEnv, name: str = "hud-gym") -> Any:
    """An ``mcp`` ``MCPServer`` whose tools drive ``served`` (:mod:`.tools`); closing the server's
    lifespan closes the env."""
    from mcp.server.mcpserver import MCPServer

    @contextlib.asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        try:
            yield None
        finally:
            await served.close()

    gym = served.env.gym or type(served.env).__name__
    server = MCPServer(
        name=name,
        instructions=f"A hud-gym {gym} environment: call setup (or reset), act with computer, openai_computer, "
        "act or custom, answer with response; every step reports its reward (null when not graded) and status.",
        lifespan=lifespan,
        log_level="WARNING",
    )
    add_tools(server, served)
    return server


class _BearerToken:
    """ASGI middleware: HTTP requests without ``Authorization: Bearer <token>`` get 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            scheme, _, value = headers.get(b"authorization", b"").partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(value.strip(), self.token):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")],
                    }
                )
                await send({"type": "http.response.body", "body": b"invalid or missing token\n"})
                return
        await self.app(scope, receive, send)


def http_app(server: Any, token: str, *, host: str = "127.0.0.1", max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> Any:
    """The ASGI app of ``server``'s streamable HTTP transport at :data:`MCP_PATH`, behind ``token``.

    Raises:
        ValueError: an empty token.
    """
    if not token:
        raise ValueError("an MCP server over HTTP needs a non-empty token")
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host, max_request_body_size=max_message_size)
    return _BearerToken(app, token)


async def _serve_http(server: Any, host: str, port: int, token: str, max_message_size: int) -> None:
    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound = sock.getsockname()[1]
    app = http_app(server, token, host=host, max_message_size=max_message_size)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uvicorn_server = uvicorn.Server(config)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{bound}{MCP_PATH}"

    async def announce() -> None:
        while not uvicorn_server.started:
            await _sleep(0.05)
        print(f"{READY_PREFIX}{url}", flush=True)

    import anyio

    async with anyio.create_task_group() as group:
        group.start_soon(announce)
        await uvicorn_server.serve(sockets=[sock])
        group.cancel_scope.cancel()


async def _sleep(seconds: float) -> None:
    import anyio

    await anyio.sleep(seconds)


def serve(
    served: ServedEnv,
    *,
    transport: str = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> None:
    """Serve ``served`` over ``transport`` (``"stdio"`` or ``"http"``) until the client closes
    stdin, or SIGINT / SIGTERM (blocking). Over HTTP a generated token (when ``token`` is ``None``)
    is printed on stderr, then :data:`READY_PREFIX` and the URL on stdout.

    Raises:
        ValueError: an unknown transport.
        OSError: the address cannot be bound.
    """
    import anyio

    server = build_server(served)
    if transport == "stdio":
        anyio.run(_stdio, server)
        return
    if transport != "http":
        raise ValueError(f"unknown MCP transport {transport!r}; use 'stdio' or 'http'")
    if token is None:
        import secrets

        token = secrets.token_urlsafe(24)
        print(f"token: {token}", file=sys.stderr, flush=True)
    anyio.run(_serve_http, server, host, port, token, max_message_size)


async def _stdio(server: Any) -> None:
    # The lifespan (which closes the env) runs around the stdio session.
    await server.run_stdio_async()
