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
- One connection carries many envs (each ``open`` creates a controller, keyed by its env id);
  requests run concurrently, one at a time per env; a closed connection closes its envs.
- A malformed, unknown or oversized message gets an error frame and the connection keeps
  serving; only messages over four times ``max_message_size`` close it (code 1009).
- Options that run programs or reach the host's files or network (``allow_shell``,
  ``sandbox=False``, ``allow_network``, ``executable_path``, ``launch_args``, ...) are refused
  unless the server trusts its clients
  (``--trust-client-options``; the ``"subprocess"`` launcher sets it, the client being the same
  user on the same machine). A token holder can otherwise drive the gym, not the host.
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
import inspect
import itertools
import logging
import os
import secrets
import signal
import sys
import threading
import typing
import weakref
from dataclasses import dataclass, field
from functools import lru_cache
from http import HTTPStatus
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError, create_model
from websockets.asyncio.server import Server, ServerConnection
from websockets.asyncio.server import serve as ws_serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from hud_gym.actions import parse_action
from hud_gym.controllers.base import Controller
from hud_gym.controllers.remote.protocol import (
    CLOSE_UNAUTHORIZED,
    PROTOCOL_VERSION,
    ClientRequest,
    Close,
    Evaluate,
    Health,
    Hello,
    Observe,
    Open,
    Ping,
    ProtocolError,
    Reset,
    Setup,
    Start,
    Step,
    encode_frame,
    error_message,
    ok_message,
    pack_frame,
    parse_request,
)
from hud_gym.controllers.remote.shm import SharedFrameWriter
from hud_gym.core.loop import get_loop_thread
from hud_gym.evaluation import FunctionContext
from hud_gym.task import FunctionConfig, Task

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "DEFAULT_PORT",
    "GYM_CONTROLLERS",
    "READY_PREFIX",
    "TOKEN_ENV_VAR",
    "ControllerServer",
    "main",
    "serve",
]

GYM_CONTROLLERS: dict[str, str] = {
    "qa": "hud_gym.controllers.qa:QAController",
    "browser": "hud_gym.controllers.browser:BrowserController",
    "ubuntu": "hud_gym.controllers.ubuntu:UbuntuController",
}
"""The controller class of each gym type (imported when a server for that gym starts)."""

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
READY_PREFIX = "HUD_GYM_SERVER_READY "
"""The line a server prints on stdout, followed by its URL, once it accepts connections."""

MAX_ENVS_PER_CONNECTION = 256
MAX_IN_FLIGHT = 256
CLOSE_TIMEOUT = 30.0

logger = logging.getLogger("hud_gym.controllers.remote.server")

# Options that reach beyond the gym's sandbox: refused unless the server trusts its clients.
_HOST_OPTIONS: dict[str, typing.Callable[[Any], bool]] = {
    "allow_shell": lambda v: bool(v),
    "allow_absolute_paths": lambda v: bool(v),
    "in_container": lambda v: v is not None,
    "sandbox": lambda v: v is False,
    "allow_network": lambda v: bool(v),
    "executable_path": lambda v: v is not None,
    "launch_args": lambda v: bool(v),
    "allow_file_urls": lambda v: v is not None,
}
_HOST_CONTEXT_OPTIONS = frozenset({"record_har_path", "record_video_dir", "storage_state", "client_certificates", "proxy"})


@lru_cache(maxsize=None)
def controller_class(gym: str) -> type[Controller]:
    """The controller class serving ``gym``.

    Raises:
        ValueError: an unknown gym type.
    """
    if gym not in GYM_CONTROLLERS:
        raise ValueError(f"unknown gym {gym!r}; a controller server serves one of: {', '.join(GYM_CONTROLLERS)}")
    module, _, name = GYM_CONTROLLERS[gym].partition(":")
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


@lru_cache(maxsize=None)
def options_model(gym: str) -> type[BaseModel]:
    """A pydantic model of the keyword options of ``gym``'s controller (from its signature)."""
    cls = controller_class(gym)
    hints = typing.get_type_hints(cls.__init__)
    fields: dict[str, Any] = {}
    for name, param in inspect.signature(cls.__init__).parameters.items():
        if name in ("self", "screen_size") or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        default = ... if param.default is param.empty else param.default
        fields[name] = (hints.get(name, Any), default)
    return create_model(f"{cls.__name__}Options", __config__=ConfigDict(extra="forbid"), **fields)


