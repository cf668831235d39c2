"""The controller server: hosts the controllers of one gym type for remote envs, over WebSocket.

``python -m hud_gym.controllers.remote.server browser --port 8765`` (or ``hud-gym serve browser``)
serves ``hud/Browser-v0`` controllers on ``ws://127.0.0.1:8765``; an env then uses it with
``gymnasium.make("hud/Browser-v0", controller="ws://127.0.0.1:8765", controller_token=TOKEN)``.
The message schema is :mod:`hud_gym.controllers.remote.protocol` (``docs/controller-protocol.md``).

- Binds loopback unless told otherwise (``--host 0.0.0.0`` inside a container).
- Every connection must authenticate with the token (read from ``--token-file``, else
  ``$HUD_GYM_SERVER_TOKEN``, else generated and printed at start); the comparison is
  constant-time. Never from the command line, which every user of the machine can read
  (``ps``, ``/proc/PID/cmdline``): ``--token`` is refused with an error that says so. The
  variable is removed from the server's environment once read, so what the server starts
  (browsers, desktops and their apps) does not inherit it.
- One connection carries many envs, each with its own controller (:mod:`.sessions`); requests
  run concurrently, one at a time per env; a closed connection closes its envs.
- A malformed, unknown or oversized message gets an error frame and the connection keeps
  serving; only messages over four times ``max_message_size`` close it (code 1009).
- Options that run programs or reach the host's files or network are refused unless the server
  trusts its clients (``--trust-client-options``; the trust policy is :mod:`.trust`). A token
  holder can otherwise drive the gym, not the host.
- Controllers run on the hud-gym loop thread, as in an env's own process, so their shared
  resources (one Chromium for every browser env) and exit hooks behave the same.

Example:
    >>> from hud_gym.controllers.remote.server import ControllerServer
    >>> server = ControllerServer("qa", port=0, token="secret")      # doctest: +SKIP
    >>> url = await server.start()                                    # doctest: +SKIP
    >>> await server.stop()                                           # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hmac
import importlib
import itertools
import logging
import os
import secrets
import signal
import sys
import threading
import weakref
from collections.abc import Sequence
from http import HTTPStatus
from typing import Any

from websockets.asyncio.server import Server, ServerConnection
from websockets.asyncio.server import serve as ws_serve
from websockets.http11 import Request, Response

from hud_gym.controllers.remote.protocol import PROTOCOL_VERSION
from hud_gym.controllers.remote.sessions import CLOSE_TIMEOUT, ClientSession, HostedEnv
from hud_gym.controllers.remote.trust import controller_class, options_model, served_gym, validate_options
from hud_gym.core.loop import get_loop_thread

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "DEFAULT_PORT",
    "IMPORTS_ENV_VAR",
    "READY_PREFIX",
    "SERVER_MODULE",
    "TOKEN_ENV_VAR",
    "TOKEN_ON_COMMAND_LINE",
    "ControllerServer",
    "HostedEnv",
    "controller_class",
    "main",
    "options_model",
    "read_token",
    "serve",
    "server_imports",
    "validate_options",
]

DEFAULT_PORT = 8765
DEFAULT_MAX_MESSAGE_SIZE = 4 * 2**20
"""Largest client message answered (bytes); four times this closes the connection."""
TOKEN_ENV_VAR = "HUD_GYM_SERVER_TOKEN"
"""Environment variable a server reads its token from when ``--token-file`` is not given."""
IMPORTS_ENV_VAR = "HUD_GYM_SERVER_IMPORTS"
"""Comma-separated modules the server imports at start, as ``--import`` does: how a
``"subprocess"`` or ``"docker"`` server (which inherits or is given the environment) learns the
setup/evaluate functions registered in your own modules."""
TOKEN_ON_COMMAND_LINE = (
    "--token puts the token on the command line, where every user of this machine can read it "
    f"(ps, /proc/PID/cmdline): put it in a file readable only by you and pass --token-file FILE, "
    f"or set ${TOKEN_ENV_VAR}"
)
SERVER_MODULE = "hud_gym.controllers.remote.server"
"""This module, as ``python -m`` runs it (what the ``"subprocess"`` and ``"docker"`` launchers start)."""
READY_PREFIX = "HUD_GYM_SERVER_READY "
"""The line a server prints on stdout, followed by its URL, once it accepts connections."""

logger = logging.getLogger("hud_gym.controllers.remote.server")


class ControllerServer:
    """A WebSocket server hosting controllers of one gym type; see the module docstring.

    Args:
        gym: ``"browser"``, ``"ubuntu"`` or ``"qa"``.
        host: the address to bind (loopback by default).
        port: the port (0 = a free one; :attr:`port` says which).
        token: the secret every connection must present.
        max_message_size: largest client message answered, in bytes.
        trust_client_options: accept options that reach beyond the gym's sandbox.
        hello_timeout: seconds a new connection has to authenticate.
    """

    def __init__(
        self,
        gym: str,
        *,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        token: str,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        trust_client_options: bool = False,
        hello_timeout: float = 10.0,
    ) -> None:
        controller_class(gym)  # an unknown gym fails here, with the known ones
        if not token:
            raise ValueError("a controller server needs a non-empty token")
        if max_message_size < 1024:
            raise ValueError(f"max_message_size must be at least 1024 bytes, got {max_message_size}")
        self.gym = gym
        self.host = host
        self.port = port
        self.max_message_size = max_message_size
        self.trust_client_options = trust_client_options
        self.hello_timeout = hello_timeout
        self.env_ids = itertools.count(1)
        self._token = token.encode()
        self._server: Server | None = None
        self._authorized: weakref.WeakSet[ServerConnection] = weakref.WeakSet()
        self._sessions: set[ClientSession] = set()

    @property
    def url(self) -> str:
        """``ws://host:port`` of the running server."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"ws://{host}:{self.port}"

    def check_token(self, token: str) -> bool:
        """Constant-time comparison with the server's token."""
        return hmac.compare_digest(token.encode(), self._token)

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        header = request.headers.get("Authorization")
        if header is None:
            return None
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "bearer" or not self.check_token(value.strip()):
            response = connection.respond(HTTPStatus.UNAUTHORIZED, "invalid token\n")
            response.headers["WWW-Authenticate"] = "Bearer"
            return response
        self._authorized.add(connection)
        return None

    async def _handle(self, websocket: ServerConnection) -> None:
        session = ClientSession(self, websocket, authorized=websocket in self._authorized)
        self._sessions.add(session)
        try:
            await session.run()
        finally:
            self._sessions.discard(session)
            await session.shutdown()

    async def start(self) -> str:
        """Bind and start accepting connections; return :attr:`url`."""
        self._server = await ws_serve(
            self._handle,
            self.host,
            self.port,
            process_request=self._process_request,
            compression=None,
            max_size=4 * self.max_message_size,
            max_queue=64,
            ping_interval=20,
            ping_timeout=60,
        )
        self.port = self._server.sockets[0].getsockname()[1]
        return self.url

    async def stop(self) -> None:
        """Close every connection and every controller, then stop listening."""
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), CLOSE_TIMEOUT + 5)
        await asyncio.gather(*(session.shutdown() for session in list(self._sessions)), return_exceptions=True)


