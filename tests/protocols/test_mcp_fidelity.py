"""A CLA crosses the MCP protocol and back without loss (a property test over the action space):
the ``act`` tool's JSON arguments, through the real stdio server, are executed by a QA env as
exactly the actions sent (the report's ``actions``, parsed back, equal the originals), whatever
the step's status."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("mcp")

from cla_strategies import cla_actions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp_support import report, stdio_client

from hud_gym.actions import parse_action
from hud_gym.core.step_status import StepStatus

STATUSES = {s.value for s in StepStatus}


class LoopThread:
    """An event loop on a thread holding one MCP client session across hypothesis examples."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Any, timeout: float = 120) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)


@pytest.fixture(scope="module")
def mcp_qa() -> Iterator[tuple[LoopThread, Any]]:
    runner = LoopThread()
    ready: asyncio.Future[Any] = runner.loop.create_future()
    stop = asyncio.Event()

    async def hold() -> None:  # the client is entered and exited in this one task
        try:
            async with stdio_client("qa", "--task", "qa-basic/capital-france") as client:
                ready.set_result(client)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    holder = asyncio.run_coroutine_threadsafe(hold(), runner.loop)

    async def started() -> Any:
        return await ready

    try:
        yield runner, runner.run(started(), 240)
    finally:
        runner.loop.call_soon_threadsafe(stop.set)
        holder.result(120)
        runner.loop.call_soon_threadsafe(runner.loop.stop)
        runner.thread.join(30)


@pytest.mark.timeout(600)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(actions=st.lists(cla_actions, min_size=1, max_size=3))
def test_cla_crosses_mcp_without_loss(mcp_qa: tuple[LoopThread, Any], actions: list[Any]) -> None:
    runner, client = mcp_qa
    sent = [a.model_dump(mode="json", exclude_none=True) for a in actions]

    async def go() -> dict[str, Any]:
        report(await client.call_tool("reset", {"seed": 0}))
        return report(await client.call_tool("act", {"actions": sent}))

    done = runner.run(go())
    assert [parse_action(a) for a in done["actions"]] == actions
    assert done["status"] in STATUSES
    assert done["reward"] is None or isinstance(done["reward"], float)
