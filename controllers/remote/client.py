"""The env side of a remote controller: :class:`RemoteController` drives a controller hosted by a
controller server (:mod:`~hud_gym.controllers.remote.server`) through the protocol of
:mod:`~hud_gym.controllers.remote.protocol`.

Every env of a process that talks to the same server (same URL and token) shares one WebSocket
(:class:`RemoteConnection`, :mod:`~hud_gym.controllers.remote.connection`), opened by the first
and closed with the last; each env has its own handle on it, and their requests travel
concurrently, matched to their answers by request id.

Where the server comes from is the env's ``controller`` argument:

- ``"subprocess"``: a server process on a free loopback port, started for the first env of this
  process and stopped with the last (:mod:`~hud_gym.controllers.remote.launch`);
- ``"docker"``: a server in the gym's container, through the Docker SDK;
- ``"ws://host:port"`` (or ``wss://``): a server already running, with ``controller_token``
  (or ``$HUD_GYM_CONTROLLER_TOKEN``). ``?frames=jpeg`` asks for JPEG screenshots (for slow links).

Failures: a lost connection (the server died) fails every request in flight with a
:class:`~hud_gym.controllers.base.ControllerError` at once, so the env reports
``status="env_error"``; the next ``reset`` makes a new controller, which reconnects (and, for
``"subprocess"``, starts a new server).

Example:
    >>> import gymnasium, hud_gym
    >>> env = gymnasium.make("hud/QA-v0", task=hud_gym.Task(prompt="2+2?", target="4"),
    ...                      controller="subprocess")                    # doctest: +SKIP
    >>> obs, info = env.reset(seed=0)                                    # doctest: +SKIP
    >>> env.close()                                                      # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit, urlunsplit

from hud_gym.actions import CLAAction
from hud_gym.controllers.base import ActionOutcome, Controller, ControllerError, Frame
from hud_gym.controllers.remote.connection import (
    CLOSE_TIMEOUT,
    CONNECTIONS,
    OPEN_TIMEOUT,
    REQUEST_TIMEOUT,
    RemoteConnection,
    RemoteError,
    Reply,
)
from hud_gym.controllers.remote.protocol import FrameFormat, ProtocolError, decode_frame
from hud_gym.controllers.remote.shm import SharedFrameReader, shm_available
from hud_gym.evaluation import BoundCall, FunctionContext, Grade
from hud_gym.task import Task

__all__ = [
    "CONNECTIONS",
    "CONTROLLER_MODES",
    "TOKEN_ENV_VAR",
    "RemoteConnection",
    "RemoteController",
    "RemoteError",
    "check_remote_placement",
]

CONTROLLER_MODES = ("local", "subprocess", "docker")
"""The named places a controller can run; any other value must be a ``ws://``/``wss://`` URL."""

TOKEN_ENV_VAR = "HUD_GYM_CONTROLLER_TOKEN"
"""Where an env looks for the token of a ``ws://`` server when ``controller_token`` is not given."""

START_TIMEOUT = 180.0
CLOSE_REQUEST_TIMEOUT = 5.0


def check_remote_placement(controller: str, token: str | None = None) -> tuple[str, str | None]:
    """Validate an env's ``controller`` argument; return it normalised with its token (the
    :class:`~hud_gym.core.placement.RemotePlacement` check :mod:`hud_gym.registration` installs).

    Raises:
        ValueError: not ``"local"``, ``"subprocess"``, ``"docker"`` or a ``ws://host:port`` URL,
            or a URL without a token.
    """
    if not isinstance(controller, str):
        raise ValueError(f"controller must be a string, got {type(controller).__name__}")
    if controller in CONTROLLER_MODES:
        return controller, token
    parts = urlsplit(controller)
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        raise ValueError(
            f"controller must be 'local', 'subprocess', 'docker' or a 'ws://host:port' URL, got {controller!r}"
        )
    try:
        parts.port  # noqa: B018  (raises on a malformed port)
    except ValueError as exc:
        raise ValueError(f"controller URL {controller!r}: {exc}") from None
    frames = parse_qs(parts.query).get("frames", ["raw"])[-1]
    if frames not in ("raw", "jpeg", "png"):
        raise ValueError(f"controller URL {controller!r}: frames must be raw, jpeg or png, got {frames!r}")
    token = token or os.environ.get(TOKEN_ENV_VAR) or None
    if not token:
        raise ValueError(
            f"controller={controller!r} needs the server's token: pass controller_token=... (printed by "
            f"`hud-gym serve`) or set ${TOKEN_ENV_VAR}"
        )
    return controller, token


