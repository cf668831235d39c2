"""The newcomer traps of issue 18, each as a new user meets it: the README's ``run_job`` with the
scripted agent, ``hud-gym run`` on a machine where no env can start, misspelt and mistyped
``--env-kwarg``s, the scripted agent on a task set it cannot solve, SB3's ``ep_rew_mean``, the
words of the progress bar and the group table, and ``run_job``'s logging and progress bar.

Everything runs for real: the CLI as a subprocess of the installed console script, Chromium for
MiniWoB++, SB3's PPO and logger, a real store in a temporary ``HUD_GYM_HOME``."""

from __future__ import annotations

import csv
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

import hud_gym
from hud_gym import ResponseAction, Task
from hud_gym.agents import MiniWoBScriptedAgent
from hud_gym.agents.needs import AgentMismatchError
from hud_gym.cli.tables import group_table
from hud_gym.core.options import UnknownEnvOptionError
from hud_gym.jobs import list_jobs, load_job
from hud_gym.jobs.progress import RunTally
from hud_gym.trajectory import Trajectory

HUD_GYM = Path(sys.executable).parent / "hud-gym"


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HUD_GYM_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(HUD_GYM), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        check=False,
    )


# ------------------------------------------------------------------ the scripted agent


def test_the_cli_scripted_agent_refuses_a_task_set_it_cannot_solve_in_one_line() -> None:
    # Before: "TypeError: HudEnv.__init__() got an unexpected keyword argument 'elements'".
    result = cli("run", "qa-basic", "--agent", "scripted", "--limit", "1")
    assert result.returncode == 2, result.stderr
    assert "MiniWoBScriptedAgent acts on miniwob tasks only" in result.stderr
    assert "'capital-france'" in result.stderr and "Traceback" not in result.stderr
    assert "unexpected keyword" not in result.stderr
    assert list_jobs() == []  # refused before any job was stored
    help_text = " ".join(cli("run", "--help", env={"COLUMNS": "200"}).stdout.replace("│", " ").split())
    assert "scripted: MiniWoB++ only" in help_text


@pytest.mark.e2e
@pytest.mark.timeout(180)
def test_run_job_with_the_scripted_agent_as_the_readme_shows_it_solves_miniwob(home: Path) -> None:
    # Before: no elements, no crop: every click at the fallback point, ~0% success.
    tasks = [hud_gym.get_task(f"miniwob/{name}") for name in ("click-test", "enter-text", "click-button")]
    job = hud_gym.run_job(MiniWoBScriptedAgent(), tasks, "scripted", max_concurrent=3, seed=0)
    analytics = job.get_analytics()
    assert analytics.errors == 0 and analytics.success_rate == 1.0
    # The task set's standard frame and the agent's needs were applied, and are on record.
    run = job.load_trajectories()[0]
    assert run.steps and run.steps[0].actions[0]["type"] == "click"
    with pytest.raises(AgentMismatchError, match="acts on miniwob tasks only"):
        hud_gym.run_job(MiniWoBScriptedAgent(), "qa-basic", "wrong set")
    assert [j.name for j in list_jobs()] == ["scripted"]


# ------------------------------------------------------------------ no env can start


@pytest.mark.timeout(120)
def test_run_stops_at_an_infrastructure_failure_that_repeats_and_exits_non_zero() -> None:
    # Before: every run ended env_error, the table printed, exit code 0.
    result = cli(
        "run", "miniwob", "--agent", "scripted", "--limit", "6", "--envs", "2", env={"HUD_GYM_CHROMIUM": "/nope"}
    )
    assert result.returncode == 1, result.stderr
    assert "no env could start" in result.stderr and "HUD_GYM_CHROMIUM='/nope'" in result.stderr
    assert "every run would fail the same way" in result.stderr and "Traceback" not in result.stderr
    (job,) = list_jobs()
    assert job.status == "failed" and "JobStoppedError" in (job.error or "")
    assert len(job.load_trajectories()) < 6  # it stopped early
    assert all(t.status == "env_error" and t.reward is None for t in job.load_trajectories())


@pytest.mark.timeout(120)
def test_run_exits_non_zero_when_every_run_failed() -> None:
    result = cli("run", "miniwob", "--agent", "scripted", "--limit", "1", env={"HUD_GYM_CHROMIUM": "/nope"})
    assert result.returncode == 1, result.stderr
    assert "no env could start" not in result.stderr  # one run: nothing left to stop
    assert "every run failed, none was graded (1 env_error)" in result.stderr
    assert "first error (env_error" in result.stderr


