"""The env side's connections to controller servers: one authenticated WebSocket per server, shared.

Every env of a process that talks to the same server (same URL and token) shares one
:class:`RemoteConnection` (:data:`CONNECTIONS`), opened by the first and closed with the last; their
requests travel concurrently, matched to their answers by request id (a binary frame, such as
``observe``'s screenshot, comes just before its answer).

Failures: a lost connection (the server died) fails every request in flight with a
:class:`~hud_gym.controllers.base.ControllerError` at once. An error the server reports is raised
as the same error type when it means the same on both sides (:class:`~hud_gym.actions.ActionError`,
:class:`~hud_gym.evaluation.SetupError`, ...), else as a :class:`RemoteError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

from hud_gym.actions import ActionError
from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.remote.protocol import PROTOCOL_VERSION, FrameHeader, ProtocolError, dumps, unpack_frame
from hud_gym.evaluation import FunctionArgumentError, SetupError, UnknownFunctionError

__all__ = [
    "CLOSE_TIMEOUT",
    "CONNECTIONS",
    "MAX_FRAME_BYTES",
    "OPEN_TIMEOUT",
    "REQUEST_TIMEOUT",
    "RemoteConnection",
    "RemoteError",
    "Reply",
]

MAX_FRAME_BYTES = 256 * 2**20
OPEN_TIMEOUT = 15.0
REQUEST_TIMEOUT = 120.0
CLOSE_TIMEOUT = 15.0


class RemoteError(ControllerError):
    """An operation failed on the server side; :attr:`error_type` is the server's error type."""

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message if error_type == "ControllerError" else f"{error_type}: {message}")
        self.error_type = error_type


# Errors that mean the same on both sides are raised as themselves (an ActionError is the agent's
# fault and the episode goes on; a SetupError propagates from reset, as with a local controller).
_SAME_ERRORS: dict[str, Callable[[str], Exception]] = {
    "ActionError": ActionError,
    "SetupError": SetupError,
    "UnknownFunctionError": lambda m: UnknownFunctionError(
        f"{m} (the controller server does not know it: functions registered in this process must also be "
        "registered in the server's: `hud-gym serve GYM --import your.module`, or "
        "HUD_GYM_SERVER_IMPORTS=your.module in the environment of a 'subprocess' or 'docker' controller)"
    ),
    "FunctionArgumentError": FunctionArgumentError,
}


def _remote_error(error: Any) -> Exception:
    if not isinstance(error, dict):
        return RemoteError("BadResponse", f"malformed error frame {error!r}")
    error_type, message = str(error.get("type", "Error")), str(error.get("message", ""))
    same = _SAME_ERRORS.get(error_type)
    return same(message) if same is not None else RemoteError(error_type, message)


Reply = tuple[dict[str, Any], tuple[FrameHeader, memoryview] | None]


