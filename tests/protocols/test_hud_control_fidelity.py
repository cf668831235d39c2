"""Fidelity of HUD's control channel: any CLA action an agent sends through the ``computer`` MCP
tool reaches the env's step unchanged (a hypothesis property over the action space, every action
type but ``response``, which ends the episode), and a failed step crosses as an error result."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx2 as httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from test_spaces import action_strategy

from hud_gym.actions import ActionType, parse_actions
from hud_gym.protocols.hud_control.catalog import TaskCatalog
from hud_gym.protocols.hud_control.server import HudControlServer
from hud_gym.spaces import ActionSpaceConfig
from hud_gym.task import Task, TaskSet

pytestmark = pytest.mark.timeout(900)

CONFIG = ActionSpaceConfig(max_wait_ms=20, max_delay_ms=20, max_text_length=40)
ACTIONS = st.one_of(*(action_strategy(t, CONFIG) for t in ActionType if t is not ActionType.RESPONSE))


class Seen:
    """An env listener keeping the actions the env's step received."""

    def __init__(self) -> None:
        self.actions: list[Any] = []

    async def on_reset(self, *args: Any) -> None:
        pass

    async def on_step(self, env: Any, action: Any, *rest: Any) -> None:
        self.actions.append(action)

    async def on_close(self, env: Any) -> None:
        pass


class Served:
    """A control server, one started session and one MCP client session, owned by one task on a
    loop thread of their own (the SDK's task groups are entered and left by the same task)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.seen = Seen()
        self.requests: asyncio.Queue[tuple[Any, concurrent.futures.Future[Any]] | None] = asyncio.Queue()
        self.ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self.main = asyncio.run_coroutine_threadsafe(self._main(), self.loop)
        self.ready.result(300)

    def computer(self, action: Any) -> Any:
        """The ``computer`` tool's result for ``action``."""
        answer: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.loop.call_soon_threadsafe(self.requests.put_nowait, (action, answer))
        return answer.result(120)

    async def _main(self) -> None:
        tasks = TaskSet(tasks=[Task(id="t", prompt="Anything.", gym="qa", target="x")])
        server = HudControlServer(TaskCatalog("fidelity", tasks), env_options={"max_steps": 500})
        port = await server.start()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            binding = (await _call(reader, writer, "hello"))["bindings"][0]
            await _call(reader, writer, "tasks.start", {"id": "t", "args": {"seed": 0}})
            env = next(iter(server.sessions._sessions.values())).env
            assert env is not None
            env.listeners.append(self.seen)
            headers = {"Authorization": f"Bearer {binding['params']['auth_token']}"}
            async with httpx.AsyncClient(headers=headers, timeout=120) as http:
                async with streamable_http_client(binding["url"], http_client=http) as (read, write):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        self.ready.set_result(None)
                        while (request := await self.requests.get()) is not None:
                            action, answer = request
                            await _call(reader, writer, "tasks.start", {"id": "t"})  # a fresh episode each
                            answer.set_result(await session.call_tool("computer", {"action": action}))
        finally:
            writer.close()
            await server.stop()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.requests.put_nowait, None)
        self.main.result(120)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)


async def _call(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, method: str, params: dict[str, Any] | None = None
) -> dict[str, Any]:
    frame = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
    writer.write(json.dumps(frame).encode() + b"\n")
    await writer.drain()
    return json.loads(await reader.readline())["result"]


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    served = Served()
    yield served
    served.close()


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(action=ACTIONS)
def test_every_cla_action_reaches_the_env_unchanged(served: Served, action: Any) -> None:
    before = len(served.seen.actions)
    result = served.computer(action.model_dump(mode="json"))
    assert len(served.seen.actions) == before + 1, result
    assert parse_actions(served.seen.actions[-1]) == [action]
    report = json.loads(result.content[0].text)
    assert report["status"] in {"ok", "action_error"} and result.is_error == (
        report["status"] != "ok" or bool(report["error"])
    )


def test_a_failed_action_is_an_error_result(served: Served) -> None:
    result = served.computer({"type": "click", "point": {"x": "left"}})
    assert result.is_error
