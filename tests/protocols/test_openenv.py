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
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_support import serve_args, served_process, taskset_file
from overlay import run_in_overlay

HAS_OPENENV = importlib.util.find_spec("openenv") is not None
TOKEN = "openenv-s3cret"
needs_openenv = pytest.mark.skipif(not HAS_OPENENV, reason="runs in the openenv overlay venv")


@pytest.mark.skipif(HAS_OPENENV, reason="openenv is installed here: the tests below run directly")
@pytest.mark.timeout(1500)
def test_in_the_openenv_overlay_venv() -> None:
    out = run_in_overlay("openenv", Path(__file__), timeout=1450)
    last = out.splitlines()[-1]
    # The 4 tests below ran and passed: nothing failed, nothing skipped.
    assert last.lstrip("= ").startswith("4 passed") and "failed" not in last and "skipped" not in last, out[-2000:]


@contextlib.contextmanager
def openenv_server(tmp_path: Path, *args: str) -> Iterator[str]:
    """``hud-gym serve ARGS --openenv`` on a free loopback port: its base URL with the token. Its
    stderr goes to ``tmp_path / "server.log"``."""
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    command = [sys.executable, *serve_args(*args, "--openenv", "--port", "0", "--token-file", str(token_file))]
    with served_process(command, "HUD_GYM_OPENENV_READY ", log=tmp_path / "server.log") as url:
        yield url


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

    args = (
        "qa",
        "--taskset",
        str(taskset_file(tmp_path)),
        "--import",
        "failing_functions",
        "--option",
        "step_timeout=4",
    )
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
            f"{url}/step",
            json={"action": {"actions": [{"type": "click", "point": "x"}]}},
            auth=("hud", TOKEN),
            timeout=60,
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
    # Sessions the clients closed ended quietly (openenv-core's handler used to log a 4 KiB
    # traceback per session, which filled an unread stderr pipe and hung the server).
    log = (tmp_path / "server.log").read_text(errors="replace")
    assert "Exception in ASGI application" not in log and "WebSocketDisconnect" not in log, log[-3000:]


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


@pytest.fixture(scope="module")
def openenv_qa(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with openenv_server(tmp_path_factory.mktemp("openenv"), "qa", "--task", "qa-basic/capital-france") as url:
        yield url


@needs_openenv
@pytest.mark.timeout(300)
def test_cla_crosses_openenv_without_loss(openenv_qa: str) -> None:
    """A property test over the action space: CLA actions sent with OpenEnv's client are executed
    by the env as exactly the actions sent, whatever the step's status. Every example holds one
    action of every CLA type (and up to 3 more), in one WebSocket session reset per example."""
    from cla_strategies import by_type, cla_actions
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from hud_gym.actions import ActionType, parse_action
    from hud_gym.core.step_status import StepStatus
    from hud_gym.protocols.openenv.client import HudGymEnvClient
    from hud_gym.protocols.openenv.models import HudGymAction

    assert sorted(by_type) == sorted(t.value for t in ActionType)  # the strategies cover the action space
    statuses = {s.value for s in StepStatus}
    env = HudGymEnvClient(base_url=with_token(openenv_qa), connect_timeout_s=60, message_timeout_s=120).sync()

    @settings(max_examples=25, deadline=None)
    @given(every=st.tuples(*by_type.values()), extra=st.lists(cla_actions, max_size=3), data=st.randoms())
    def crosses(every: tuple[Any, ...], extra: list[Any], data: Any) -> None:
        actions = [*every, *extra]
        data.shuffle(actions)
        env.reset(seed=0)
        done = env.step(HudGymAction(actions=actions))
        assert [parse_action(a) for a in done.observation.actions] == actions
        assert done.observation.status in statuses
        assert done.reward is None or isinstance(done.reward, float)

    with env:
        crosses()


@needs_openenv
@pytest.mark.timeout(900)
def test_trl_grpo_through_openenv(tmp_path: Path) -> None:
    """TRL's OpenEnv path: a real ``GRPOTrainer`` (the tiny tool-calling model of the trainer
    tests, 2 steps of 4 rollouts) whose episodes run on hud-gym envs behind the OpenEnv server;
    the rewards it scores are the envs' (a failed grading NaN, never 0)."""
    pytest.importorskip("trl")
    import math

    tests = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(tests), str(tests.parent / "examples")]
    from test_trl_trainer import run_grpo

    from hud_gym.protocols.openenv.trl import openenv_trl_environment

    args = ("qa", "--taskset", str(taskset_file(tmp_path)), "--import", "failing_functions")
    with openenv_server(tmp_path, *args) as url:
        env_cls = openenv_trl_environment(with_token(url))
        # Tool calls after the episode ended keep its grade (they used to step the env, whose
        # episode_over step has reward 0: a right answer's 1.0, or a broken grading's NaN, became 0).
        env = env_cls()
        assert env.reset(task="ok", seed=0) == "Capital of France?"
        env.answer("Paris")
        assert "episode is over" in env.type_text("Lyon") and env.get_reward() == 1.0
        env.reset(task="raises", seed=0)
        env.answer("Paris")
        assert "episode is over" in env.answer("Lyon") and math.isnan(env.get_reward())
        del env
        moves = [("answer", {"text": "Paris"}), ("answer", {"text": "Lyon"}), ("type_text", {"text": "Paris"})]
        rows = [{"task": "ok", "seed": 0}, {"task": "raises", "seed": 0}]
        trainer, seen = run_grpo(env_cls, rows, moves, tmp_path)
        assert {t.__name__ for t in trainer.tools} == {"click", "type_text", "answer"}
        del trainer
    assert len(seen) == 2 and all(len(rewards) == 4 for _, rewards in seen)
    # One epoch over the two rows, 4 rollouts each (a batch may mix the rows): the 4 rollouts of the
    # broken evaluator's task are NaN, the other 4 graded 0 or 1, none a silent 0 for a failure.
    flat = [r for _, rewards in seen for r in rewards]
    assert all(math.isnan(r) or r in (0.0, 1.0) for r in flat), flat
    assert sum(math.isnan(r) for r in flat) == 4 and sum(not math.isnan(r) for r in flat) == 4, flat
    for prompts, _ in seen:
        for prompt in prompts:
            assert prompt[-1]["content"].count("Capital of France?") == 1, prompt