def serve(
    gym: str,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    token: str | None = None,
    *,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    trust_client_options: bool = False,
) -> None:
    """Run a controller server until SIGINT or SIGTERM (blocking; call from the main thread).

    Prints where it listens, the token when it generated one, and then a line
    ``HUD_GYM_SERVER_READY <url>`` once it accepts connections; warnings go to stderr (unless
    logging is configured already). ``hud-gym serve`` and :func:`main` run it after
    :func:`read_token` and the imports of :func:`server_imports`.

    Raises:
        OSError: the address cannot be bound.
    """
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(name)s: %(message)s")
    generated = token is None
    token = token or secrets.token_urlsafe(24)
    runner = get_loop_thread()
    server = ControllerServer(
        gym,
        host=host,
        port=port,
        token=token,
        max_message_size=max_message_size,
        trust_client_options=trust_client_options,
    )
    stop = threading.Event()

    def request_stop(signum: int, frame: Any) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        url = runner.run(server.start())
        print(f"hud-gym controller server for the {gym!r} gym on {url} (protocol v{PROTOCOL_VERSION})", flush=True)
        if generated:
            print(f"token: {token}", flush=True)
        print(f"{READY_PREFIX}{url}", flush=True)
        while not stop.wait(1.0):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        with contextlib.suppress(Exception):
            runner.run(server.stop(), timeout=CLOSE_TIMEOUT + 10)
        runner.stop()


def read_token(token_file: str | os.PathLike[str] | None) -> str | None:
    """The server's token: the contents of ``token_file`` (surrounding whitespace stripped), else
    ``$HUD_GYM_SERVER_TOKEN`` (then removed from this process's environment, so that the
    browsers and desktops the server starts do not inherit it), else ``None`` (generate one).

    Raises:
        ValueError: the file cannot be read, or holds no token.
    """
    from_env = (os.environ.pop(TOKEN_ENV_VAR, None) or "").strip()
    if token_file is None:
        return from_env or None
    try:
        token = open(token_file, encoding="utf-8").read().strip()  # noqa: SIM115
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"--token-file {token_file}: cannot read it ({exc})") from None
    if not token:
        raise ValueError(f"--token-file {token_file}: the file is empty")
    return token


def server_imports(imports: Sequence[str] = ()) -> list[str]:
    """The modules a server imports before serving: ``imports`` (``--import``), then the
    comma-separated ones of ``$HUD_GYM_SERVER_IMPORTS``."""
    from_env = [m.strip() for m in os.environ.get(IMPORTS_ENV_VAR, "").split(",") if m.strip()]
    return [*imports, *from_env]


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m hud_gym.controllers.remote.server GYM [--host H] [--port N] ...``."""
    parser = argparse.ArgumentParser(
        prog="hud-gym serve", description="Serve the controllers of one hud-gym gym type over WebSocket."
    )
    parser.add_argument("gym", help="the gym type to serve (qa, browser, ubuntu, or one an --import registers)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 = a free one)")
    parser.add_argument(
        "--token-file",
        default=None,
        metavar="FILE",
        help=f"a file holding the token clients must present (default: ${TOKEN_ENV_VAR}, else a "
        "generated one, printed); never on the command line",
    )
    parser.add_argument("--token", default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--max-message-size",
        type=int,
        default=DEFAULT_MAX_MESSAGE_SIZE,
        help="largest client message answered, in bytes",
    )
    parser.add_argument(
        "--trust-client-options",
        action="store_true",
        help="accept controller options that reach beyond the sandbox (allow_shell, executable_path, ...)",
    )
    parser.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE first (to register your own setup/evaluate functions); repeatable; "
        f"${IMPORTS_ENV_VAR} adds comma-separated modules",
    )
    args = parser.parse_args(argv)
    if args.token is not None:
        parser.error(TOKEN_ON_COMMAND_LINE)
    try:
        token = read_token(args.token_file)
    except ValueError as exc:
        parser.error(str(exc))
    for module in server_imports(args.imports):
        importlib.import_module(module)
    try:
        gym = served_gym(args.gym)
    except ValueError as exc:
        parser.error(str(exc))
    serve(
        gym,
        args.host,
        args.port,
        token,
        max_message_size=args.max_message_size,
        trust_client_options=args.trust_client_options,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
