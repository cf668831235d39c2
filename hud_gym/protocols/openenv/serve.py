"""OpenEnv's server (``openenv-core``'s ``create_fastapi_app``) over hud-gym envs, behind the token.

``hud-gym serve GYM --openenv [--task REF | --taskset NAME] [--option K=V]`` runs
:func:`serve_openenv`: ``POST /reset``, ``POST /step``, ``GET /state``, ``GET /schema`` and the
``/ws`` WebSocket session of OpenEnv's contract, one env per WebSocket session (at most
``max_sessions`` at once). Every request presents the token (:mod:`hud_gym.protocols.auth`):
OpenEnv's client sets no headers, so it is given ``http://hud:TOKEN@127.0.0.1:PORT``, whose
password its WebSocket library sends as Basic auth. The envs are the operator's (gym, options,
task set); a client picks a task by reference and sends CLA actions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hud_gym.protocols.auth import TokenGate
from hud_gym.protocols.serving import bind, run_asgi, server_token

__all__ = ["DEFAULT_MAX_SESSIONS", "READY_PREFIX", "ClosedSessionIsAnEnd", "openenv_app", "serve_openenv"]

DEFAULT_MAX_SESSIONS = 4
"""WebSocket sessions (each with an env of its own) served at once."""
READY_PREFIX = "HUD_GYM_OPENENV_READY "
"""The line the server prints on stdout, followed by its URL, once it accepts connections."""


def openenv_app(make_env: Callable[[], Any], token: str, *, max_sessions: int = DEFAULT_MAX_SESSIONS) -> Any:
    """OpenEnv's FastAPI app over envs from ``make_env``, behind ``token`` (an ASGI app).

    Raises:
        ValueError: an empty token.
    """
    from openenv.core.env_server.http_server import create_fastapi_app

    from hud_gym.protocols.openenv.environment import environment_factory
    from hud_gym.protocols.openenv.models import HudGymAction, HudGymObservation

    app = create_fastapi_app(
        environment_factory(make_env), HudGymAction, HudGymObservation, max_concurrent_envs=max_sessions
    )
    return TokenGate(ClosedSessionIsAnEnd(app), token)


class ClosedSessionIsAnEnd:
    """ASGI middleware: a WebSocket session the client closed ends quietly.

    ``openenv-core``'s ``/ws`` handler closes the socket again after the client's close, which
    Starlette answers with ``WebSocketDisconnect``: uvicorn would log a 4 KiB traceback for every
    session that ended normally. Any other exception (and any HTTP one) is left to uvicorn.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        from starlette.websockets import WebSocketDisconnect

        try:
            await self.app(scope, receive, send)
        except WebSocketDisconnect:
            if scope["type"] != "websocket":
                raise


def serve_openenv(
    make_env: Callable[[], Any],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str | None = None,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
) -> None:
    """Serve OpenEnv's contract over envs from ``make_env`` until SIGINT or SIGTERM (blocking).
    Prints a generated token (when ``token`` is ``None``) on stderr, then :data:`READY_PREFIX` and
    the URL on stdout.

    Raises:
        OSError: the address cannot be bound.
    """
    import anyio

    make_env().close()  # a bad gym, task or option fails here, before serving
    sock = bind(host, port)
    app = openenv_app(make_env, server_token(token), max_sessions=max_sessions)
    shown = f"[{host}]" if ":" in host else host

    def ready(bound: int) -> None:
        print(f"{READY_PREFIX}http://{shown}:{bound}", flush=True)

    anyio.run(run_asgi, app, sock, ready)
