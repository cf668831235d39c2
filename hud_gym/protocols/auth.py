"""The token in front of a protocol server's ASGI app (HTTP and WebSocket).

A request must carry the server's token as ``Authorization: Bearer TOKEN``, or as the password
of ``Authorization: Basic`` (what a client sends for a URL ``http://user:TOKEN@host:port``: the
only way OpenEnv's own client, which sets no headers, can present one). The comparison is
constant-time; anything else gets 401 (HTTP) or a refused handshake (WebSocket, 403).
"""

from __future__ import annotations

import base64
import binascii
import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["TokenGate", "presented_token"]

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Awaitable[None]]


def presented_token(header: bytes) -> bytes | None:
    """The token an ``Authorization`` header presents (Bearer, or Basic's password), else ``None``."""
    scheme, _, value = header.strip().partition(b" ")
    if scheme.lower() == b"bearer":
        return value.strip()
    if scheme.lower() == b"basic":
        try:
            decoded = base64.b64decode(value.strip(), validate=True)
        except (binascii.Error, ValueError):
            return None
        return decoded.partition(b":")[2]
    return None


class TokenGate:
    """ASGI middleware: HTTP and WebSocket requests without the token are refused.

    Raises:
        ValueError: an empty token.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token:
            raise ValueError("a protocol server needs a non-empty token")
        self.app = app
        self.token = token.encode()

    def allowed(self, scope: Scope) -> bool:
        """Whether ``scope``'s ``Authorization`` header presents the token."""
        header = dict(scope.get("headers") or []).get(b"authorization", b"")
        token = presented_token(header)
        return token is not None and hmac.compare_digest(token, self.token)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not self.allowed(scope):
            headers = [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")]
            await send({"type": "http.response.start", "status": 401, "headers": headers})
            await send({"type": "http.response.body", "body": b"invalid or missing token\n"})
            return
        if scope["type"] == "websocket" and not self.allowed(scope):
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": 1008})
            return
        await self.app(scope, receive, send)
