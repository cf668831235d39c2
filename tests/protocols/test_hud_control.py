"""HUD 0.6's control channel as hud-gym serves it (:mod:`hud_gym.protocols.hud_control`), driven
frame by frame over real TCP against real envs (QA; the MCP tools through the official ``mcp``
SDK's client): the manifest, tasks.list/start/grade/cancel, bye, sessions kept across a dropped
connection and the heartbeat, error grades (``isError``), bad and oversized frames, the per-session
MCP token, tunnel.open, and the loopback-only rule. HUD's own SDK drives it in
tests/agents/test_hud_control_sdk.py."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import failing_functions  # noqa: F401  (registers failing_raises)
import pytest

from hud_gym.protocols.hud_control.catalog import TaskCatalog
from hud_gym.protocols.hud_control.frames import FRAME_LIMIT_BYTES
from hud_gym.protocols.hud_control.server import HudControlServer, check_loopback
from hud_gym.task import Task, TaskSet

pytestmark = pytest.mark.timeout(180)

TASKS = TaskSet(
    tasks=[
        Task(id="france", prompt="What is the capital of France?", gym="qa", target="Paris"),
        Task(id="broken", prompt="Say anything.", gym="qa", evaluate=[("failing_raises",)]),
    ]
)


class Raw:
    """A JSON-RPC client speaking raw frames on one connection."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer, self.ids = reader, writer, 0

    async def send_line(self, data: bytes) -> dict[str, Any] | None:
        self.writer.write(data)
        await self.writer.drain()
        line = await asyncio.wait_for(self.reader.readline(), 120)
        return json.loads(line) if line else None

    async def call(self, method: str, params: Any = None) -> dict[str, Any]:
        self.ids += 1
        frame = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": {} if params is None else params}
        answer = await self.send_line(json.dumps(frame).encode() + b"\n")
        assert answer is not None and answer["id"] == self.ids, answer
        return answer

    def close(self) -> None:
        self.writer.close()


@asynccontextmanager
async def control_server() -> AsyncIterator[tuple[HudControlServer, Callable[[], Awaitable[Raw]]]]:
    server = HudControlServer(TaskCatalog("test", TASKS))
    port = await server.start()
    clients: list[Raw] = []

    async def connect() -> Raw:
        client = Raw(*await asyncio.open_connection("127.0.0.1", port))
        clients.append(client)
        return client

    try:
        yield server, connect
    finally:
        for client in clients:
            client.close()
        await server.stop()


def run(test: Callable[..., Awaitable[None]]) -> Callable[[], None]:
    def wrapper() -> None:
        asyncio.run(test())

    wrapper.__name__ = test.__name__
    return wrapper


@run
async def test_hello_tasks_start_and_grade() -> None:
    async with control_server() as (server, connect):
        client = await connect()
        hello = (await client.call("hello"))["result"]
        assert hello["session_id"].startswith("sess-") and hello["env"]["name"] == "hud-gym/test"
        (tools,) = hello["bindings"]
        assert tools["protocol"] == "mcp/2025-11-25" and tools["url"].startswith("http://127.0.0.1:")
        assert tools["params"]["transport"] == "streamable-http" and len(tools["params"]["auth_token"]) >= 32
        listed = (await client.call("tasks.list"))["result"]["tasks"]
        assert [t["id"] for t in listed] == ["france", "broken"]
        assert listed[0]["description"] == "What is the capital of France?"
        assert set(listed[0]["args"]["properties"]) == {"seed"} and listed[0]["args"]["additionalProperties"] is False
        started = await client.call("tasks.start", {"id": "france", "args": {"seed": 3}})
        assert started["result"] == {"prompt": "What is the capital of France?"}
        graded = (await client.call("tasks.grade", {"answer": "Paris"}))["result"]
        assert graded["score"] == 1.0 and graded["isError"] is False and graded["done"] is True
        assert graded["info"]["status"] == "ok"
        again = await client.call("tasks.grade", {"answer": "Paris"})
        assert again["error"]["code"] == -32600 and "tasks.start" in again["error"]["message"]
        assert (await client.call("tasks.start", {"id": "france"}))["result"]["prompt"]
        wrong = (await client.call("tasks.grade", {"answer": "Lyon"}))["result"]
        assert wrong["score"] == 0.0 and wrong["isError"] is False
        assert (await client.call("bye"))["result"] == {"goodbye": True}
        assert await client.reader.read() == b""
        assert len(server.sessions) == 0


@run
async def test_a_broken_evaluator_is_an_error_grade_never_a_plain_zero() -> None:
    async with control_server() as (_, connect):
        client = await connect()
        await client.call("hello")
        await client.call("tasks.start", {"id": "broken"})
        graded = (await client.call("tasks.grade", {"answer": "x"}))["result"]
        assert graded["isError"] is True and graded["info"]["reward"] is None
        assert graded["info"]["status"] == "eval_error" and "evaluator bug" in graded["content"]


@run
async def test_cancel_ends_the_task_without_a_grade() -> None:
    async with control_server() as (_, connect):
        client = await connect()
        await client.call("hello")
        await client.call("tasks.start", {"id": "france"})
        assert (await client.call("tasks.cancel"))["result"] == {"cancelled": True}
        assert (await client.call("tasks.grade", {"answer": "Paris"}))["error"]["code"] == -32600