def validate_options(gym: str, options: dict[str, Any], *, trusted: bool) -> dict[str, Any]:
    """Check a client's controller options against the controller's signature and the trust policy.

    Raises:
        ProtocolError: an unknown option, a wrong type, or a host-reaching option from an untrusted
            client; the message names the option.
    """
    model = options_model(gym)
    try:
        checked = model.model_validate(options)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        loc = ".".join(str(p) for p in first["loc"])
        known = ", ".join(model.model_fields) or "none"
        raise ProtocolError(f"option '{loc}' of the {gym} controller: {first['msg']} (known options: {known})") from None
    values = {name: getattr(checked, name) for name in model.model_fields}
    if not trusted:
        refused = [name for name, risky in _HOST_OPTIONS.items() if name in values and risky(values[name])]
        context = values.get("context_options") or {}
        refused += [f"context_options.{key}" for key in sorted(set(context) & _HOST_CONTEXT_OPTIONS)]
        if refused:
            raise ProtocolError(
                f"option(s) {', '.join(refused)} reach beyond the gym's sandbox and this server does not trust its "
                "clients with them; start it with --trust-client-options to allow them",
                error_type="Forbidden",
            )
    return values


@dataclass
class HostedEnv:
    """One env's controller on the server, with its function context and its running requests."""

    env_id: str
    controller: Controller
    frame_format: str
    jpeg_quality: int
    context: FunctionContext | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    running: set[asyncio.Task[Any]] = field(default_factory=set)
    shared_frames: SharedFrameWriter | None = None

    def encode(self, request_id: int, screenshot: Any) -> tuple[int, int, bytes]:
        """``(width, height, binary message)`` of a screenshot in this env's frame format."""
        if self.frame_format == "shm":
            pixels = np.ascontiguousarray(np.asarray(screenshot)[..., :3], dtype=np.uint8)
            height, width = pixels.shape[:2]
            try:
                if self.shared_frames is None:
                    self.shared_frames = SharedFrameWriter()
                path = self.shared_frames.write(pixels)
                return width, height, pack_frame(request_id, "shm", width, height, path.encode())
            except OSError:
                self.frame_format = "raw"  # no usable /dev/shm here: send the pixels
        width, height, payload = encode_frame(screenshot, self.frame_format, self.jpeg_quality)  # type: ignore[arg-type]
        return width, height, pack_frame(request_id, self.frame_format, width, height, payload)  # type: ignore[arg-type]

    def function_context(self) -> FunctionContext:
        if self.context is None:
            self.context = FunctionContext(gym=self.controller.gym, controller=self.controller)
        return self.context

    async def close(self) -> None:
        current = asyncio.current_task()
        for task in list(self.running):
            if task is not current:
                task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.controller.close(), CLOSE_TIMEOUT)
        if self.shared_frames is not None:
            self.shared_frames.close()


def _configs(calls: list[dict[str, Any]], request_id: int) -> list[FunctionConfig]:
    configs = []
    for index, call in enumerate(calls):
        try:
            configs.append(FunctionConfig.model_validate(call))
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            loc = ".".join(str(p) for p in first["loc"]) or "call"
            raise ProtocolError(f"calls[{index}].{loc}: {first['msg']}", request_id) from None
    return configs


