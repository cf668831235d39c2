"""Run one task of a ``hud-gym serve --protocol hud`` server with HUD's own SDK, unchanged.

Runs under the ``.venv-hud`` overlay's python (``hud`` 0.6.21): ``hud.Task(...).run(agent,
runtime=hud.Runtime("tcp://127.0.0.1:PORT"))`` with HUD's ``OpenAIChatAgent`` pointed at the replay
model server. Prints one JSON line: the run's reward, grade, trace status and the MCP tools HUD saw.

Usage: python hud_sdk_driver.py CONTROL_PORT MODEL_BASE_URL ENV_NAME TASK_ID SEED
"""

from __future__ import annotations

import asyncio
import json
import os
import sys


async def main(port: int, base_url: str, env_name: str, task_id: str, seed: int) -> dict[str, object]:
    import hud
    from hud.agents.openai_compatible import OpenAIChatAgent
    from hud.agents.types import OpenAIChatConfig, ToolStep

    assert "HUD_API_KEY" not in os.environ, "the SDK must run without a HUD key"
    agent = OpenAIChatAgent(OpenAIChatConfig(model="vlm-test", base_url=base_url, api_key="test-key", max_steps=8))
    task = hud.Task(env=env_name, id=task_id, args={"seed": seed})
    job = await task.run(agent, runtime=hud.Runtime(f"tcp://127.0.0.1:{port}"))
    run = job.runs[0]
    tool_steps = [s for s in run.trace.steps if isinstance(s, ToolStep)]
    return {
        "reward": run.reward,
        "is_error": run.grade.is_error,
        "grade": run.grade.raw,
        "status": run.trace.status,
        "stop_reason": run.trace.stop_reason,
        "content": run.trace.content,
        "tool_calls": [s.call.name for s in tool_steps],
        "tool_errors": [bool(s.result.isError) for s in tool_steps],
        "runtime": run.runtime,
    }


if __name__ == "__main__":
    port, base_url, env_name, task_id, seed = sys.argv[1:6]
    result = asyncio.run(main(int(port), base_url, env_name, task_id, int(seed)))
    print(json.dumps(result, default=str))
