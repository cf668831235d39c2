"""``hud-gym serve --mcp``: an env as an MCP server, driven by the ``mcp`` SDK's own client over
stdio and streamable HTTP (the server is the real CLI in its own process, on real QA envs).

Rewards cross intact (a wrong answer is a graded 0, a broken evaluator ``null`` with
``eval_error``, a grading past the step's timeout ``null`` with ``timeout``), and what a client
sends is untrusted: task paths, oversized strings, unknown actions and missing tokens are refused.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp_support import error_text, http_client, http_server, report, stdio_client, taskset_file

from hud_gym.bounds import STRING_CHARS
from hud_gym.protocols.mcp import TOOL_NAMES

pytestmark = pytest.mark.timeout(240)


def test_stdio_rewards_and_statuses_cross_intact(tmp_path: Path) -> None:
    args = ("qa", "--taskset", str(taskset_file(tmp_path)), "--import", "failing_functions")

    async def main() -> list[dict]:
        out = []
        async with stdio_client(*args, "--option", "step_timeout=4") as client:
            assert sorted(t.name for t in (await client.list_tools()).tools) == sorted(TOOL_NAMES)
            for task, answer in [("ok", "Paris"), ("ok", "Lyon"), ("raises", "Paris"), ("sleeps", "Paris")]:
                start = report(await client.call_tool("setup", {"task": task, "seed": 1}))
                assert start["status"] == "ok" and start["prompt"] == "Capital of France?" and start["task_id"] == task
                out.append(report(await client.call_tool("response", {"text": answer})))
            await client.call_tool("setup", {"task": "ok"})
            out.append(report(await client.call_tool("evaluate", {})))
        return out

    right, wrong, broken, late, graded_now = asyncio.run(main())
    assert (right["reward"], right["status"], right["terminated"]) == (1.0, "ok", True)
    assert right["actions"] == [{"type": "response", "text": "Paris"}]
    assert (wrong["reward"], wrong["status"]) == (0.0, "ok")  # graded: a real 0
    assert (broken["reward"], broken["status"]) == (None, "eval_error")  # never a 0 for a failed grade
    assert "evaluator bug" in broken["error"]
    assert (late["reward"], late["status"]) == (None, "timeout")
    assert late["truncated"] or late["terminated"]
    assert (graded_now["reward"], graded_now["status"]) == (0.0, "ok")  # no answer yet: graded 0


def test_stdio_refuses_what_a_client_must_not_do(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text('{"tasks": [{"id": "x", "prompt": "p", "gym": "qa"}]}')

    async def main() -> dict[str, str]:
        async with stdio_client("qa", "--task", "qa-basic/capital-france") as client:
            seen = {"before": error_text(await client.call_tool("response", {"text": "Paris"}))}
            seen["path"] = error_text(await client.call_tool("setup", {"task": f"{secret}/x"}))
            seen["long"] = error_text(await client.call_tool("setup", {"task": "a" * 600}))
            seen["gym"] = error_text(await client.call_tool("setup", {"task": "miniwob/click-test"}))
            report(await client.call_tool("reset", {"seed": 0}))
            seen["text"] = error_text(await client.call_tool("response", {"text": "x" * (STRING_CHARS + 1)}))
            seen["action"] = error_text(await client.call_tool("computer", {"action": "format_disk"}))
            seen["cla"] = error_text(await client.call_tool("act", {"actions": {"type": "click", "point": "nowhere"}}))
            # The episode is still open and answers: the refusals did not step it.
            done = report(await client.call_tool("computer", {"action": "response", "text": "Paris"}))
            seen["reward"] = str(done["reward"])
        return seen

    seen = asyncio.run(main())
    assert "reset" in seen["before"].lower()
    assert "no task" in seen["path"] and str(tmp_path) in seen["path"]
    assert "600" in seen["long"] or "at most" in seen["long"]
    assert "this server serves the qa gym" in seen["gym"]
    assert "65536" in seen["text"] or "at most" in seen["text"]
    assert "format_disk" in seen["action"]
    assert "point" in seen["cla"]
    assert seen["reward"] == "1.0"


def test_http_needs_the_token_and_serves_a_registered_task(tmp_path: Path) -> None:
    import httpx2

    with http_server(tmp_path, "qa") as url:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic s3cret-token"}):
            answer = httpx2.post(url, json=hello, headers=headers, timeout=30)
            assert answer.status_code == 401, (headers, answer.status_code)

        async def main() -> tuple[dict, dict, str]:
            async with http_client(url) as client:
                start = report(await client.call_tool("setup", {"task": "qa-basic/capital-france"}))
                done = report(await client.call_tool("openai_computer", {"type": "response", "text": "Paris"}))
                shot = await client.call_tool("screenshot", {})
                return start, done, shot.content[1].mime_type

        start, done, mime = asyncio.run(main())
    assert start["prompt"] == "What is the capital of France?"
    assert (done["reward"], done["status"]) == (1.0, "ok")
    assert mime == "image/png"
