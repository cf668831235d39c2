"""A hud-gym env as an MCP server (the official ``mcp`` SDK): stdio and streamable HTTP.

``hud-gym serve GYM --mcp`` (stdio) or ``--mcp --transport http`` runs :func:`serve`; in code,
:func:`build_server` gives the ``MCPServer`` and :func:`http_app` its ASGI app behind the token,
for another server to mount (HUD's ``mcp`` capability).

Trust, as the WebSocket controller server (:mod:`hud_gym.controllers.remote.server`):

- Over HTTP every request must carry ``Authorization: Bearer TOKEN`` (:mod:`hud_gym.protocols.auth`;
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
from collections.abc import AsyncIterator
from typing import Any

from hud_gym.protocols.auth import TokenGate
from hud_gym.protocols.mcp.tools import add_tools
from hud_gym.protocols.serving import bind, run_asgi, server_token
from hud_gym.protocols.session import ServedEnv

__all__ = ["DEFAULT_MAX_MESSAGE_SIZE", "MCP_PATH", "READY_PREFIX", "build_server", "http_app", "serve"]

DEFAULT_MAX_MESSAGE_SIZE = 4 * 2**20
"""Largest request body the HTTP transport reads, in bytes."""
MCP_PATH = "/mcp"
"""Where the streamable HTTP endpoint is."""
READY_PREFIX = "HUD_GYM_MCP_READY "
"""The line the HTTP server prints on stdout, followed by its URL, once it accepts connections."""


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


def http_app(
    server: Any, token: str, *, host: str = "127.0.0.1", max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
) -> Any:
    """The ASGI app of ``server``'s streamable HTTP transport at :data:`MCP_PATH`, behind ``token``.

    Raises:
        ValueError: an empty token.
    """
    if not token:
        raise ValueError("an MCP server over HTTP needs a non-empty token")
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host, max_request_body_size=max_message_size)
    return TokenGate(app, token)


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
    sock = bind(host, port)
    app = http_app(server, server_token(token), host=host, max_message_size=max_message_size)
    shown = f"[{host}]" if ":" in host else host

    def ready(bound: int) -> None:
        print(f"{READY_PREFIX}http://{shown}:{bound}{MCP_PATH}", flush=True)

    anyio.run(run_asgi, app, sock, ready)


async def _stdio(server: Any) -> None:
    # The lifespan (which closes the env) runs around the stdio session.
    await server.run_stdio_async()
