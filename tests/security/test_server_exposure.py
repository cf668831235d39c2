"""Issue 11, item 3: what a controller server exposes to its clients and to the other users of
its machine.

- An untrusted ``browser`` server (no ``--trust-client-options``), as a token holder drives it: a
  task's ``setup goto file:///etc/shadow`` is refused (no grade quotes the file), so is the agent's
  ``goto``, and so is a client's ``allow_file_urls``.
- The token is never on a command line (``/proc/PID/cmdline`` is world-readable): ``--token`` is
  refused with an error that says why; ``--token-file`` and ``$HUD_GYM_SERVER_TOKEN`` work, and
  the variable is not passed on to the browser the server starts.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from controller_servers import SERVER_MODULE, TOKEN, ServerProcess

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym.actions import CustomAction
from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.remote.server import READY_PREFIX, TOKEN_ENV_VAR
from hud_gym.evaluation import SetupError
from hud_gym.task import Task

pytestmark = pytest.mark.timeout(120)

REPO = Path(__file__).resolve().parents[2]
HUD_GYM = Path(sys.executable).with_name("hud-gym")
SHADOW = Path("/etc/shadow")


@pytest.fixture(scope="module")
def browser_server() -> Iterator[ServerProcess]:
    """``python -m hud_gym.controllers.remote.server browser``, trusting no client option."""
    server = ServerProcess("browser")
    yield server
    server.stop()


def shadow_marker() -> str:
    try:
        return SHADOW.read_text().splitlines()[0]
    except (OSError, IndexError):
        pytest.skip("no readable /etc/shadow on this machine")


def test_an_untrusted_browser_server_gives_no_host_file(
    browser_server: ServerProcess, make_env: Callable[..., Any]
) -> None:
    marker = shadow_marker()
    task = Task(
        id="steal-shadow",
        prompt="x",
        gym="hud-browser",
        setup=[("goto", "file:///etc/shadow")],
        evaluate=("text_matches", "body", "(?s).*"),
    )
    env = make_env("hud/Browser-v0", controller=browser_server.url, controller_token=TOKEN)
    with pytest.raises(SetupError, match="refused") as refused:
        env.reset(options={"task": task})
    assert marker not in str(refused.value)

    grading = Task(id="grade-page", prompt="x", gym="hud-browser", evaluate=("text_matches", "body", "(?s).*"))
    env.reset(options={"task": grading})
    observation, _, _, _, info = env.step(CustomAction(action="goto", args={"url": "file:///etc/shadow"}))
    assert info["status"] == "action_error" and "refused" in info["action_error"], info
    grade = env.unwrapped.evaluate()
    assert marker not in (grade.content or "") and marker not in observation["text"]

    reaching = make_env("hud/Browser-v0", controller=browser_server.url, controller_token=TOKEN, allow_file_urls="/etc")
    with pytest.raises(ControllerError, match="allow_file_urls.*--trust-client-options"):
        reaching.reset()


def test_the_token_is_not_on_the_command_line_nor_passed_to_the_browser(
    browser_server: ServerProcess, make_env: Callable[..., Any]
) -> None:
    env = make_env("hud/Browser-v0", controller=browser_server.url, controller_token=TOKEN)
    env.reset()  # the server starts its Chromium
    server = psutil.Process(browser_server.process.pid)
    assert TOKEN not in "\0".join(server.cmdline())
    assert Path(f"/proc/{server.pid}/cmdline").read_bytes().find(TOKEN.encode()) == -1
    children = server.children(recursive=True)
    assert any("chrom" in " ".join(p.cmdline()) for p in children), "the server's Chromium is not running"
    for child in children:
        assert TOKEN_ENV_VAR not in child.environ(), f"{child.name()} ({child.pid}) inherited the token"


def _start(command: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True
    )


def _stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


def test_a_token_file_serves_and_stays_off_the_command_line(tmp_path: Path, make_env: Callable[..., Any]) -> None:
    token = "token-from-a-file-5b2e"
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n")
    token_file.chmod(0o600)
    env_vars = {k: v for k, v in os.environ.items() if k != TOKEN_ENV_VAR}
    # As a container runs it: docker/entrypoint.sh accepts a --token-file instead of the variable.
    process = _start(
        [
            "bash",
            str(REPO / "docker" / "entrypoint.sh"),
            sys.executable,
            "-m",
            SERVER_MODULE,
            "qa",
            "--port",
            "0",
            "--token-file",
            str(token_file),
        ],
        env_vars,
    )
    try:
        assert process.stdout is not None
        url = next(
            (line[len(READY_PREFIX) :].strip() for line in process.stdout if line.startswith(READY_PREFIX)), None
        )
        assert url, process.stderr.read() if process.stderr else ""
        assert token.encode() not in Path(f"/proc/{process.pid}/cmdline").read_bytes()
        env = make_env("hud/QA-v0", task="qa-basic/capital-france", controller=url, controller_token=token)
        env.reset(seed=0)
        _, reward, _, _, _ = env.step({"type": "response", "text": "Paris"})
        assert reward == 1.0
    finally:
        _stop(process)


@pytest.mark.parametrize("how", ["module", "cli"])
def test_a_token_on_the_command_line_is_refused(how: str) -> None:
    command = [sys.executable, "-m", SERVER_MODULE, "qa"] if how == "module" else [str(HUD_GYM), "serve", "qa"]
    process = _start([*command, "--port", "0", "--token", "visible-to-everyone"], dict(os.environ))
    try:
        _, stderr = process.communicate(timeout=60)
    finally:
        _stop(process)
    assert process.returncode == 2, stderr
    assert "--token-file" in stderr and "/proc/PID/cmdline" in stderr and TOKEN_ENV_VAR in stderr
