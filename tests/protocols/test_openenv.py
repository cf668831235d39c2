"""hud-gym envs behind OpenEnv's server contract (``hud-gym serve --openenv``), stepped by
``openenv-core``'s own client (``EnvClient`` over the ``/ws`` session; its ``GenericEnvClient``
unchanged) and its HTTP endpoints: rewards, statuses, timeouts and errors cross intact, the
token is required, and MiniWoB++'s click-test is solved to reward 1 in real Chromium.

openenv-core pins pillow<13, so it lives in the overlay venv ``.venv-openenv``: run from the main
venv, this module runs itself there (one pytest subprocess).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import importlib.util
import io
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mcp_support import server_env, serve_args, taskset_file
from overlay import run_in_overlay

HAS_OPENENV = importlib.util.find_spec("openenv") is not None
TOKEN = "openenv-s3cret"
needs_openenv = pytest.mark.skipif(not HAS_OPENENV, reason="runs in the openenv overlay venv")


@pytest.mark.skipif(HAS_OPENENV, reason="openenv is installed here: the tests below run directly")
@pytest.mark.timeout(1500)
def test_in_the_openenv_overlay_venv() -> None:
    out = run_in_overlay("openenv", Path(__file__), timeout=1450)
    assert " passed" in out.splitlines()[-1] and "skipped" not in out.splitlines()[-1], out[-2000:]


@contextlib.contextmanager
def openenv_server(tmp_path: Path, *args: str) -> Iterator[str]:
    """``hud-gym serve ARGS --openenv`` on a free loopback port: its base URL with the token."""
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    command = [sys.executable, *serve_args(*args, "--openenv", "--port", "0", "--token-file", str(token_file))]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=server_env())
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith("HUD_GYM_OPENENV_READY "):
            process.kill()
            raise AssertionError(f"the server did not start: {line!r} {process.stderr.read() if process.stderr else ''}")
        yield line.split(" ", 1)[1].strip()
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


def with_token(url: str, token: str = TOKEN) -> str:
    return url.replace("http://", f"http://hud:{token}@")


@needs_openenv
@pytest.mark.timeout(400)
def test_openenv_client_rewards_statuses_and_errors(tmp_path: Path) -> None:
    import httpx
    from openenv.core.generic_client import GenericEnvClient

    from hud_gym.actions import ClickAction, ResponseAction
    from hud_gym.protocols.openenv.client import HudGymEnvClient
    from hud_gym.protocols.openenv.models import HudGymAction, HudGymObservation

    args = ("qa", "--taskset", str(taskset_file(tmp_path)), "--import", "failing_functions", "--option", "step_timeout=4")
    with openenv_server(tmp_path, *args) as url:

        async def main() -> dict[str, Any]:
            seen: dict[str, Any] = {}
            async with HudGymEnvClient(base_url=with_token(url)) as env:
                for task, answer in [("ok", "Paris"), ("ok", "Lyon"), ("raises", "Paris"), ("sleeps", "Paris")]:
                    start = await env.reset(task=task, seed=1)
                    assert (start.reward, start.done, start.observation.status) == (None, False, "ok")
                    assert start.observation.prompt == "Capital of France?"
                    seen[f"{task}-{answer}"] = await env.step(HudGymAction(actions=[ResponseAction(text=answer)]))
                seen["state"] = await env.state()
                await env.reset(task="ok")
                click = HudGymAction(actions=[ClickAction(point={"x": 2, "y": 3}), ResponseAction(text="Paris")])
                seen["two"] = await env.step(click)
            # OpenEnv's own untyped client, unchanged: the contract is plain JSON.
            async with GenericEnvClient(base_url=with_token(url)) as raw:
                await raw.reset(task="ok")
                seen["raw"] = await raw.step({"actions": [{"type": "response", "text": "Paris"}]})
            with pytest.raises(ConnectionError, match="403"):
                async with HudGymEnvClient(base_url=with_token(url, "wrong")) as env:
                    await env.reset()
            return seen

        seen = asyncio.run(main())
        no_token = httpx.post(f"{url}/reset", json={}, timeout=60)
        stateless = httpx.post(
            f"{url}/step", json={"action": {"actions": [{"type": "wait", "time": 1}]}}, auth=("hud", TOKEN), timeout=120
        )
        malformed = httpx.post(
            f"{url}/step", json={"action": {"actions": [{"type": "click", "point": "x"}]}}, auth=("hud", TOKEN), timeout=60
        )
        schema = httpx.get(f"{url}/schema", auth=("hud", TOKEN), timeout=60).json()

    right, wrong, broken, late = (seen[k] for k in ("ok-Paris", "ok-Lyon", "raises-Paris", "sleeps-Paris"))
    assert isinstance(right.observation, HudGymObservation)
    assert (right.reward, right.done, right.observation.status) == (1.0, True, "ok")
    assert (wrong.reward, wrong.observation.status) == (0.0, "ok")  # graded: a real 0
    assert (broken.reward, broken.observation.status) == (None, "eval_error")  # never a 0
    assert "evaluator bug" in broken.observation.error
    assert (late.reward, late.observation.status, late.done) == (None, "timeout", True)
    assert seen["state"].step_count == 1 and seen["state"].task_id == "sleeps"
    assert seen["two"].observation.actions == [
        {"type": "click", "point": {"x": 2, "y": 3}, "button": "left"},
        {"type": "response", "text": "Paris"},
    ]
    png = base64.b64decode(seen["two"].observation.screenshot)
    from PIL import Image

    assert Image.open(io.BytesIO(png)).size == (1280, 720)
    assert (seen["raw"].reward, seen["raw"].observation["status"]) == (1.0, "ok")
    assert no_token.status_code == 401
    assert stateless.status_code == 200 and stateless.json()["reward"] is None
    assert stateless.json()["observation"]["status"] == "no_episode"
    assert malformed.status_code == 422
    assert "actions" in schema["action"]["properties"]


@needs_openenv
@pytest.mark.timeout(400)
def test_openenv_client_solves_miniwob_click_test(tmp_path: Path) -> None:
    from hud_gym.actions import ClickAction
    from hud_gym.protocols.openenv.client import HudGymEnvClient
    from hud_gym.protocols.openenv.models import HudGymAction

    args = ("browser", "--task", "miniwob/click-test", "--option", "elements=true")
    with openenv_server(tmp_path, *args) as url:

        async def main() -> Any:
            async with HudGymEnvClient(base_url=with_token(url), message_timeout_s=180) as env:
                start = await env.reset(seed=3)
                assert start.observation.prompt == "Click the button."
                button = next(e for e in start.observation.info["elements"] if e.get("tag") == "button")
                x, y, w, h = button["bbox"]
                point = {"x": round(x + w / 2), "y": round(y + h / 2)}
                return await env.step(HudGymAction(actions=[ClickAction(point=point)]))

        done = asyncio.run(main())
    assert (done.reward, done.done, done.observation.status) == (1.0, True, "ok")