def _split_url(url: str) -> tuple[str, FrameFormat]:
    parts = urlsplit(url)
    frames = parse_qs(parts.query).get("frames", ["raw"])[-1]
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")), frames  # type: ignore[return-value]


@dataclass
class Endpoint:
    """Where a remote controller's server is: its URL and token, and how to give it back."""

    url: str
    token: str
    release: Callable[[], Awaitable[None]]


async def _no_release() -> None:
    return None


async def acquire_endpoint(where: str, gym: str, token: str | None) -> Endpoint:
    """A server for ``gym``: launched (``"subprocess"``, ``"docker"``) or given (a URL)."""
    if where in ("subprocess", "docker"):
        from hud_gym.controllers.remote.launch import DOCKER, SUBPROCESS

        lease = await (SUBPROCESS if where == "subprocess" else DOCKER).acquire(gym)
        return Endpoint(lease.url, lease.token, lease.release)
    assert token is not None
    return Endpoint(where, token, _no_release)


class RemoteController(Controller):
    """A controller that runs in a controller server; see the module docstring.

    Args:
        gym: the gym type (``"browser"``, ``"ubuntu"``, ``"qa"``).
        screen_size: ``(width, height)`` of the screen.
        where: ``"subprocess"``, ``"docker"`` or a ``ws://host:port`` URL.
        token: the server's token (for a URL).
        options: the gym's options as JSON (the env's ``controller_options()``: ``env.options.to_json()``).
        request_timeout: seconds any request may take (the env's own step and reset timeouts are
            usually shorter).

    Setup and evaluate calls are resolved and checked here first (an unknown function fails
    before anything runs), then run on the server, whose controller they need; the server
    returns the instruction a setup function set, and the grade.
    """

    supports_capture_region: ClassVar[bool] = True
    """Forwarded: the server's controller captures the region when it can (``Frame.region`` says)."""

    def __init__(
        self,
        gym: str,
        screen_size: tuple[int, int] = (1280, 720),
        *,
        where: str = "subprocess",
        token: str | None = None,
        options: dict[str, Any] | None = None,
        request_timeout: float = REQUEST_TIMEOUT,
    ) -> None:
        super().__init__(screen_size)
        where, token = check_remote_placement(where, token)
        if where == "local":
            raise ValueError("RemoteController runs a controller elsewhere: where must not be 'local'")
        self.gym = gym  # type: ignore[misc]  # the gym it stands for
        self.where = where
        self.options = dict(options or {})
        self.request_timeout = request_timeout
        self.env_id: str | None = None
        self._token = token
        self._endpoint: Endpoint | None = None
        self._connection: RemoteConnection | None = None
        self._closed = False
        self._shared_frames = SharedFrameReader()
        self._observing = asyncio.Lock()  # one observe in flight: a shared frame is copied before the next

    @property
    def url(self) -> str | None:
        """The server's URL (after :meth:`start`)."""
        return self._endpoint.url if self._endpoint else None

    @property
    def connection(self) -> RemoteConnection | None:
        """The shared connection this controller uses (after :meth:`start`)."""
        return self._connection

    async def _request(self, op: str, timeout: float | None = None, **fields: Any) -> Reply:
        if self._connection is None or self.env_id is None:
            raise ControllerError("the remote controller is not started")
        return await self._connection.request(op, env=self.env_id, timeout=timeout or self.request_timeout, **fields)

    async def start(self) -> None:
        """Get a server (launching one if needed), connect, open this env's controller and start it."""
        self._closed = False
        try:
            self._endpoint = await acquire_endpoint(self.where, self.gym, self._token)
            url, frame_format = _split_url(self._endpoint.url)
            if self.where == "subprocess" and shm_available():
                frame_format = "shm"  # the same machine and user: pixels through /dev/shm
            self._connection = await CONNECTIONS.acquire(url, self._endpoint.token)
            result, _ = await self._connection.request(
                "open",
                gym=self.gym,
                screen_size=list(self.screen_size),
                options=self.options,
                frame_format=frame_format,
                timeout=OPEN_TIMEOUT,
                capture_region=list(self.capture_region) if self.capture_region else None,
            )
            self.env_id = str(result["env"])
            await self._request("start", timeout=START_TIMEOUT)
        except BaseException:
            await self.close()
            raise

    async def reset(self, task: Task | None, seed: int | None) -> None:
        await self._request("reset", task=task.to_dict() if task is not None else None, seed=seed)

    async def step(self, action: CLAAction) -> ActionOutcome:
        result, _ = await self._request("step", action=action.model_dump(mode="json", exclude_none=True))
        return ActionOutcome(response=result.get("response"), info=result.get("info") or {})

    async def observe(self) -> Frame:
        async with self._observing:
            result, frame = await self._request("observe")
            if frame is None:
                raise ControllerError("the controller server answered observe without a frame")
            header, payload = frame
            try:
                if header.format == "shm":
                    pixels = self._shared_frames.read(bytes(payload).decode(), header.width, header.height)
                else:
                    pixels = decode_frame(header, payload)
            except (ProtocolError, ValueError, OSError) as exc:
                raise ControllerError(f"bad frame from the controller server: {exc}") from None
        region = result.get("region")
        return Frame(
            screenshot=pixels,
            text=result.get("text") or "",
            info=result.get("info") or {},
            region=tuple(region) if region else None,
        )

    async def setup(self, calls: Sequence[BoundCall], ctx: FunctionContext) -> list[Any]:
        """Run the setup calls on the server; adopt the instruction and info a setup function set there."""
        if not calls:
            return []
        result, _ = await self._request("setup", calls=[call.config.model_dump(mode="json") for call in calls])
        if result.get("instruction") is not None:
            ctx.instruction = result["instruction"]
        if isinstance(result.get("info"), dict):
            ctx.info.update(result["info"])
        return []

    async def evaluate(self, calls: Sequence[BoundCall], ctx: FunctionContext, combine: str = "mean") -> Grade:
        """Run the evaluate calls on the server with ``ctx.final_response``; return the grade."""
        result, _ = await self._request(
            "evaluate",
            calls=[call.config.model_dump(mode="json") for call in calls],
            final_response=ctx.final_response,
            combine=combine,
        )
        return Grade.model_validate(result["grade"])

    async def health(self) -> bool:
        """True while the connection is up and the server-side controller is healthy."""
        if self._closed or self._connection is None or self._connection.closed:
            return False
        try:
            result, _ = await self._request("health", timeout=CLOSE_TIMEOUT)
        except (ControllerError, asyncio.TimeoutError):
            return False
        return bool(result.get("healthy"))

    async def close(self) -> None:
        """Close the server-side controller and give the connection and the server back. Safe twice."""
        if self._closed:
            return
        self._closed = True
        connection, self._connection = self._connection, None
        endpoint, self._endpoint = self._endpoint, None
        env_id, self.env_id = self.env_id, None
        try:
            if connection is not None:
                try:
                    if env_id is not None and not connection.closed:
                        with contextlib.suppress(Exception):
                            await connection.request("close", env=env_id, timeout=CLOSE_REQUEST_TIMEOUT)
                finally:
                    await CONNECTIONS.release(connection)
        finally:
            self._shared_frames.close()
            if endpoint is not None:
                await endpoint.release()
