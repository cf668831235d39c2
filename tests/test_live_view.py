"""``live_view=True`` (and ``HUD_GYM_LIVE_VIEW=1``): a real QA env recorded into a real store, the
URL printed at its first reset, and the real ``hud-gym ui`` (the console script, a subprocess)
answering for that run over HTTP as the env steps.

Proven here: with no app running, the message gives the command that starts one and the URL it
will serve; with one running, the URL is that app's and its JSON API shows the run growing step by
step; the env without a job gets a job of its own named ``live`` (finished when the env closes),
one with a job records there; the app's address file exists only while the app runs;
``render_mode="human"`` points at ``live_view=True``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium
import pytest

import hud_gym
from hud_gym.actions import ClickAction, Point, ResponseAction
from hud_gym.jobs.live_view import UI_ADDRESS_FILE

pytestmark = pytest.mark.timeout(90)

HUD_GYM = Path(sys.executable).parent / "hud-gym"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HUD_GYM_HOME", str(tmp_path))
    monkeypatch.delenv("HUD_GYM_LIVE_VIEW", raising=False)
    return tmp_path


@pytest.fixture
def ui(home: Path) -> Iterator[str]:
    """A running ``hud-gym ui`` over ``home`` on a free port; yields its URL."""
    process = subprocess.Popen(
        [str(HUD_GYM), "ui", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HUD_GYM_HOME": str(home)},
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    try:
        assert "http://127.0.0.1:" in line, f"no URL: {line!r}"
        yield line.split()[2]
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)  # a bound, not a speed: the app stops at once (see below)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _api(base: str, path: str) -> Any:
    with urllib.request.urlopen(base.rstrip("/") + path, timeout=10) as response:
        return json.loads(response.read())


def _run_id(url: str) -> str:
    prefix, run_id = url.split("#/live/")
    assert run_id and "/" not in run_id
    return run_id


def _env_id(url: str) -> str:
    prefix, env_id = url.split("#/live/env/")
    assert len(env_id) == 32
    return env_id


def test_without_an_app_the_first_reset_prints_the_command_and_the_url(
    home: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    env = hud_gym.make("qa-basic/capital-france", live_view=True)
    try:
        _, info = env.reset(seed=0)
        err = capfd.readouterr().err
        url = env.unwrapped.live_url
        assert url is not None and info["live_url"] == url
        assert url.startswith("http://127.0.0.1:8000/#/live/env/")
        assert f"HUD_GYM_HOME={home} hud-gym ui" in err and url in err
        run_id = _run_id(info["live_run_url"])
        jobs = hud_gym.list_jobs()
        assert [job.name for job in jobs] == ["live"]
        assert run_id in {t.trajectory_id for t in jobs[0].load_trajectories(include_running=True)}
        env.step(ResponseAction(text="Paris"))
        _, info = env.reset(seed=1)  # a new episode: a new run, the same env URL, printed once only
        assert info["live_url"] == env.unwrapped.live_url == url
        assert _run_id(info["live_run_url"]) != run_id
        assert "live view" not in capfd.readouterr().err
    finally:
        env.close()
    assert hud_gym.list_jobs()[0].status == "completed"  # its own job ends with the env


def test_the_url_is_the_running_apps_and_its_api_follows_the_run(
    home: Path, ui: str, capfd: pytest.CaptureFixture[str]
) -> None:
    assert json.loads((home / UI_ADDRESS_FILE).read_text())["url"] == ui
    env = gymnasium.make("hud/QA-v0", task="qa-basic/capital-france", live_view=True, observation_size=(160, 90))
    try:
        _, info = env.reset(seed=0)
        url = info["live_run_url"]
        assert url.startswith(ui + "#/live/") and info["live_url"].startswith(ui + "#/live/env/")
        err = capfd.readouterr().err
        assert info["live_url"] in err and "hud-gym ui`" not in err  # no command to start an app: one runs
        run_id = _run_id(url)
        assert run_id in [run["id"] for run in _api(ui, "/api/live")]
        run = _api(ui, f"/api/runs/{run_id}")
        assert run["status"] == "running" and run["steps"] == [] and run["initial_frame"]
        env.step(ClickAction(point=Point(x=10, y=20)))
        run = _api(ui, f"/api/runs/{run_id}")
        assert [step["actions"][0]["type"] for step in run["steps"]] == ["click"]
        assert run["steps"][0]["frame_after"]
        env.step(ResponseAction(text="Paris"))
        run = _api(ui, f"/api/runs/{run_id}")
        assert [step["actions"][0]["type"] for step in run["steps"]] == ["click", "response"]
        assert run["status"] == "ok" and run["reward"] == 1.0
    finally:
        env.close()


def test_the_env_url_follows_the_env_across_resets(home: Path, ui: str) -> None:
    env = hud_gym.make("qa-basic/capital-france", live_view=True, observation_size=(160, 90))
    other = hud_gym.make("qa-basic/capital-france", live_view=True, observation_size=(160, 90))
    try:
        _, info = env.reset(seed=0)
        env_id, first_run = _env_id(info["live_url"]), _run_id(info["live_run_url"])
        _, other_info = other.reset(seed=0)
        assert _env_id(other_info["live_url"]) != env_id
        shown = _api(ui, f"/api/live/env/{env_id}")
        assert shown["id"] == first_run and shown["env_id"] == env_id and shown["status"] == "running"
        env.step(ResponseAction(text="Paris"))
        assert _api(ui, f"/api/live/env/{env_id}")["status"] == "ok"  # the episode ended; no new one yet
        _, info = env.reset(seed=1)
        second_run = _run_id(info["live_run_url"])
        assert info["live_url"].endswith(env_id) and second_run != first_run
        shown = _api(ui, f"/api/live/env/{env_id}")
        assert shown["id"] == second_run and shown["status"] == "running" and shown["steps"] == []
        env.step(ClickAction(point=Point(x=5, y=5)))
        assert [s["actions"][0]["type"] for s in _api(ui, f"/api/live/env/{env_id}")["steps"]] == ["click"]
        assert _api(ui, f"/api/live/env/{_env_id(other_info['live_url'])}")["id"] != second_run
    finally:
        env.close()
        other.close()
    for bad in ("nosuchenv", "0" * 32, "../" + "a" * 29):
        with pytest.raises(urllib.error.HTTPError) as caught:
            _api(ui, f"/api/live/env/{bad}")
        assert caught.value.code == 404


def test_the_app_address_file_lives_as_long_as_the_app(home: Path) -> None:
    process = subprocess.Popen(
        [str(HUD_GYM), "ui", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "HUD_GYM_HOME": str(home)},
    )
    assert process.stdout is not None
    try:
        line = process.stdout.readline()
        path = home / UI_ADDRESS_FILE
        assert json.loads(path.read_text()) == {"url": line.split()[2], "pid": process.pid}
        assert path.stat().st_mode & 0o077 == 0  # an exposed app's URL carries its token
    finally:
        process.send_signal(signal.SIGTERM)  # what a service manager or `kill` sends
        code = process.wait(timeout=60)
    assert code == 0  # a clean stop, not a death by the signal
    assert not path.exists()


def test_the_env_variable_turns_it_on_and_a_given_job_records_it(
    home: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HUD_GYM_LIVE_VIEW", "1")
    job = hud_gym.create_job("mine")
    env = hud_gym.make("qa-basic/capital-france", job=job)
    try:
        assert env.unwrapped.live_view
        _, info = env.reset(seed=0)
        assert _run_id(info["live_run_url"]) in {t.trajectory_id for t in job.load_trajectories(include_running=True)}
        assert info["live_url"] in capfd.readouterr().err
    finally:
        env.close()
    assert [j.name for j in hud_gym.list_jobs()] == ["mine"] and job.status == "running"  # not ours to finish
    monkeypatch.setenv("HUD_GYM_LIVE_VIEW", "0")
    plain = hud_gym.make("qa")
    assert not plain.unwrapped.live_view and not any(
        type(listener).__name__ == "LiveView" for listener in plain.unwrapped.listeners
    )


@pytest.mark.filterwarnings("ignore:.*HumanRendering wrapper")
def test_render_mode_human_points_at_live_view() -> None:
    for make in (
        lambda: hud_gym.make("qa", render_mode="human"),
        lambda: gymnasium.make("hud/QA-v0", render_mode="human"),
    ):
        with pytest.raises(ValueError, match=r"render_mode='human' is not supported.*live_view=True"):
            make()