class RemoteConnection:
    """One authenticated WebSocket to a controller server, multiplexing the requests of many envs.

    Use :meth:`connect`; then :meth:`request` from the loop that connected.
    """

    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.token = token
        self.users = 0
        self._websocket: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._pending: dict[int, asyncio.Future[Reply]] = {}
        self._frames: dict[int, tuple[FrameHeader, memoryview]] = {}
        self._ids = itertools.count()
        self._lost: str | None = None

    @property
    def closed(self) -> bool:
        """True once the connection is gone (closed by us, or lost)."""
        return self._lost is not None or self._websocket is None

    async def connect(self, timeout: float = OPEN_TIMEOUT) -> None:
        """Open the WebSocket and authenticate.

        Raises:
            ControllerError: the server cannot be reached or refuses the token.
        """
        try:
            self._websocket = await connect(
                self.url,
                compression=None,
                max_size=MAX_FRAME_BYTES,
                proxy=None,
                open_timeout=timeout,
                ping_interval=20,
                ping_timeout=60,
                close_timeout=5,
                max_queue=64,
            )
        except InvalidStatus as exc:
            raise ControllerError(f"the controller server at {self.url} refused the connection: {exc}") from None
        except (OSError, asyncio.TimeoutError, WebSocketException) as exc:
            raise ControllerError(
                f"cannot reach the controller server at {self.url}: {type(exc).__name__}: {exc}"
            ) from None
        websocket = self._websocket
        try:
            await websocket.send(
                dumps({"v": PROTOCOL_VERSION, "id": next(self._ids), "op": "hello", "token": self.token})
            )
            answer = json.loads(await asyncio.wait_for(websocket.recv(), timeout))
        except (ConnectionClosed, asyncio.TimeoutError, ValueError) as exc:
            await websocket.close()
            self._lost = f"handshake failed: {type(exc).__name__}: {exc}"
            raise ControllerError(f"the controller server at {self.url} did not answer hello: {exc}") from None
        if not answer.get("ok"):
            await websocket.close()
            self._lost = "refused"
            message = (answer.get("error") or {}).get("message", answer)
            raise ControllerError(f"the controller server at {self.url} refused us: {message}")
        self._reader = asyncio.ensure_future(self._read(websocket))

    async def _read(self, websocket: ClientConnection) -> None:
        reason = "closed"
        try:
            async for message in websocket:
                if isinstance(message, bytes):
                    try:
                        header, payload = unpack_frame(message)
                    except ProtocolError:
                        continue
                    self._frames[header.request_id] = (header, payload)
                    continue
                try:
                    data = json.loads(message)
                    request_id = data.get("id")
                except (ValueError, AttributeError):
                    continue
                frame = self._frames.pop(request_id, None)
                future = self._pending.pop(request_id, None)
                if future is None or future.done():
                    continue
                if data.get("ok"):
                    future.set_result((data.get("result") or {}, frame))
                else:
                    future.set_exception(_remote_error(data.get("error")))
            reason = f"closed by the server ({websocket.close_code} {websocket.close_reason or ''})".strip()
        except ConnectionClosed as exc:
            reason = f"lost ({exc})"
        except Exception as exc:  # noqa: BLE001  (whatever broke the reader, the connection is unusable)
            reason = f"broken ({type(exc).__name__}: {exc})"
        finally:
            self._fail_all(reason)

    def _fail_all(self, reason: str) -> None:
        if self._lost is None:
            self._lost = reason
        pending, self._pending = self._pending, {}
        self._frames.clear()
        for future in pending.values():
            if not future.done():
                future.set_exception(
                    ControllerError(f"the connection to the controller server at {self.url} was {self._lost}")
                )

    async def request(self, op: str, *, timeout: float = REQUEST_TIMEOUT, **fields: Any) -> Reply:
        """Send one request and wait for its answer: ``(result, frame or None)``.

        Raises:
            ControllerError: the connection is gone, or the server reported a failure
                (:class:`RemoteError`, or the same error type as a local controller would raise).
            asyncio.TimeoutError: no answer within ``timeout`` seconds.
        """
        websocket = self._websocket
        if self._lost is not None or websocket is None:
            raise ControllerError(f"the connection to the controller server at {self.url} was {self._lost or 'closed'}")
        request_id = next(self._ids) % 2**32
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await websocket.send(dumps({"v": PROTOCOL_VERSION, "id": request_id, "op": op, **fields}))
            return await asyncio.wait_for(future, timeout)
        except ConnectionClosed as exc:
            self._fail_all(f"lost ({exc})")
            raise ControllerError(f"the connection to the controller server at {self.url} was lost: {exc}") from None
        finally:
            self._pending.pop(request_id, None)
            self._frames.pop(request_id, None)

    async def close(self) -> None:
        """Close the WebSocket (requests in flight fail)."""
        websocket, self._websocket = self._websocket, None
        if websocket is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(websocket.close(), CLOSE_TIMEOUT)
        if self._reader is not None:
            await asyncio.wait({self._reader}, timeout=CLOSE_TIMEOUT)  # it ends with the socket
        self._fail_all("closed")


class _ConnectionPool:
    """The connections of this process, one per (loop, url, token), shared and refcounted."""

    def __init__(self) -> None:
        self._connections: dict[tuple[int, str, str], RemoteConnection] = {}
        self._locks: dict[tuple[int, str, str], asyncio.Lock] = {}
        self._pid = os.getpid()

    def _key(self, url: str, token: str) -> tuple[int, str, str]:
        if self._pid != os.getpid():  # a forked child: the parent's sockets are not ours
            self._connections, self._locks, self._pid = {}, {}, os.getpid()
        return id(asyncio.get_running_loop()), url, token

    async def acquire(self, url: str, token: str) -> RemoteConnection:
        key = self._key(url, token)
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            connection = self._connections.get(key)
            if connection is None or connection.closed:
                connection = RemoteConnection(url, token)
                await connection.connect()
                self._connections[key] = connection
            connection.users += 1
            return connection

    async def release(self, connection: RemoteConnection) -> None:
        connection.users -= 1
        if connection.users > 0:
            return
        key = self._key(connection.url, connection.token)
        if self._connections.get(key) is connection:
            del self._connections[key]
        await connection.close()


CONNECTIONS = _ConnectionPool()
"""The process's shared connections to controller servers."""
