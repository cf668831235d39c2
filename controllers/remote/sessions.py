"""The sessions of a controller server: one per client connection, holding the envs it opened.

- The first message must be ``hello`` with the token (unless the HTTP upgrade carried it as a
  bearer token), within the server's ``hello_timeout``; anything else closes the connection
  (code 4401).
- One connection carries many envs (each ``open`` creates a controller, keyed by its env id, at
  most :data:`MAX_ENVS_PER_CONNECTION`); requests run concurrently (at most :data:`MAX_IN_FLIGHT`),
  one at a time per env; a closed connection closes its envs.
- A malformed, unknown or oversized message gets an error frame and the connection keeps serving.
- Every failure of a request is answered with its error type and message; the server goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from pydantic import ValidationError
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

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
from hud_gym.controllers.remote.trust import validate_options
from hud_gym.evaluation import FunctionContext
from hud_gym.gyms import get_gym
from hud_gym.task import FunctionConfig, Task

__all__ = [
    "CLOSE_TIMEOUT",
    "ENV_OPS",
    "MAX_ENVS_PER_CONNECTION",
    "MAX_IN_FLIGHT",
    "ClientSession",
    "HostedEnv",
    "Reply",
    "ServerSettings",
]

MAX_ENVS_PER_CONNECTION = 256
MAX_IN_FLIGHT = 256
CLOSE_TIMEOUT = 30.0


Reply = tuple[dict[str, Any], bytes | None]
"""A request's result and the binary frame sent before it (``observe``'s screenshot), if any."""


class ServerSettings(Protocol):
    """What a session needs of its server (:class:`~hud_gym.controllers.remote.server.ControllerServer`)."""

    gym: str
    hello_timeout: float
    max_message_size: int
    trust_client_options: bool

    @property
    def env_ids(self) -> Iterator[int]:
        """The numbers of the envs opened on the server (``e1``, ``e2``, ...)."""
        ...

    def check_token(self, token: str) -> bool:
        """Constant-time comparison with the server's token."""
        ...


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

    # One handler per env op (the table is :data:`ENV_OPS`); each returns the result and the binary frame.

    async def _step(self, request: Step) -> Reply:
        outcome = await self.controller.step(parse_action(request.action))
        return {"response": outcome.response, "info": outcome.info}, None

    async def _observe(self, request: Observe) -> Reply:
        frame = await self.controller.observe()
        width, height, binary = self.encode(request.id, frame.screenshot)
        region = getattr(frame, "region", None)
        result = {
            "text": frame.text,
            "info": frame.info,
            "region": list(region) if region else None,
            "frame": {"format": self.frame_format, "width": width, "height": height},
        }
        return result, binary

    async def _reset(self, request: Reset) -> Reply:
        controller = self.controller
        try:
            task = Task.model_validate(request.task) if request.task is not None else None
        except ValidationError as exc:
            raise ProtocolError(f"invalid task: {exc.errors(include_url=False)[0]['msg']}", request.id) from None
        await controller.reset(task, request.seed)
        self.context = FunctionContext(gym=controller.gym, controller=controller, task=task, seed=request.seed)
        return {}, None

    async def _setup(self, request: Setup) -> Reply:
        calls = self.controller.resolve("setup", _configs(request.calls, request.id))
        context = self.function_context()
        await self.controller.setup(calls, context)
        return {"instruction": context.instruction, "info": context.info}, None

    async def _evaluate(self, request: Evaluate) -> Reply:
        calls = self.controller.resolve("evaluate", _configs(request.calls, request.id))
        context = self.function_context()
        context.final_response = request.final_response
        grade = await self.controller.evaluate(calls, context, request.combine)
        return {"grade": grade.model_dump()}, None

    async def _health(self, request: Health) -> Reply:
        return {"healthy": bool(await self.controller.health())}, None

    async def _start(self, request: Start) -> Reply:
        await self.controller.start()
        return {}, None

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


class ClientSession:
    """One client connection: its handshake, its envs and its requests in flight."""

    def __init__(self, server: ServerSettings, websocket: ServerConnection, authorized: bool) -> None:
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
        await self.send(
            ok_message(
                request.id,
                {
                    "server": "hud-gym",
                    "v": PROTOCOL_VERSION,
                    "gym": self.server.gym,
                    "max_message_size": self.server.max_message_size,
                },
            )
        )
        return True

    async def _receive(self, message: str | bytes) -> None:
        if len(message) > self.server.max_message_size:
            await self.send(
                error_message(
                    None,
                    "TooLarge",
                    (
                        f"message of {len(message)} bytes exceeds this server's limit of {self.server.max_message_size} bytes"
                    ),
                )
            )
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

    async def _perform(self, request: ClientRequest) -> Reply:
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
        controller: Controller = get_gym(server.gym).make_controller((width, height), options)
        if request.capture_region is not None and getattr(controller, "supports_capture_region", False):
            controller.capture_region = tuple(request.capture_region)  # type: ignore[assignment]
        env_id = f"e{next(server.env_ids)}"
        # Frames in /dev/shm are files this server creates for the client: for trusted clients only.
        frame_format = (
            "raw" if request.frame_format == "shm" and not server.trust_client_options else request.frame_format
        )
        self.envs[env_id] = HostedEnv(env_id, controller, frame_format, request.jpeg_quality)
        return {"env": env_id}

    async def _on_env(self, hosted: HostedEnv, request: ClientRequest) -> Reply:
        handler = ENV_OPS.get(type(request))
        if handler is None:
            raise ProtocolError(f"op {request.op!r} does not apply to an env", request.id)
        return await handler(hosted, request)

    async def shutdown(self) -> None:
        for task in list(self.in_flight):
            task.cancel()
        envs, self.envs = list(self.envs.values()), {}
        await asyncio.gather(*(hosted.close() for hosted in envs), return_exceptions=True)


ENV_OPS: dict[type[ClientRequest], Callable[[HostedEnv, Any], Awaitable[Reply]]] = {
    Step: HostedEnv._step,
    Observe: HostedEnv._observe,
    Reset: HostedEnv._reset,
    Setup: HostedEnv._setup,
    Evaluate: HostedEnv._evaluate,
    Health: HostedEnv._health,
    Start: HostedEnv._start,
}
"""The ops a session runs on one of its envs (one at a time per env), by request type."""