@run
async def test_a_session_outlives_a_dropped_connection_and_the_heartbeat_keeps_it() -> None:
    async with control_server() as (server, connect):
        first = await connect()
        session = (await first.call("hello"))["result"]["session_id"]
        beat = (await first.call("hello", {"session_id": session}))["result"]
        assert beat["session_id"] == session  # the client's 120 s heartbeat: the same session
        await first.call("tasks.start", {"id": "france"})
        other = await connect()
        live = await other.call("hello", {"session_id": session})
        assert live["error"]["code"] == -32600 and "live connection" in live["error"]["message"]
        first.close()
        for _ in range(200):
            if not next(iter(server.sessions._sessions.values())).live:
                break
            await asyncio.sleep(0.05)
        resumed = await connect()
        assert (await resumed.call("hello", {"session_id": session}))["result"]["session_id"] == session
        graded = (await resumed.call("tasks.grade", {"answer": "Paris"}))["result"]
        assert graded["score"] == 1.0
        unknown = await resumed.call("hello", {"session_id": "sess-nope"})
        assert unknown["error"]["code"] == -32600 and "unknown session" in unknown["error"]["message"]


@run
async def test_bad_frames_get_errors_and_the_connection_keeps_serving() -> None:
    async with control_server() as (_, connect):
        client = await connect()
        parse = await client.send_line(b"{not json\n")
        assert parse is not None and parse["error"]["code"] == -32700
        assert (await client.call("tasks.start", {"id": "france"}))["error"]["code"] == -32600  # no hello yet
        assert (await client.call("nope"))["error"]["code"] == -32601
        assert (await client.call("tasks.list", [1]))["error"]["code"] == -32600
        await client.call("hello")
        unknown = await client.call("tasks.start", {"id": "x" * 10_000})
        assert unknown["error"]["code"] == -32602 and len(unknown["error"]["message"]) < 1000
        bad_args = await client.call("tasks.start", {"id": "france", "args": {"headless": False}})
        assert bad_args["error"]["code"] == -32602 and "headless" in bad_args["error"]["message"]
        assert (await client.call("tasks.list"))["result"]["tasks"]


@run
async def test_an_oversized_frame_is_answered_once_then_the_connection_ends() -> None:
    async with control_server() as (_, connect):
        client = await connect()
        answer = await client.send_line(b'{"pad": "' + b"x" * (FRAME_LIMIT_BYTES + 10) + b'"}\n')
        assert answer is not None and "exceeds the limit" in answer["error"]["message"]
        assert await asyncio.wait_for(client.reader.read(), 60) == b""


@run
async def test_the_mcp_tools_answer_only_their_sessions_token() -> None:
    import httpx2 as httpx
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with control_server() as (_, connect):
        alice, bob = await connect(), await connect()
        tools_a = (await alice.call("hello"))["result"]["bindings"][0]
        tools_b = (await bob.call("hello"))["result"]["bindings"][0]
        assert tools_a["params"]["auth_token"] != tools_b["params"]["auth_token"]
        await alice.call("tasks.start", {"id": "france"})

        async def call(binding: dict[str, Any], token: str | None, name: str, arguments: dict[str, Any]) -> Any:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            async with httpx.AsyncClient(headers=headers, timeout=120) as http:
                async with streamable_http_client(binding["url"], http_client=http) as (read, write):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        return await session.call_tool(name, arguments)

        token_a = tools_a["params"]["auth_token"]
        typed = await call(tools_a, token_a, "computer", {"action": {"type": "type", "text": "Paris"}})
        report = json.loads(typed.content[0].text)
        assert not typed.is_error and report["status"] == "ok" and typed.content[1].mime_type == "image/png"
        other = await call(tools_b, tools_b["params"]["auth_token"], "screenshot", {})
        assert other.is_error and "start a task" in other.content[0].text  # bob's session, not alice's episode
        with pytest.raises(Exception):  # noqa: B017  (the SDK's task group fails without the token ...)
            await call(tools_a, None, "screenshot", {})
        async with httpx.AsyncClient(timeout=60) as bare:  # ... because the server answers 401
            for headers in ({}, {"Authorization": "Bearer wrong"}):
                answer = await bare.post(
                    tools_a["url"], json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers
                )
                assert answer.status_code == 401, (headers, answer.status_code)
        wrong = await call(tools_a, token_a, "computer", {"action": {"type": "nope"}})
        assert wrong.is_error
        graded = (await alice.call("tasks.grade", {"answer": "Paris"}))["result"]
        assert graded["score"] == 1.0 and graded["isError"] is False


@run
async def test_tunnel_open_relays_only_a_published_capability() -> None:
    async with control_server() as (server, connect):
        stranger = await connect()
        refused = await stranger.send_line(
            b'{"jsonrpc":"2.0","id":1,"method":"tunnel.open","params":{"capability":"ssh"}}\n'
        )
        assert refused is not None and "no capability 'ssh'" in refused["error"]["message"]
        tunnel = await connect()
        opened = await tunnel.send_line(
            b'{"jsonrpc":"2.0","id":1,"method":"tunnel.open","params":{"capability":"tools"}}\n'
        )
        assert opened == {"jsonrpc": "2.0", "id": 1, "result": {"capability": "tools"}}
        tunnel.writer.write(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
        )
        await tunnel.writer.drain()
        response = await asyncio.wait_for(tunnel.reader.read(), 60)
        assert response.startswith(b"HTTP/1.1 401")  # through the tunnel to the MCP tools, which want a token


def test_only_loopback_hosts_are_served() -> None:
    check_loopback("127.0.0.1")
    check_loopback("::1")
    for host in ("0.0.0.0", "192.168.1.5", "example.org"):
        with pytest.raises(ValueError, match="loopback only"):
            check_loopback(host)
