"""The ``mcp`` capability of a HUD control channel: a session's env as MCP tools over streamable HTTP.

The minimal tool set HUD's agents drive (the official ``mcp`` SDK's low-level server; the full
MCP server of :mod:`hud_gym.protocols.mcp` can replace it behind the same capability):

- ``computer {action}``: one CLA action (a dict such as ``{"type": "click", "point": {"x": 10,
  "y": 20}}``, or a list of them; points in observation pixels) stepped in the session's env; the
  result is the new screenshot (PNG) and a JSON text of the step: ``status``, ``reward``,
  ``terminated``, ``truncated``, ``error``, and the page's ``elements`` when the env reports them.
  A step that failed is an error result (``isError``) naming its status.
- ``screenshot``: the last observation, without a step.

Every request needs ``Authorization: Bearer <session token>`` (the binding's ``auth_token``, one
per session): the token picks the session, so a client reaches its own episode only. Requests over
:data:`MAX_REQUEST_BYTES` are refused by the SDK; the server binds loopback and checks ``Host``
(DNS rebinding).
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
from collections.abc import Awaitable, Callable
from typing import Any

import mcp.types as types
import numpy as np
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from PIL import Image

from hud_gym.bounds import bound
from hud_gym.protocols.hud_control.episodes import act
from hud_gym.protocols.hud_control.sessions import Session, SessionTable
from hud_gym.rewards import graded_reward

__all__ = ["MAX_REQUEST_BYTES", "McpTools", "TOOLS"]

MAX_REQUEST_BYTES = 4 * 2**20
"""Largest MCP request body accepted (bytes)."""
_ACTION_SCHEMA = {"anyOf": [{"type": "object"}, {"type": "array", "items": {"type": "object"}, "maxItems": 64}]}
TOOLS = [
    types.Tool(
        name="computer",
        description=(
            "Act on the screen with one hud-gym CLA action, or a list of them: "
            '{"type": "click", "point": {"x": X, "y": Y}}, {"type": "type", "text": "..."}, '
            '{"type": "press", "keys": ["ctrl", "a"]}, {"type": "scroll", ...}, {"type": "move", ...}, '
            '{"type": "drag", ...}, {"type": "wait", "time": MS}, {"type": "custom", "action": NAME, "args": {...}}. '
            "Points are in screenshot pixels. Returns the new screenshot and the step's status."
        ),
        input_schema={
            "type": "object",
            "properties": {"action": {**_ACTION_SCHEMA, "description": "A CLA action or a list of them."}},
            "required": ["action"],
            "additionalProperties": False,
        },
    ),
    types.Tool(
        name="screenshot",
        description="The current screenshot (no action).",
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
    ),
]
"""The tools every session offers."""

Asgi = Callable[[dict[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]


class McpTools:
    """The MCP server of one control channel; :meth:`asgi` is its app, run inside :meth:`run`."""

    def __init__(self, sessions: SessionTable) -> None:
        self.sessions = sessions
        self.server: Server[Any] = Server("hud-gym", on_list_tools=self._list_tools, on_call_tool=self._call_tool)
        self.manager = StreamableHTTPSessionManager(
            app=self.server,
            json_response=True,
            stateless=True,
            security_settings=TransportSecuritySettings(
                enable_dns_rebinding_protection=True,
                allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
                allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
            ),
            max_request_body_size=MAX_REQUEST_BYTES,
        )

    def run(self) -> Any:
        """The SDK's session manager context (enter it before serving :meth:`asgi`)."""
        return self.manager.run()

    async def asgi(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """The ASGI app: a request without a session's bearer token gets 401."""
        if scope["type"] != "http":
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or self.sessions.by_token(token.strip()) is None:
            await send({"type": "http.response.start", "status": 401, "headers": [(b"www-authenticate", b"Bearer")]})
            await send({"type": "http.response.body", "body": b"a session's bearer token is required\n"})
            return
        await self.manager.handle_request(scope, receive, send)

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        """One tool call; a refused or failed call is an error result naming why."""
        try:
            return await self._run_tool(self._session(ctx), params.name, dict(params.arguments or {}))
        except Exception as exc:  # noqa: BLE001  (reported to the client as the tool's error, bounded)
            text = bound(f"{type(exc).__name__}: {exc}")[0]
            return types.CallToolResult(content=[types.TextContent(type="text", text=str(text))], is_error=True)

    async def _run_tool(self, session: Session, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        if name == "screenshot":
            if session.observation is None:
                raise RuntimeError("no observation yet: start a task first")
            return types.CallToolResult(content=[await _image(session.observation["screenshot"])], is_error=False)
        if name != "computer":
            raise ValueError(f"unknown tool {name!r}")
        if "action" not in arguments:
            raise ValueError("the computer tool takes {'action': ...}")
        observation, step_reward, terminated, truncated, info = await act(session, arguments["action"])
        reward = graded_reward(step_reward)  # the env's absent reward (NaN) is JSON null here
        report = {
            "status": info.get("status"),
            "reward": reward,
            "terminated": terminated,
            "truncated": truncated,
            "error": info.get("error") or info.get("action_error"),
        }
        if "elements" in info:
            report["elements"] = info["elements"]
        text = json.dumps(bound(report)[0], default=str)
        failed = reward is None or bool(info.get("action_error"))
        content: list[Any] = [types.TextContent(type="text", text=text), await _image(observation["screenshot"])]
        return types.CallToolResult(content=content, is_error=failed)

    def _session(self, ctx: Any) -> Session:
        request = getattr(ctx, "request", None)
        header = request.headers.get("authorization", "") if request is not None else ""
        session = self.sessions.by_token(header.partition(" ")[2].strip())
        if session is None:
            raise PermissionError("no session for this token")
        return session


async def _image(screenshot: np.ndarray) -> types.ImageContent:
    def encode() -> str:
        buffer = io.BytesIO()
        Image.fromarray(screenshot).save(buffer, format="PNG")
        return base64.b64encode(buffer.getvalue()).decode("ascii")

    return types.ImageContent(type="image", data=await asyncio.to_thread(encode), mime_type="image/png")
