"""One control connection: ``hello``, ``tasks.list|start|grade|cancel`` and ``bye``, as HUD 0.6.21's
``HudClient`` sends them (``tunnel.open`` connections are :mod:`.tunnel`'s).

Frames are answered in order. A frame that is not JSON, has no method, or names an unknown one gets
an error frame and the connection keeps serving; an oversized one (:data:`.frames.FRAME_LIMIT_BYTES`)
gets one and ends it. ``hello`` makes the connection's session (or resumes the one whose
``session_id`` it names; the same id again is the client's heartbeat) and returns the manifest:
``session_id``, ``env`` (name, version) and the ``bindings``. The task calls need a ``hello`` first.
A dropped connection parks a session with an open task (:mod:`.sessions`); ``bye`` closes it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from hud_gym.protocols.hud_control import episodes
from hud_gym.protocols.hud_control.catalog import TaskCatalog, UnknownTaskError
from hud_gym.protocols.hud_control.frames import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    SERVER_ERROR,
    FrameError,
    encode_frame,
    error,
    read_frame,
    reply,
)
from hud_gym.protocols.hud_control.sessions import Session, SessionError, SessionTable

__all__ = ["ControlConnection"]

logger = logging.getLogger("hud_gym.protocols.hud_control")


class ControlConnection:
    """See the module docstring. ``manifest(session)`` gives a session's ``hello`` result."""

    def __init__(
        self,
        catalog: TaskCatalog,
        sessions: SessionTable,
        manifest: Callable[[Session], dict[str, Any]],
        env_options: dict[str, Any],
        writer: asyncio.StreamWriter,
    ) -> None:
        self.catalog = catalog
        self.sessions = sessions
        self.manifest = manifest
        self.env_options = env_options
        self.writer = writer
        self.session: Session | None = None

    async def run(self, first: dict[str, Any], reader: asyncio.StreamReader) -> None:
        """Answer ``first`` and every later frame until the peer hangs up or says ``bye``."""
        message: dict[str, Any] | None = first
        try:
            while message is not None:
                if not await self._answer(message):
                    return
                try:
                    message = await read_frame(reader)
                except FrameError as exc:
                    await self._send(error(None, -32700, str(exc)))
                    message = {}
        finally:
            if self.session is not None:
                await self.sessions.release(self.session)

    async def _answer(self, message: dict[str, Any]) -> bool:
        method, msg_id = message.get("method"), message.get("id")
        params = message.get("params") or {}
        if not isinstance(method, str) or not isinstance(params, dict):
            if message:
                await self._error(msg_id, INVALID_REQUEST, "a request needs a string 'method' and object 'params'")
            return True
        try:
            result = await self._dispatch(method, params)
        except (UnknownTaskError, ValueError, SessionError) as exc:
            code = INVALID_REQUEST if isinstance(exc, SessionError) else INVALID_PARAMS
            await self._error(msg_id, code, exc.args[0] if exc.args else str(exc))
            return True
        except episodes.EpisodeError as exc:
            await self._error(msg_id, INVALID_REQUEST, str(exc))
            return True
        except LookupError as exc:
            await self._error(msg_id, METHOD_NOT_FOUND, str(exc.args[0]))
            return True
        except Exception as exc:  # noqa: BLE001  (the env's failure: an error frame, the session kept)
            logger.warning("%s failed: %s: %s", method, type(exc).__name__, exc)
            await self._error(msg_id, SERVER_ERROR, f"{method} failed: {type(exc).__name__}: {exc}")
            return True
        if msg_id is not None:
            await self._send(reply(msg_id, result))
        return method != "bye"

    async def _dispatch(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "hello":
            return await self._hello(params)
        if method == "tasks.list":
            return {"tasks": self.catalog.entries()}
        if method not in ("tasks.start", "tasks.grade", "tasks.cancel", "bye"):
            raise LookupError(f"method not found: {method[:100]}")
        session = self.session
        if session is None:
            raise SessionError(f"{method}: send hello first")
        if method == "tasks.start":
            task_id = params.get("id")
            task = self.catalog.task(task_id)
            args = self.catalog.start_args(params.get("args"))
            return await episodes.start(session, str(task_id), task, args, self.env_options)
        if method == "tasks.grade":
            return await episodes.grade(session, params)
        await episodes.cancel(session)
        if method == "bye":
            self.session = None
            await self.sessions.drop(session)
            return {"goodbye": True}
        return {"cancelled": True}

    async def _hello(self, params: dict[str, Any]) -> dict[str, Any]:
        requested = params.get("session_id")
        if requested is not None and (self.session is None or requested != self.session.id):
            resumed = self.sessions.resume(requested)
            if self.session is not None:
                await self.sessions.release(self.session)
            self.session = resumed
        elif self.session is None:
            self.session = self.sessions.open()
        return self.manifest(self.session)

    async def _error(self, msg_id: Any, code: int, message: str) -> None:
        if msg_id is not None:
            await self._send(error(msg_id, code, message))

    async def _send(self, message: dict[str, Any]) -> None:
        self.writer.write(encode_frame(message))
        await self.writer.drain()
