"""One browser step in this process vs through each protocol a hud-gym env is served over.

``hud/Browser-v0`` at 1280x720 on the ``remote_step`` article page (one ``ClickAction`` on a
button that toggles its colour, so every frame differs), or with ``--gym qa`` ``hud/QA-v0``
(one ``TypeAction``, its 1280x720 screenshot rendered anew), stepped four ways in turn:

- ``local``: ``env.step`` in this process (``controller="local"``);
- ``ws``: the controller in hud-gym's WebSocket controller server (``controller="subprocess"``);
- ``mcp``: the ``act`` tool of ``hud-gym serve browser --mcp --transport http`` (the ``mcp``
  SDK's client; the answer carries the screenshot as a PNG);
- ``openenv``: ``hud-gym serve browser --openenv`` over OpenEnv's ``/ws`` session
  (``openenv-core``'s ``EnvClient``; the observation carries the screenshot as a base64 PNG).

Each server runs in its own process with its own Chromium. Medians over ``--steps`` steps each
(the order rotates every step); ratios are within one run. Target: each protocol <= 1.2x ``ws``.
Run under the OpenEnv overlay venv (``.venv-openenv/bin/python -m benchmarks.protocol_step``);
without ``openenv`` the ``openenv`` column is left out.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import hud_gym
from benchmarks.remote_step import BUTTON, HTML
from hud_gym import Task
from hud_gym.actions import ClickAction, TypeAction

TOKEN = "benchmark-token"
TASKS = {
    "browser": {"id": "article", "prompt": "Toggle", "gym": "hud-browser", "setup": [["load_html_content", HTML]]},
    "qa": {"id": "article", "prompt": "Type a letter at each step.", "gym": "qa", "target": "a"},
}
ACTIONS = {"browser": ClickAction(point={"x": BUTTON[0], "y": BUTTON[1]}), "qa": TypeAction(text="a")}
GYM = {"name": "browser"}


@contextlib.contextmanager
def _server(folder: Path, protocol: str, ready: str) -> Any:
    tasks = folder / "tasks.json"
    tasks.write_text(json.dumps({"id": "bench", "tasks": [TASKS[GYM["name"]]]}))
    (folder / "token").write_text(TOKEN)
    extra = ["--transport", "http"] if protocol == "mcp" else []
    command = [
        sys.executable,
        "-m",
        "hud_gym.cli",
        "serve",
        GYM["name"],
        f"--{protocol}",
        *extra,
        "--taskset",
        str(tasks),
    ]
    command += ["--port", "0", "--token-file", str(folder / "token"), "--option", "max_steps=1000000"]
    command += ["--option", "reset_timeout=600", "--option", "step_timeout=600"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline() if process.stdout else ""
        assert line.startswith(ready), line
        yield line.split(" ", 1)[1].strip()
    finally:
        process.terminate()
        process.wait(60)


@contextlib.asynccontextmanager
async def _mcp(url: str) -> AsyncIterator[Callable[[], Awaitable[None]]]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            assert not (await client.call_tool("setup", {"task": "article", "seed": 0})).is_error
            action = {"actions": ACTIONS[GYM["name"]].model_dump(mode="json", exclude_none=True)}

            async def step() -> None:
                result = await client.call_tool("act", action)
                assert result.structured_content["status"] == "ok", result.structured_content

            yield step


@contextlib.asynccontextmanager
async def _openenv(url: str) -> AsyncIterator[Callable[[], Awaitable[None]]]:
    from hud_gym.protocols.openenv.client import HudGymEnvClient
    from hud_gym.protocols.openenv.models import HudGymAction

    async with HudGymEnvClient(base_url=url.replace("http://", f"http://hud:{TOKEN}@")) as env:
        await env.reset(task="article", seed=0)
        action = HudGymAction(actions=[ACTIONS[GYM["name"]]])

        async def step() -> None:
            result = await env.step(action)
            assert result.observation.status == "ok", result.observation.error

        yield step


def _env_step(controller: str) -> tuple[Any, Callable[[], Awaitable[None]]]:
    name = GYM["name"]
    env = hud_gym.make(
        name, controller=controller, max_steps=1_000_000, reset_timeout=600, step_timeout=600, taskset=[TASKS[name]]
    )
    env.reset(seed=0, options={"task": Task(**TASKS[name])})

    async def step() -> None:
        _, _, _, _, info = await env.unwrapped.astep(ACTIONS[name])
        assert info["status"] == "ok", info

    return env, step


async def _measure(steppers: dict[str, Callable[[], Awaitable[None]]], steps: int) -> dict[str, float]:
    samples: dict[str, list[float]] = {name: [] for name in steppers}
    names = list(steppers)
    for name in names:  # warm-up, not counted
        for _ in range(3):
            await steppers[name]()
    for i in range(steps):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            started = time.perf_counter()
            await steppers[name]()
            samples[name].append((time.perf_counter() - started) * 1000)
    medians = {name: statistics.median(values) for name, values in samples.items()}
    for name in names:
        if name not in ("local", "ws"):
            medians[f"{name}/ws"] = medians[name] / medians["ws"]
    return medians


def run(steps: int = 40) -> dict[str, float]:
    """Median ms per step of each way, and each protocol's ratio to ``ws``."""
    with contextlib.ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        (folder / "m").mkdir()
        mcp_url = stack.enter_context(_server(folder / "m", "mcp", "HUD_GYM_MCP_READY "))
        openenv_url = None
        if importlib.util.find_spec("openenv") is not None:
            (folder / "o").mkdir()
            openenv_url = stack.enter_context(_server(folder / "o", "openenv", "HUD_GYM_OPENENV_READY "))
        local, local_step = _env_step("local")
        stack.callback(local.close)
        remote, ws_step = _env_step("subprocess")
        stack.callback(remote.close)

        async def main() -> dict[str, float]:
            async with contextlib.AsyncExitStack() as clients:
                steppers = {"local": local_step, "ws": ws_step, "mcp": await clients.enter_async_context(_mcp(mcp_url))}
                if openenv_url:
                    steppers["openenv"] = await clients.enter_async_context(_openenv(openenv_url))
                return await _measure(steppers, steps)

        return asyncio.run(main())


def main(argv: list[str] | None = None) -> None:
    """Print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--gym", choices=sorted(TASKS), default="browser")
    args = parser.parse_args(argv)
    GYM["name"] = args.gym
    for key, value in run(args.steps).items():
        print(f"{key:>12}: {value:8.2f}" + ("x" if "/" in key else " ms"))


if __name__ == "__main__":
    main()