# ------------------------------------------------------------------ env options


def test_a_misspelt_env_option_names_the_close_matches() -> None:
    # Before: "TypeError: HudEnv.__init__() got an unexpected keyword argument 'scren_size'".
    result = cli("run", "qa-basic", "--agent", "random", "-e", "scren_size=[800,600]")
    assert result.returncode == 2
    assert "hud/QA-v0 has no option 'scren_size' (did you mean 'screen_size'" in result.stderr
    assert list_jobs() == []
    with pytest.raises(UnknownEnvOptionError, match="did you mean 'elements'") as caught:
        hud_gym.make("browser", element=True)
    assert isinstance(caught.value, TypeError)
    with pytest.raises(TypeError, match="hud/QA-v0 has no option 'elements'; its options: .*screen_size"):
        hud_gym.make("qa", elements=True)


def test_a_size_written_as_width_x_height_is_read_and_a_bad_one_named() -> None:
    # Before: "observation_crop (0, 0, 160, 210) is not inside the (1, 0) screen".
    env = hud_gym.make("qa", screen_size="640x480", observation_size="320x240")
    try:
        assert env.unwrapped.screen_size == (640, 480)
        observation, _ = env.reset(seed=0, options={"task": Task(prompt="2+2?", target="4", gym="qa")})
        assert observation["screenshot"].shape == (240, 320, 3)
    finally:
        env.close()
    with pytest.raises(ValueError, match=r"screen_size must be \(width, height\).*got '1024 by 768'"):
        hud_gym.make("qa", screen_size="1024 by 768")
    result = cli("run", "qa-basic", "--agent", "random", "--limit", "1", "--max-steps", "1", "-e", "screen_size=1024x")
    assert result.returncode == 2 and "--env-kwarg screen_size must be (width, height)" in result.stderr
    result = cli(
        "run", "qa-basic", "--agent", "random", "--limit", "1", "--max-steps", "1", "-e", "screen_size=640x480"
    )
    assert result.returncode == 0, result.stderr


def test_render_mode_human_is_refused_with_what_to_do_instead() -> None:
    with pytest.raises(ValueError, match=r"render_mode='human' is not supported: .*hud-gym ui"):
        hud_gym.make("qa", render_mode="human")


# ------------------------------------------------------------------ words, logging, progress


def _run(task_id: str, status: str, reward: float | None, steps: int = 1) -> Trajectory:
    from hud_gym.trajectory import TrajectoryStep

    return Trajectory(
        task_id=task_id, status=status, reward=reward, steps=[TrajectoryStep(index=i) for i in range(steps)]
    )


def test_the_progress_words_differ_from_the_infrastructure_failure_words() -> None:
    tally = RunTally(total=4)
    outcomes = [
        tally.add(_run("a", "ok", 1.0)),
        tally.add(_run("a", "ok", 0.0)),
        tally.add(_run("b", "env_error", None)),
    ]
    assert outcomes == ["solved", "unsolved", "error"]
    assert tally.summary().startswith("1 solved 1 unsolved 1 errors · mean reward 0.5")
    assert "failed" not in tally.summary()


def _policy(observation: object, history: object, task: Task) -> list[ResponseAction]:
    if task.id == "crash":
        raise RuntimeError("the policy broke")
    return [ResponseAction(text="Paris")]


@pytest.mark.timeout(60)
def test_run_job_logs_each_run_and_draws_a_progress_bar(
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # the bar's width when stderr is not a terminal
    tasks = [hud_gym.get_task("qa-basic/capital-france"), Task(id="crash", prompt="?", target="x", gym="qa")]
    with caplog.at_level(logging.INFO, logger="hud_gym.jobs.run"):
        job = hud_gym.run_job(_policy, tasks, "logged", group_size=2, max_concurrent=2, progress=True)
    records = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "hud_gym.jobs.run"]
    assert records[0] == ("INFO", f"job 'logged' ({job.id[:8]}): 4 run(s) starting")
    solved = [m for level, m in records if level == "INFO" and "capital-france" in m and "solved, reward 1" in m]
    failed = [m for level, m in records if level == "WARNING" and "task crash" in m]
    assert len(solved) == 2 and len(failed) == 2
    assert all("ended policy_error" in m and "no reward" in m and "the policy broke" in m for m in failed)
    assert "4/4 run(s) finished: 2 solved 0 unsolved 2 errors · mean reward 1 · " in records[-1][1]
    err = capsys.readouterr().err
    assert "4/4" in err and "2 solved" in err and "eta" in err and "steps/s" in err
    # The group table says "error" where a run has no reward, not "failed".
    table = group_table(job.get_analytics())
    assert table is not None
    cells = [str(c) for column in table.columns for c in column._cells]
    assert "error, error" in cells and not any("failed" in c for c in cells)
    assert load_job(job.id).status == "completed"


