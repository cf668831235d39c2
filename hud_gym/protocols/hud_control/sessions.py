"""Control sessions: the env and the open task of one HUD client, kept by id across connections.

A session is made by a connection's ``hello``; a later ``hello`` with its id resumes it (a new
connection after a dropped one, or the client's 120 s heartbeat on the live one). A session with a
started, ungraded task outlives its connection (*parked*, for a later connection to grade) for
:data:`PARK_SECONDS`; one with nothing open is closed with its connection. Each session has its own
env and its own bearer token, the one its MCP tools answer to, so a client reaches its own episode
only. At most ``max_sessions`` exist at once: one more ``hello`` is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from hud_gym.core.env import HudEnv
from hud_gym.core.episode import Observation, StepResult
from hud_gym.errors import HudGymError

__all__ = ["DEFAULT_MAX_SESSIONS", "PARK_SECONDS", "Session", "SessionError", "SessionTable"]

DEFAULT_MAX_SESSIONS = 8
"""Sessions (each with its env) one server holds at once."""
PARK_SECONDS = 600.0
"""How long a session with an open task waits for a connection to resume it before it is closed."""


class SessionError(HudGymError, RuntimeError):
    """A ``hello`` that cannot be served: an unknown or live session id, or too many sessions."""


@dataclass(eq=False)
class Session:
    """One client's session: its env, its open task and the last observation."""

    id: str
    token: str
    env: HudEnv | None = None
    task_id: str | None = None
    observation: Observation | None = None
    final: StepResult | None = None
    """The step that ended the episode (graded), once one has."""
    live: bool = False
    parked_since: float | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def has_task(self) -> bool:
        """A task was started and not yet graded or cancelled."""
        return self.task_id is not None

    async def close(self) -> None:
        """Close the env (its browser context, desktop or QA page)."""
        env, self.env, self.task_id = self.env, None, None
        if env is not None:
            with contextlib.suppress(Exception):
                await env.aclose()


class SessionTable:
    """The sessions of one server; see the module docstring."""

    def __init__(self, max_sessions: int = DEFAULT_MAX_SESSIONS, park_seconds: float = PARK_SECONDS) -> None:
        self.max_sessions = max_sessions
        self.park_seconds = park_seconds
        self._sessions: dict[str, Session] = {}

    def __len__(self) -> int:
        return len(self._sessions)

    def open(self) -> Session:
        """A new live session.

        Raises:
            SessionError: the table is full.
        """
        if len(self._sessions) >= self.max_sessions:
            raise SessionError(f"this server holds at most {self.max_sessions} sessions; try again later")
        session = Session(id="sess-" + secrets.token_hex(8), token=secrets.token_urlsafe(32), live=True)
        self._sessions[session.id] = session
        return session

    def resume(self, session_id: Any) -> Session:
        """The parked session ``session_id``, now live.

        Raises:
            SessionError: not a string, no such session, or it has a live connection.
        """
        if not isinstance(session_id, str):
            raise SessionError("hello: 'session_id' must be a string")
        session = self._sessions.get(session_id)
        if session is None:
            raise SessionError(f"unknown session: {session_id[:80]!r}")
        if session.live:
            raise SessionError(f"session {session_id[:80]!r} has a live connection")
        session.live, session.parked_since = True, None
        return session

    def by_token(self, token: str) -> Session | None:
        """The session whose bearer token is ``token`` (compared in constant time)."""
        found = None
        for session in self._sessions.values():
            if hmac.compare_digest(session.token.encode(), token.encode()):
                found = session
        return found

    async def release(self, session: Session) -> None:
        """Its connection ended: park it when a task is open, else close it."""
        session.live = False
        if session.has_task:
            session.parked_since = time.monotonic()
            return
        await self.drop(session)

    async def drop(self, session: Session) -> None:
        """Forget and close ``session``."""
        self._sessions.pop(session.id, None)
        await session.close()

    async def expire(self) -> None:
        """Close the sessions parked for longer than :attr:`park_seconds`."""
        now = time.monotonic()
        stale = [
            s
            for s in self._sessions.values()
            if s.parked_since is not None and now - s.parked_since > self.park_seconds
        ]
        for session in stale:
            await self.drop(session)

    async def close_all(self) -> None:
        """Close every session (the server stops)."""
        for session in list(self._sessions.values()):
            await self.drop(session)
