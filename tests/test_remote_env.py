"""Envs whose controller runs elsewhere: ``controller="subprocess"``, an explicit ``ws://`` server,
``"docker"`` without an engine, a vector env over one server, and a server killed mid-episode."""

from __future__ import annotations

import math
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import psutil
import pytest
from controller_servers import TOKEN, ServerProcess, running_servers

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym import CustomAction, ResponseAction, Task, TypeAction, evaluate_function
from hud_gym.actions import ClickAction
from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.remote.client import RemoteController
from hud_gym.controllers.remote.launch import SUBPROCESS
from hud_gym.controllers.remote.shm import PREFIX, SHM_DIR
from hud_gym.evaluation import FunctionContext
from hud_gym.rewards import graded_reward


def _frame_files() -> set[str]:
    return {p.name for p in SHM_DIR.glob(f"{PREFIX}*")} if SHM_DIR.is_dir() else set()


@pytest.fixture(autouse=True)
def no_leaks() -> Iterator[None]:
    """Every test leaves no controller server process and no shared frame file behind."""
    frames_before = _frame_files()
    yield
    leaked = running_servers()
    assert not leaked, f"leaked controller servers: {[p.pid for p in leaked]}"
    assert _frame_files() <= frames_before


@pytest.fixture
def start_server() -> Iterator[Callable[..., ServerProcess]]:
    started: list[ServerProcess] = []

    def start(gym: str, port: int = 0) -> ServerProcess:
        server = ServerProcess(gym, port)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


QA_TASK = Task(
    prompt="What is the capital of France?",
    setup=[("show_passage", "Paris is the capital.")],
    evaluate=("response_includes", "Paris"),
    gym="qa",
)


def _qa_episode(env: gymnasium.Env) -> list[np.ndarray]:
    shots = []
    obs, info = env.reset(seed=5)
    assert info["status"] == "ok"
    shots.append(obs["screenshot"])
    obs, reward, terminated, _, info = env.step(TypeAction(text="Par"))
    assert info["status"] == "ok" and not terminated and "Answer so far: Par" in obs["text"]
    shots.append(obs["screenshot"])
    obs, reward, terminated, _, info = env.step({"type": "custom", "action": "explode"})
    assert info["status"] == "action_error" and "explode" in info["action_error"] and not terminated
    obs, reward, terminated, _, info = env.step(ResponseAction(text="Paris"))
    assert terminated and reward == 1.0 and info["grade"].content == "all found"
    return shots


# ----------------------------------------------------------------------------- QA


def test_qa_through_a_subprocess_sees_what_a_local_env_sees(make_env: Callable[..., Any]) -> None:
    local = make_env("hud/QA-v0", task=QA_TASK, screen_size=(640, 400))
    remote = make_env("hud/QA-v0", task=QA_TASK, screen_size=(640, 400), controller="subprocess")
    for mine, theirs in zip(_qa_episode(local), _qa_episode(remote), strict=True):
        np.testing.assert_array_equal(mine, theirs)
    controller = remote.unwrapped.controller
    assert isinstance(controller, RemoteController) and controller.url.startswith("ws://127.0.0.1:")
    assert len(running_servers()) == 1
    remote.close()
    assert not running_servers()  # the last env's close stopped the server


def test_qa_through_an_explicit_server(
    make_env: Callable[..., Any], start_server: Callable[..., ServerProcess]
) -> None:
    server = start_server("qa")
    env = make_env("hud/QA-v0", task=QA_TASK, controller=server.url, controller_token=TOKEN)
    _qa_episode(env)
    wrong = make_env("hud/QA-v0", task=QA_TASK, controller=server.url, controller_token="not-the-token")
    with pytest.raises(ControllerError, match="invalid token"):
        wrong.reset(seed=0)


def test_functions_unknown_to_the_server_are_reported(make_env: Callable[..., Any]) -> None:
    @evaluate_function("qa", name="only_in_this_process")
    def only_in_this_process(ctx: FunctionContext) -> float:
        return 1.0

    env = make_env(
        "hud/QA-v0", task=Task(prompt="Q", evaluate="only_in_this_process", gym="qa"), controller="subprocess"
    )
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(ResponseAction(text="A"))
    assert terminated and math.isnan(reward) and info["status"] == "eval_error" and info["grade"].is_error
    assert "only_in_this_process" in info["grade"].content and "--import" in info["grade"].content