# ------------------------------------------------------------------ SB3


@pytest.mark.timeout(120)
def test_sb3_logs_ep_rew_mean_without_a_monitor(tmp_path: Path) -> None:
    from stable_baselines3 import PPO
    from stable_baselines3.common.logger import configure

    from hud_gym.wrappers.integrations.sb3_vec_env import to_sb3_vec_env

    venv = to_sb3_vec_env(
        "hud/QA-v0",
        2,
        taskset="qa-basic",
        max_steps=2,
        observation_size=(64, 48),
        action_mode="discrete",
        grid=(2, 2),
        keys=("enter",),
        texts=("Paris", "4"),
        text="codes",
        text_length=16,
    )
    try:
        venv.reset()
        rewards = [0.0, 0.0]
        for _ in range(2):
            _, step_rewards, dones, infos = venv.step([5, 0])  # type "Paris"; click a cell
            rewards = [r + float(s) for r, s in zip(rewards, step_rewards, strict=True)]
        assert all(dones)
        assert [info["episode"]["l"] for info in infos] == [2, 2]
        assert [info["episode"]["r"] for info in infos] == pytest.approx(rewards)
        assert all(info["episode"]["t"] >= 0 for info in infos)
        model = PPO("MultiInputPolicy", venv, n_steps=8, batch_size=16, n_epochs=1, seed=0, verbose=0)
        model.set_logger(configure(str(tmp_path), ["csv"]))
        model.learn(total_timesteps=16)
    finally:
        venv.close()
    with open(tmp_path / "progress.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    # SB3 writes these two only from info["episode"] (its ep_info_buffer): before, the columns were absent.
    assert rows and 1.0 <= float(rows[-1]["rollout/ep_len_mean"]) <= 2.0
    assert 0.0 <= float(rows[-1]["rollout/ep_rew_mean"]) <= 2.0


# ------------------------------------------------------------------ a large report


def _big_job(home: Path, steps: int) -> str:
    import numpy as np

    from hud_gym.jobs.store import Store
    from hud_gym.trajectory import TrajectoryStep, new_id, utc_now

    store = Store(home)
    job_id = new_id()
    store.insert_job(job_id, "big", {}, utc_now(), None)
    frame = {"screenshot": np.full((24, 32, 3), 200, dtype=np.uint8)}
    trajectory = Trajectory(task_id="t", status="ok", reward=1.0, ended_at=utc_now(), initial_observation=frame)
    trajectory.steps = [
        TrajectoryStep(index=i, actions=[{"type": "click", "point": {"x": 3, "y": 4}}], observation=frame)
        for i in range(steps)
    ]
    store.save_trajectory(trajectory, job_id)
    store.finish_job(job_id, "completed")
    return job_id


@pytest.mark.timeout(120)
def test_a_report_past_500_steps_links_its_frames_and_says_so(home: Path, tmp_path: Path) -> None:
    job_id = _big_job(home, 501)
    result = cli("report", job_id, "--out", str(tmp_path / "big.html"))
    assert result.returncode == 0, result.stderr
    assert "501 steps: linking the screenshots from the store instead of embedding them" in result.stderr
    page = (tmp_path / "big.html").read_text()
    assert "data:image" not in page and page.count("step-0000.jpg") == 1 and page.count('<svg class="overlay"') == 501
    embedded = cli("report", job_id, "--out", str(tmp_path / "embedded.html"), "--embed-images")
    assert embedded.returncode == 0 and "linking" not in embedded.stderr
    assert "data:image/jpeg" in (tmp_path / "embedded.html").read_text()
    both = cli("report", job_id, "--link-images", "--embed-images")
    assert both.returncode == 2 and "exclude each other" in both.stderr