class _Session:
    """One client connection: its handshake, its envs and its requests in flight."""

    def __init__(self, server: ControllerServer, websocket: ServerConnection, authorized: bool) -> None:
        self.server = server
        self.websocket = websocket
        self.authorized = authorized
        self.envs: dict[str, HostedEnv] = {}
        self.in_flight: set[asyncio.Task[None]] = set()

    async def send(self, message: str | bytes) -> None:
        with contextlib.suppress(ConnectionClosed):
            await self.websocket.send(message)

    async def run(self) -> None:
        if not await self._hello():
            return
        try:
            async for message in self.websocket:
                await self._receive(message)
        except ConnectionClosed:
            pass

    async def _reject(self, request_id: int | None, reason: str) -> None:
        await self.send(error_message(request_id, "Unauthorized", reason))
        await self.websocket.close(CLOSE_UNAUTHORIZED, "unauthorized")

    async def _hello(self) -> bool:
        try:
            message = await asyncio.wait_for(self.websocket.recv(), self.server.hello_timeout)
        except asyncio.TimeoutError:
            await self._reject(None, f"no hello within {self.server.hello_timeout} s")
            return False
        except ConnectionClosed:
            return False
        if len(message) > self.server.max_message_size:
            await self._reject(None, "the first message must be a hello with the token")
            return False
        try:
            request = parse_request(message)
        except ProtocolError as exc:
            await self._reject(exc.request_id, f"the first message must be a hello with the token ({exc})")
            return False
        if not isinstance(request, Hello):
            await self._reject(request.id, f"the first message must be a hello with the token, got {request.op!r}")
            return False
        if not (self.authorized or (request.token is not None and self.server.check_token(request.token))):
            await self._reject(request.id, "missing token" if request.token is None else "invalid token")
            return False
        self.authorized = True
        await self.send(ok_message(request.id, {
            "server": "hud-gym", "v": PROTOCOL_VERSION, "gym": self.server.gym,
            "max_message_size": self.server.max_message_size,
        }))
        return True

    async def _receive(self, message: str | bytes) -> None:
        if len(message) > self.server.max_message_size:
            await self.send(error_message(None, "TooLarge", (
                f"message of {len(message)} bytes exceeds this server's limit of {self.server.max_message_size} bytes")))
            return
        try:
            request = parse_request(message)
        except ProtocolError as exc:
            await self.send(error_message(exc.request_id, exc.error_type, str(exc)))
            return
        if isinstance(request, Hello):
            await self.send(error_message(request.id, "BadRequest", "already authenticated: hello comes once"))
            return
        if len(self.in_flight) >= MAX_IN_FLIGHT:
            await self.send(error_message(request.id, "Busy", f"more than {MAX_IN_FLIGHT} requests in flight"))
            return
        task = asyncio.ensure_future(self._answer(request))
        self.in_flight.add(task)
        task.add_done_callback(self.in_flight.discard)

    async def _answer(self, request: ClientRequest) -> None:
        try:
            result, frame = await self._perform(request)
            reply = ok_message(request.id, result)
        except asyncio.CancelledError:
            await self.send(error_message(request.id, "Cancelled", f"{request.op!r} was cancelled (its env closed)"))
            raise
        except ProtocolError as exc:
            frame, reply = None, error_message(request.id, exc.error_type, str(exc))
        except Exception as exc:  # noqa: BLE001  (every failure is answered; the server goes on)
            frame, reply = None, error_message(request.id, type(exc).__name__, str(exc) or repr(exc))
        if frame is not None:
            await self.send(frame)
        await self.send(reply)

    def _env(self, request: ClientRequest) -> HostedEnv:
        env_id = getattr(request, "env", "")
        hosted = self.envs.get(env_id)
        if hosted is None:
            raise ProtocolError(f"no env {env_id!r} on this connection (open one first)", request.id, "UnknownEnv")
        return hosted

    async def _perform(self, request: ClientRequest) -> tuple[dict[str, Any], bytes | None]:
        if isinstance(request, Ping):
            return {"gym": self.server.gym, "envs": len(self.envs)}, None
        if isinstance(request, Open):
            return self._open(request), None
        hosted = self._env(request)
        if isinstance(request, Close):
            self.envs.pop(hosted.env_id, None)
            await hosted.close()
            return {}, None
        task = asyncio.current_task()
        assert task is not None
        hosted.running.add(task)
        try:
            async with hosted.lock:
                return await self._on_env(hosted, request)
        finally:
            hosted.running.discard(task)

    def _open(self, request: Open) -> dict[str, Any]:
        server = self.server
        if request.gym != server.gym:
            raise ProtocolError(f"this server serves the {server.gym!r} gym, not {request.gym!r}", request.id)
        if len(self.envs) >= MAX_ENVS_PER_CONNECTION:
            raise ProtocolError(f"at most {MAX_ENVS_PER_CONNECTION} envs per connection", request.id, "Busy")
        try:
            options = validate_options(server.gym, request.options, trusted=server.trust_client_options)
        except ProtocolError as exc:
            exc.request_id = request.id
            raise
        width, height = request.screen_size
        controller = controller_class(server.gym)((width, height), **options)
        if request.capture_region is not None and getattr(controller, "supports_capture_region", False):
            controller.capture_region = tuple(request.capture_region)  # type: ignore[assignment]
        env_id = f"e{next(server.env_ids)}"
        # Frames in /dev/shm are files this server creates for the client: for trusted clients only.
        frame_format = "raw" if request.frame_format == "shm" and not server.trust_client_options else request.frame_format
        self.envs[env_id] = HostedEnv(env_id, controller, frame_format, request.jpeg_quality)
        return {"env": env_id}

    async def _on_env(self, hosted: HostedEnv, request: ClientRequest) -> tuple[dict[str, Any], bytes | None]:
        controller = hosted.controller
        if isinstance(request, Step):
            outcome = await controller.step(parse_action(request.action))
            return {"response": outcome.response, "info": outcome.info}, None
        if isinstance(request, Observe):
            frame = await controller.observe()
            width, height, binary = hosted.encode(request.id, frame.screenshot)
            region = getattr(frame, "region", None)
            result = {"text": frame.text, "info": frame.info, "region": list(region) if region else None,
                      "frame": {"format": hosted.frame_format, "width": width, "height": height}}
            return result, binary
        if isinstance(request, Reset):
            try:
                task = Task.model_validate(request.task) if request.task is not None else None
            except ValidationError as exc:
                raise ProtocolError(f"invalid task: {exc.errors(include_url=False)[0]['msg']}", request.id) from None
            await controller.reset(task, request.seed)
            hosted.context = FunctionContext(gym=controller.gym, controller=controller, task=task, seed=request.seed)
            return {}, None
        if isinstance(request, Setup):
            calls = controller.resolve("setup", _configs(request.calls, request.id))
            context = hosted.function_context()
            await controller.setup(calls, context)
            return {"instruction": context.instruction}, None
        if isinstance(request, Evaluate):
            calls = controller.resolve("evaluate", _configs(request.calls, request.id))
            context = hosted.function_context()
            context.final_response = request.final_response
            grade = await controller.evaluate(calls, context, request.combine)
            return {"grade": grade.model_dump()}, None
        if isinstance(request, Health):
            return {"healthy": bool(await controller.health())}, None
        if isinstance(request, Start):
            await controller.start()
            return {}, None
        raise ProtocolError(f"op {request.op!r} does not apply to an env", request.id)

    async def shutdown(self) -> None:
        for task in list(self.in_flight):
            task.cancel()
        envs, self.envs = list(self.envs.values()), {}
        await asyncio.gather(*(hosted.close() for hosted in envs), return_exceptions=True)


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

    def __init__(self, gym: str, *, host: str = "127.0.0.1", port: int = DEFAULT_PORT, token: str,
                 max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE, trust_client_options: bool = False,
                 hello_timeout: float = 10.0) -> None:
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
        self._sessions: set[_Session] = set()

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
        session = _Session(self, websocket, authorized=websocket in self._authorized)
        self._sessions.add(session)
        try:
            await session.run()
        finally:
            self._sessions.discard(session)
            await session.shutdown()

    async def start(self) -> str:
        """Bind and start accepting connections; return :attr:`url`."""
        self._server = await ws_serve(
            self._handle, self.host, self.port,
            process_request=self._process_request,
            compression=None,
            max_size=4 * self.max_message_size,
            max_queue=64,
            ping_interval=20, ping_timeout=60,
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


def serve(gym: str, host: str = "127.0.0.1", port: int = DEFAULT_PORT, token: str | None = None, *,
          max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE, trust_client_options: bool = False) -> None:
    """Run a controller server until SIGINT or SIGTERM (blocking; call from the main thread).

    Prints where it listens, the token when it generated one, and then a line
    ``HUD_GYM_SERVER_READY <url>`` once it accepts connections.
    """
    generated = token is None
    token = token or secrets.token_urlsafe(24)
    runner = get_loop_thread()
    server = ControllerServer(gym, host=host, port=port, token=token, max_message_size=max_message_size,
                              trust_client_options=trust_client_options)
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


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m hud_gym.controllers.remote.server GYM [--host H] [--port N] ...``."""
    parser = argparse.ArgumentParser(
        prog="hud-gym serve", description="Serve the controllers of one hud-gym gym type over WebSocket.")
    parser.add_argument("gym", choices=sorted(GYM_CONTROLLERS), help="the gym type to serve")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 = a free one)")
    parser.add_argument("--token-file", default=None, metavar="FILE",
                        help=f"a file holding the token clients must present (default: ${TOKEN_ENV_VAR}, else a "
                             "generated one, printed); never on the command line")
    parser.add_argument("--token", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--max-message-size", type=int, default=DEFAULT_MAX_MESSAGE_SIZE,
                        help="largest client message answered, in bytes")
    parser.add_argument("--trust-client-options", action="store_true",
                        help="accept controller options that reach beyond the sandbox (allow_shell, executable_path, ...)")
    parser.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                        help="import MODULE first (to register your own setup/evaluate functions); repeatable; "
                             f"${IMPORTS_ENV_VAR} adds comma-separated modules")
    args = parser.parse_args(argv)
    if args.token is not None:
        parser.error(TOKEN_ON_COMMAND_LINE)
    try:
        token = read_token(args.token_file)
    except ValueError as exc:
        parser.error(str(exc))
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(name)s: %(message)s")
    from_env = [m.strip() for m in os.environ.get(IMPORTS_ENV_VAR, "").split(",") if m.strip()]
    for module in [*args.imports, *from_env]:
        importlib.import_module(module)
    serve(args.gym, args.host, args.port, token, max_message_size=args.max_message_size,
          trust_client_options=args.trust_client_options)
    return 0


if __name__ == "__main__":
    sys.exit(main())