def test_functions_of_your_modules_reach_a_subprocess_server(
    make_env: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import remote_functions  # noqa: F401  (registers the function in this process too)

    tests_dir = str(Path(__file__).parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [tests_dir, os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("HUD_GYM_SERVER_IMPORTS", "remote_functions")
    task = Task(prompt="Say four letters.", evaluate=("remote_test_answer_length", 4), gym="qa")
    env = make_env("hud/QA-v0", task=task, controller="subprocess")
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(ResponseAction(text="abcd"))
    assert terminated and reward == 1.0 and not info["grade"].is_error, info["grade"]


def test_a_server_that_dies_during_the_evaluation_is_an_env_error(
    make_env: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by the fault-injection suite: a server killed while it graded was an ``eval_error``,
    as if the evaluator had failed."""
    import remote_functions  # noqa: F401  (registers the function in this process too)

    tests_dir = str(Path(__file__).parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [tests_dir, os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("HUD_GYM_SERVER_IMPORTS", "remote_functions")
    env = make_env(
        "hud/QA-v0", task=Task(prompt="Q", evaluate="remote_test_kill_server", gym="qa"), controller="subprocess"
    )
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(ResponseAction(text="A"))
    assert (info["status"], graded_reward(reward), terminated) == ("env_error", None, True), info
    assert "the controller failed during the evaluation" in info["error"]
    _, info = env.reset(seed=0)
    assert info["status"] == "ok"


# ----------------------------------------------------------------------------- browser


def _browser_episode(env: gymnasium.Env, site: str) -> None:
    task = Task(
        prompt="Type hello in the box.",
        setup=[("goto", f"{site}/input.html")],
        evaluate=("text_matches", "#text", "^hello$"),
        gym="hud-browser",
    )
    obs, info = env.reset(seed=0, options={"task": task})
    assert info["status"] == "ok" and info["title"] == "Input fixture" and info["url"].endswith("/input.html")
    before = obs["screenshot"]
    obs, _, _, _, info = env.step([ClickAction(point=(170, 92)), TypeAction(text="hello")])
    assert info["status"] == "ok"
    assert obs["screenshot"].shape == (720, 1280, 3) and not np.array_equal(obs["screenshot"], before)
    obs, _, _, _, info = env.step(CustomAction(action="no_such_action"))
    assert info["status"] == "action_error" and "no_such_action" in info["action_error"]
    _, reward, terminated, _, info = env.step(ResponseAction(text="done"))
    assert terminated and reward == 1.0, info["grade"]


def test_browser_through_a_subprocess(make_env: Callable[..., Any], site: str) -> None:
    env = make_env("hud/Browser-v0", controller="subprocess")
    _browser_episode(env, site)


def test_browser_through_an_explicit_server(
    make_env: Callable[..., Any], site: str, start_server: Callable[..., ServerProcess]
) -> None:
    server = start_server("browser")
    env = make_env("hud/Browser-v0", controller=server.url, controller_token=TOKEN, elements=True)
    _browser_episode(env, site)


def test_browser_crop_is_captured_on_the_server(make_env: Callable[..., Any], site: str) -> None:
    env = make_env("hud/Browser-v0", observation_crop=(20, 10, 400, 200), controller="subprocess")
    obs, info = env.reset(seed=0, options={"task": Task(prompt="p", setup=[("goto", f"{site}/input.html")])})
    assert info["status"] == "ok" and obs["screenshot"].shape == (200, 400, 3)
    assert env.unwrapped.controller.capture_region == (20, 10, 400, 200)
    # The server captured just the region: the frame that crossed is 400x200, not the screen.
    frame = env.unwrapped._runner.run(env.unwrapped.controller.observe())
    assert frame.region == (20, 10, 400, 200) and frame.screenshot.shape == (200, 400, 3)


@pytest.mark.timeout(240)
def test_vector_env_multiplexes_envs_over_one_server(site: str) -> None:
    envs = gymnasium.make_vec("hud/Browser-v0", num_envs=4, controller="subprocess")
    try:
        task = {"prompt": "p", "setup": [["goto", f"{site}/input.html"]]}
        obs, infos = envs.reset(seed=0, options={"task": task})
        assert obs["screenshot"].shape == (4, 720, 1280, 3)
        obs, _, _, _, infos = envs.step([{"type": "type", "text": "x"}] * 4)
        assert list(infos["status"]) == ["ok"] * 4
        controllers = [env.controller for env in envs.unwrapped.envs]
        assert len({c.connection for c in controllers}) == 1  # one WebSocket for the four envs
        assert len({c.env_id for c in controllers}) == 4
        assert len(running_servers()) == 1
        server = SUBPROCESS.server("browser")
        assert server is not None and server.leases == 4
    finally:
        envs.close()


@pytest.mark.timeout(240)
def test_a_server_killed_mid_episode_is_an_env_error_then_reset_starts_a_new_one(
    make_env: Callable[..., Any], site: str
) -> None:
    env = make_env("hud/Browser-v0", controller="subprocess", step_timeout=20)
    task = {"prompt": "p", "setup": [["goto", f"{site}/input.html"]]}
    env.reset(seed=0, options={"task": task})
    first = SUBPROCESS.server("browser")
    assert first is not None and first.pid is not None
    os.kill(first.pid, signal.SIGKILL)
    psutil.Process(first.pid).wait(timeout=30)
    obs, reward, terminated, truncated, info = env.step(TypeAction(text="x"))
    assert info["status"] == "env_error" and terminated and math.isnan(reward)
    assert "controller server" in info["error"]
    obs, info = env.reset(seed=0, options={"task": task})
    assert info["status"] == "ok" and info["url"].endswith("/input.html")
    second = SUBPROCESS.server("browser")
    assert second is not None and second.pid != first.pid
    _, _, _, _, info = env.step(TypeAction(text="y"))
    assert info["status"] == "ok"


def test_a_server_killed_a_moment_ago_is_replaced_before_asyncio_has_reaped_it(make_env: Callable[..., Any]) -> None:
    """Found by the fault-injection suite: a reset right after a SIGKILL reconnected to the dead
    server, because the launcher believed it alive until asyncio's child watcher had reaped it."""
    import time

    from hud_gym.controllers.process_utils import alive

    env = make_env("hud/QA-v0", task=QA_TASK, controller="subprocess")
    env.reset(seed=0)
    first = SUBPROCESS.server("qa")
    assert first is not None and first.pid is not None

    async def kill_then_acquire() -> str:
        os.kill(first.pid, signal.SIGKILL)
        while alive(first.pid):  # blocks the loop, so the child watcher cannot reap the server
            time.sleep(0.01)  # noqa: ASYNC251  (on purpose: asyncio must not reap the server)
        lease = await SUBPROCESS.acquire("qa")
        try:
            return lease.url
        finally:
            await lease.release()

    assert env.unwrapped._runner.run(kill_then_acquire(), timeout=90) != first.url
    obs, info = env.reset(seed=0)
    assert info["status"] == "ok" and SUBPROCESS.server("qa") is not first


def test_a_killed_explicit_server_reconnects_once_it_is_back(
    make_env: Callable[..., Any], start_server: Callable[..., ServerProcess]
) -> None:
    server = start_server("qa")
    env = make_env("hud/QA-v0", task=QA_TASK, controller=server.url, controller_token=TOKEN)
    env.reset(seed=0)
    server.kill()
    _, _, terminated, _, info = env.step(TypeAction(text="a"))
    assert info["status"] == "env_error" and terminated
    with pytest.raises(ControllerError, match="cannot reach the controller server"):
        env.reset(seed=0)
    start_server("qa", port=server.port)
    obs, info = env.reset(seed=0)
    assert info["status"] == "ok" and "capital of France" in obs["text"]


# ----------------------------------------------------------------------------- ubuntu


@pytest.mark.e2e
@pytest.mark.timeout(180)
def test_ubuntu_through_a_subprocess(make_env: Callable[..., Any]) -> None:
    from hud_gym.controllers.ubuntu.display import DesktopNotAvailableError, require_programs

    try:
        require_programs("openbox")
    except DesktopNotAvailableError as exc:
        pytest.skip(str(exc))
    task = Task(
        prompt="Reply when you see the file.",
        setup=[("write_file", "notes.txt", "hello desktop")],
        evaluate=("file_contains", "notes.txt", "hello desktop"),
        gym="hud-ubuntu",
    )
    env = make_env("hud/Ubuntu-v0", task=task, screen_size=(800, 600), controller="subprocess")
    obs, info = env.reset(seed=0)
    assert info["status"] == "ok" and obs["screenshot"].shape == (600, 800, 3)
    _, _, _, _, info = env.step({"type": "press", "keys": ["escape"]})
    assert info["status"] == "ok" and "windows" in info
    _, reward, terminated, _, info = env.step(ResponseAction(text="seen"))
    assert terminated and reward == 1.0, info["grade"]


# ----------------------------------------------------------------------------- misuse


def test_docker_without_an_engine_fails_clearly(
    make_env: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")
    env = make_env("hud/QA-v0", task=QA_TASK, controller="docker")
    with pytest.raises(ControllerError, match="no Docker engine is reachable") as caught:
        env.reset(seed=0)
    assert "controller='subprocess'" in str(caught.value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"controller": "ssh://box"}, "'local', 'subprocess', 'docker' or a 'ws://host:port' URL"),
        ({"controller": "remote"}, "'local', 'subprocess', 'docker'"),
        ({"controller": "ws://127.0.0.1:9"}, "needs the server's token"),
        ({"controller": "ws://127.0.0.1:9?frames=gif", "controller_token": "t"}, "frames must be"),
    ],
)
def test_a_bad_controller_argument_fails_at_make_time(
    monkeypatch: pytest.MonkeyPatch, kwargs: dict[str, Any], message: str
) -> None:
    monkeypatch.delenv("HUD_GYM_CONTROLLER_TOKEN", raising=False)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("?", r"\?")):
        gymnasium.make("hud/QA-v0", **kwargs)


# ----------------------------------------------------------------------------- a fleet of servers


def test_a_vector_env_and_a_pool_spread_over_a_fleet_of_servers(start_server: Callable[..., ServerProcess]) -> None:
    """``controller=[url, url]``: env i runs on server i % 2, through the vector env and the pool."""
    import asyncio

    from hud_gym.wrappers.rollout.grpo import rollout_group
    from hud_gym.wrappers.rollout.pool import EnvPool

    fleet = [start_server("qa").url, start_server("qa").url]
    envs = gymnasium.make_vec("hud/QA-v0", num_envs=4, task=QA_TASK, controller=fleet, controller_token=TOKEN)
    try:
        envs.reset(seed=0)
        assert [env.controller.where for env in envs.envs] == fleet * 2
        _, rewards, terminated, _, _ = envs.step([ResponseAction(text="Paris")] * 4)
        assert rewards.tolist() == [1.0] * 4 and terminated.all()
    finally:
        envs.close()

    def answer(observation: dict[str, Any], history: list[Any], task: Task) -> Any:
        return ResponseAction(text="Paris")

    async def grouped() -> tuple[list[float | None], list[str]]:
        async with EnvPool(size=4, controller=fleet, controller_token=[TOKEN, TOKEN]) as pool:
            group = await rollout_group(QA_TASK, answer, 4, seed=3, pool=pool)
            places = sorted(env.controller.where for envs in pool._idle.values() for env in envs)
            return group.rewards(), places

    rewards, places = asyncio.run(grouped())
    assert rewards == [1.0] * 4 and places == sorted(fleet * 2)


def test_controller_lists_are_checked() -> None:
    from hud_gym.wrappers.rollout.placement import controller_kwargs

    with pytest.raises(ValueError, match="no place"):
        controller_kwargs({"controller": []}, 0)
    with pytest.raises(ValueError, match="2 controller tokens for 3 controller places"):
        controller_kwargs({"controller": ["ws://a:1", "ws://b:1", "ws://c:1"], "controller_token": ["x", "y"]}, 0)
    assert controller_kwargs({"controller": "subprocess", "x": 1}, 5) == {"controller": "subprocess", "x": 1}
    with pytest.raises(ValueError, match="controller must be a string"):
        gymnasium.make("hud/QA-v0", controller=["subprocess"])
