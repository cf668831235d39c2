"""HUD's own SDK drives hud-gym, unchanged: ``hud`` 0.6.21 (in the ``.venv-hud`` overlay that
``make install`` makes: it pins fastmcp and mcp<2 away from the main venv) runs
``hud.Task(...).run(OpenAIChatAgent(...), runtime=hud.Runtime("tcp://127.0.0.1:PORT"))`` against
``hud-gym serve --protocol hud`` in another process, with ``HUD_API_KEY`` unset and telemetry off.
HUD's agent reaches the env's MCP tools through HUD's own ``tunnel.open`` on the control port; the
model is the loopback replay server (each turn reads the step report the tools returned), and the
reward comes from the task's evaluator through ``tasks.grade``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from replay_replies import chat_completion, chat_tool_call
from replay_server import ReplayServer, Request

pytestmark = pytest.mark.timeout(420)

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("hud_sdk_driver.py")
TOOLS = {"computer", "screenshot"}


@pytest.fixture(scope="module")
def hud_python() -> Path:
    venv = Path(sys.prefix)
    for candidate in (venv.parent / f"{venv.name}-hud", ROOT / ".venv-hud"):
        if (candidate / "bin" / "python").exists():
            return candidate / "bin" / "python"
    pytest.skip("no .venv-hud (make install creates it)")


@contextmanager
def served(taskset: str, env_options: dict[str, Any] | None = None) -> Iterator[int]:
    """``hud-gym serve --protocol hud TASKSET`` in its own process group; yields its control port."""
    command = [sys.executable, "-m", "hud_gym.cli", "serve", "--protocol", "hud", taskset]
    if env_options:
        command += [arg for key, value in env_options.items() for arg in ("--option", f"{key}={json.dumps(value)}")]
    server = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    ports: list[int] = []

    def read() -> None:
        assert server.stdout is not None
        for line in server.stdout:
            if line.startswith("HUD_SERVE_PORT="):
                ports.append(int(line.split("=", 1)[1]))
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        reader.join(120)
        assert ports, f"no HUD_SERVE_PORT line; exit {server.poll()}"
        yield ports[0]
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(10)


def run_hud(python: Path, port: int, replay: ReplayServer, env_name: str, task_id: str, seed: int) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "HUD_API_KEY"}
    env.update(HUD_TELEMETRY_ENABLED="false", PYTHONPATH="")
    command = [str(python), str(DRIVER), str(port), replay.url + "/v1", env_name, task_id, str(seed)]
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=360, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_hud_sdk_solves_a_qa_basic_task(hud_python: Path, replay: ReplayServer) -> None:
    replay.script(
        "chat-tools", "capital of France", [chat_tool_call("screenshot", {}), chat_completion("Paris")], tools=TOOLS
    )
    with served("qa-basic") as port:
        run = run_hud(hud_python, port, replay, "hud-gym/qa-basic", "capital-france", 0)
    assert run["reward"] == 1.0 and not run["is_error"], run
    assert run["grade"]["content"] == "all found" and run["grade"]["info"]["status"] == "ok"
    assert (run["status"], run["stop_reason"], run["content"]) == ("completed", "done", "Paris")
    assert run["tool_calls"] == ["screenshot"] and run["tool_errors"] == [False]
    assert run["runtime"] == f"tcp://127.0.0.1:{port}"


def click_the_button(request: Request) -> dict[str, Any]:
    """The model's second turn: the button the first tool result's elements show, clicked at its centre."""
    report = json.loads([m for m in request.body["messages"] if m.get("role") == "tool"][-1]["content"])
    x, y, w, h = next(e["bbox"] for e in report["elements"] if e["tag"] == "button")
    return chat_tool_call(
        "computer", {"action": {"type": "click", "point": {"x": round(x + w / 2), "y": round(y + h / 2)}}}
    )


def test_hud_sdk_solves_miniwob_click_test(hud_python: Path, replay: ReplayServer) -> None:
    pytest.importorskip("playwright")
    look = chat_tool_call("computer", {"action": {"type": "screenshot"}})
    replay.script("chat-tools", "Click the button", [look, click_the_button, chat_completion("done")], tools=TOOLS)
    with served("miniwob", {"elements": True}) as port:
        run = run_hud(hud_python, port, replay, "hud-gym/miniwob", "click-test", 3)
    assert run["reward"] == 1.0 and not run["is_error"], run
    assert run["grade"]["info"]["raw_reward"] == 1.0 and run["grade"]["done"] is True
    assert run["tool_calls"] == ["computer", "computer"] and run["tool_errors"] == [False, False]
    assert run["status"] == "completed"
