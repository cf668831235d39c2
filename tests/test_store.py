"""The SQLite job store: layout, schema migrations, concurrent writers, interrupted writers."""

from __future__ import annotations

import json
import multiprocessing
import os
import sqlite3
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import psutil
import pytest
from PIL import Image

import hud_gym
from hud_gym.jobs import (
    SCHEMA_VERSION,
    JobNotFoundError,
    SchemaVersionError,
    Store,
    create_job,
    get_store,
    load_job,
)
from hud_gym.jobs.liveness import is_running
from hud_gym.jobs.paths import resolve_home
from hud_gym.jobs.schema import MIGRATIONS
from hud_gym.trajectory import Trajectory, TrajectoryStep

sys.path.insert(0, str(Path(__file__).parent))
import jobs_child_process
from private_mounts import REASON, can_mount, run_on_tmpfs


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HUD_GYM_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_store_lives_under_hud_gym_home(home: Path) -> None:
    store = Store()
    assert store.db_path == home / "hud_gym.db" and store.db_path.exists()
    assert store.images_dir == home / "images" and store.images_dir.is_dir()
    assert get_store() is get_store(home)
    conn = sqlite3.connect(store.db_path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()


def test_default_home_is_the_per_user_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HUD_GYM_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", "/nonexistent-data-home")
    assert resolve_home() == Path("/nonexistent-data-home/hud-gym")


def test_bad_store_options_are_refused(home: Path) -> None:
    with pytest.raises(ValueError, match="image_format"):
        Store(image_format="gif")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="jpeg_quality"):
        Store(jpeg_quality=0)


def _v1_database(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(MIGRATIONS[0])
    conn.execute("PRAGMA user_version = 1")
    conn.execute(
        "INSERT INTO jobs (id, name, metadata, created_at, status) VALUES "
        "('oldjob', 'from v1', '{\"k\": 1}', '2024-01-01T00:00:00+00:00', 'completed')"
    )
    conn.execute(
        "INSERT INTO trajectories (id, job_id, status, reward, started_at, ended_at) VALUES "
        "('t-done', 'oldjob', 'ok', 1.0, '2024-01-01T00:00:01+00:00', '2024-01-01T00:00:03+00:00')"
    )
    conn.execute(
        "INSERT INTO trajectories (id, job_id, status, started_at) VALUES "
        "('t-open', 'oldjob', 'running', '2024-01-01T00:00:04+00:00')"
    )
    conn.execute(
        "INSERT INTO steps (trajectory_id, idx, actions, reward, terminated, started_at) VALUES "
        '(\'t-done\', 0, \'[{"type": "response", "text": "x"}]\', 1.0, 1, \'2024-01-01T00:00:02+00:00\')'
    )
    # Before version 3 a failed step's absent reward was stored as 0.
    conn.execute(
        "INSERT INTO steps (trajectory_id, idx, reward, status, error, started_at) VALUES "
        "('t-open', 0, 0, 'env_error', 'browser died', '2024-01-01T00:00:05+00:00')"
    )
    conn.commit()
    conn.close()


def test_a_version_1_database_migrates_and_keeps_its_rows(home: Path) -> None:
    _v1_database(home / "hud_gym.db")
    store = Store()
    conn = sqlite3.connect(store.db_path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
    columns = {row[1] for row in conn.execute("PRAGMA table_info(trajectories)")}
    assert {"writer_host", "writer_pid", "writer_started"} <= columns
    step_reward = next(row for row in conn.execute("PRAGMA table_info(steps)") if row[1] == "reward")
    assert step_reward[3] == 0  # NOT NULL dropped: a failed step has no reward
    conn.close()
    job = load_job("old")
    assert (job.id, job.name, job.metadata) == ("oldjob", "from v1", {"k": 1})
    done, open_ = job.load_trajectories()
    assert done.trajectory_id == "t-done" and done.reward == 1.0 and done.steps[0].actions[0]["text"] == "x"
    # A v1 row has no writer to check: it cannot still be running in this version.
    assert open_.trajectory_id == "t-open" and open_.status == "interrupted" and open_.reward is None
    assert [(st.status, st.reward) for st in open_.steps] == [("env_error", None)]  # the old 0 was no reward
    # New rows work in the migrated database.
    new = create_job("after migration")
    assert load_job(new.id).status == "running"


def test_a_database_from_a_newer_version_is_refused(home: Path) -> None:
    home.mkdir(parents=True)
    conn = sqlite3.connect(home / "hud_gym.db")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(SchemaVersionError, match=f"schema version {SCHEMA_VERSION + 1}"):
        Store()


def test_unknown_and_ambiguous_job_ids_name_the_id(home: Path) -> None:
    store = Store()
    for job_id in ("abc111", "abc222"):
        store.insert_job(job_id, f"job {job_id}", {}, hud_gym.trajectory.utc_now(), None)
    with pytest.raises(JobNotFoundError, match="no job with id 'zzz'") as missing:
        load_job("zzz")
    assert isinstance(missing.value, KeyError)
    with pytest.raises(KeyError, match="ambiguous.*abc111.*abc222"):
        load_job("abc")
    assert load_job("abc2").id == "abc222"


def test_saved_trajectory_round_trips_with_images_and_policy_traces(home: Path) -> None:
    job = create_job("round trip")
    screenshot = np.zeros((40, 60, 3), np.uint8)
    screenshot[:, :30] = (255, 0, 0)
    trajectory = Trajectory(
        task_id="t1",
        seed=5,
        prompt="p",
        reward=0.5,
        status="truncated",
        group_id="g",
        rollout_index=2,
        initial_observation={"screenshot": screenshot, "text": "p"},
    )
    trajectory.steps.append(
        TrajectoryStep(
            index=0,
            actions=[{"type": "wait", "time": 1}],
            reward=0.5,
            truncated=True,
            observation={"screenshot": screenshot, "text": "p"},
            policy_trace={"tokens": np.arange(3), "logprobs": [-0.5, float("nan")]},
        )
    )
    trajectory.ended_at = trajectory.started_at
    job.add_trajectory(trajectory)
    [loaded] = job.load_trajectories()
    assert (loaded.trajectory_id, loaded.group_id, loaded.rollout_index, loaded.seed) == (
        trajectory.trajectory_id,
        "g",
        2,
        5,
    )
    assert loaded.reward == 0.5 and loaded.status == "truncated" and loaded.job_id == job.id
    step = loaded.steps[0]
    assert step.policy_trace == {"tokens": [0, 1, 2], "logprobs": [-0.5, None]}
    image = np.asarray(Image.open(step.observation_ref))
    assert image.shape == (40, 60, 3) and image[20, 10, 0] > 200 and image[20, 50, 0] < 50
    assert Path(loaded.metadata["initial_observation_ref"]).is_file()
    assert Path(step.observation_ref).is_relative_to(job.store.images_dir / job.id)


def test_png_screenshots_are_lossless(home: Path) -> None:
    store = Store(home / "png", image_format="png")
    screenshot = np.random.default_rng(0).integers(0, 256, (12, 16, 3), dtype=np.uint8)
    ref = store.recording.save_image("j", "t", "step-0000", {"screenshot": screenshot})
    assert ref is not None and ref.endswith(".png")
    assert np.array_equal(np.asarray(Image.open(store.image_path(ref))), screenshot)


def test_threads_writing_at_once_lose_nothing(home: Path) -> None:
    job = create_job("threads")
    errors: list[BaseException] = []

    def write(worker: int) -> None:
        try:
            for _ in range(10):
                trajectory = Trajectory(task_id=f"w{worker}", reward=1.0)
                trajectory.steps = [TrajectoryStep(index=i, reward=float(i)) for i in range(3)]
                job.add_trajectory(trajectory)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    trajectories = job.load_trajectories()
    assert len(trajectories) == 80 and all(len(t.steps) == 3 for t in trajectories)


@pytest.mark.timeout(180)
def test_several_processes_write_to_one_job(home: Path) -> None:
    job = create_job("processes")
    context = multiprocessing.get_context("spawn")
    with context.Pool(4) as pool:
        taken = pool.starmap(jobs_child_process.write_trajectories, [(job.id, str(home), 5, 3)] * 4)
    assert taken == [15] * 4
    trajectories = job.load_trajectories()
    assert len(trajectories) == 20
    assert all(t.status == "ok" and t.reward == 1.0 and len(t.steps) == 3 for t in trajectories)
    assert len({t.trajectory_id for t in trajectories}) == 20
    for trajectory in trajectories:
        assert [s.index for s in trajectory.steps] == [0, 1, 2]
        assert all(Path(s.observation_ref).is_file() for s in trajectory.steps)
    analytics = job.get_analytics()
    assert analytics.steps_total == 60 and analytics.success_rate == 1.0


@pytest.mark.timeout(120)
def test_opening_a_store_another_connection_is_creating_waits_for_it(home: Path) -> None:
    """``PRAGMA journal_mode=WAL`` on a fresh store while another connection holds its write lock:
    SQLite skips the busy handler there ("database is locked" at once, issue 23); the open waits
    for the lock instead."""
    home.mkdir(parents=True)
    creator = sqlite3.connect(home / "hud_gym.db", isolation_level=None, check_same_thread=False)
    creator.execute("BEGIN IMMEDIATE")
    creator.execute("CREATE TABLE being_created (x)")
    release = threading.Timer(1.0, lambda: creator.execute("COMMIT"))
    release.start()
    try:
        store = Store(home)
        assert store.job_rows() == []
    finally:
        release.join()
        creator.close()


@pytest.mark.timeout(240)
def test_many_processes_opening_a_fresh_store_at_once_all_write(tmp_path: Path) -> None:
    """Eight processes create the same store at the same moment, five times over: every one
    writes its job, none sees "database is locked"."""
    context = multiprocessing.get_context("spawn")
    with context.Pool(8) as pool:
        for trial in range(5):
            fresh = tmp_path / f"fresh-{trial}"
            start_at = time.time() + 3.0  # every worker is up (spawned, imported) by then
            outcomes = pool.starmap(jobs_child_process.open_fresh_store, [(str(fresh), start_at)] * 8)
            assert outcomes == ["ok"] * 8, outcomes
            assert len(Store(fresh).job_rows()) == 8


def test_a_reused_pid_is_not_the_old_writer(home: Path) -> None:
    me = psutil.Process()
    assert is_running(None, os.getpid(), me.create_time())
    assert not is_running(None, os.getpid(), me.create_time() - 3600)  # same pid, another process
    assert not is_running(None, None, None)
    store = Store()
    job = create_job("pid reuse")
    store.start_trajectory(Trajectory(trajectory_id="mine"), job.id)
    store.start_trajectory(Trajectory(trajectory_id="reused"), job.id)
    with sqlite3.connect(store.db_path) as conn:
        conn.execute("UPDATE trajectories SET writer_started = writer_started - 3600 WHERE id = 'reused'")
    assert store.reconcile(job.id) == 1
    assert job.count_trajectories() == {"running": 1, "interrupted": 1}
    assert [t.trajectory_id for t in job.load_trajectories()] == ["reused"]
    [running] = job.load_trajectories(status="running")
    assert running.trajectory_id == "mine" and running.metadata["running"] is True and running.ended_at is None


def _child(mode: str, home: Path) -> tuple[psutil.Popen, dict[str, object]]:
    import subprocess

    script = Path(__file__).parent / "jobs_child_process.py"
    proc = psutil.Popen(
        [sys.executable, str(script), mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "HUD_GYM_HOME": str(home)},
        text=True,
    )
    line = proc.stdout.readline()
    assert line, f"the child exited early with code {proc.wait(30)}"
    return proc, json.loads(line)


@pytest.mark.timeout(60)
def test_sigkill_mid_job_keeps_finished_runs_and_marks_the_rest_interrupted(home: Path) -> None:
    import signal

    proc, report = _child("kill", home)
    job = load_job(str(report["job_id"]))
    assert job.status == "running"  # the child is alive, blocked mid-episode
    assert job.count_trajectories() == {"ok": 3, "running": 2}
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(30) == -signal.SIGKILL

    job = load_job(str(report["job_id"]))
    assert job.status == "interrupted" and "died" in (job.error or "")
    trajectories = job.load_trajectories()
    finished = [t for t in trajectories if t.status == "ok"]
    interrupted = [t for t in trajectories if t.status == "interrupted"]
    assert len(finished) == 3 and len(interrupted) == 2
    for trajectory in finished:
        assert trajectory.reward == 1.0 and trajectory.final_response == "Paris"
        assert [s.actions[0]["type"] for s in trajectory.steps] == ["type", "response"]
        assert [s.reward for s in trajectory.steps] == [0.0, 1.0] and trajectory.steps[-1].terminated
        assert all(Path(s.observation_ref).is_file() for s in trajectory.steps)
        assert trajectory.grade and trajectory.grade["reward"] == 1.0
    assert sorted(t.trajectory_id for t in interrupted) == sorted(report["running"])  # type: ignore[arg-type]
    for trajectory in interrupted:
        assert trajectory.reward is None and trajectory.ended_at is not None
        assert [s.actions[0]["text"] for s in trajectory.steps][0].startswith("thinking")
        assert Path(trajectory.steps[0].observation_ref).is_file()
    analytics = job.get_analytics()
    assert analytics.error_counts == {"interrupted": 2} and analytics.success_rate == 1.0 and analytics.running == 0


@pytest.mark.timeout(60)
def test_a_normal_exit_mid_episode_ends_the_episodes_interrupted(home: Path) -> None:
    proc, report = _child("exit", home)
    assert proc.wait(30) == 0
    job = load_job(str(report["job_id"]))
    assert job.status == "interrupted" and job.count_trajectories() == {"ok": 3, "interrupted": 2}
    assert {t.error for t in job.load_trajectories(status="interrupted")} == {"the process exited during the episode"}


FULL_DISK = textwrap.dedent("""
    import errno, json, os, sqlite3
    import numpy as np
    from hud_gym.jobs import create_job, get_store
    from hud_gym.trajectory import Trajectory, TrajectoryStep

    home = os.environ["HUD_GYM_HOME"]
    store = get_store()
    job = create_job("full")
    trajectory = Trajectory(task_id="t", prompt="p", job_id=job.id)
    store.start_trajectory(trajectory, job.id)
    sqlite3.connect(store.db_path).execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the next write needs new space
    with open(os.path.join(home, "filler"), "wb", buffering=0) as filler:
        for chunk in (1 << 16, 1 << 12, 1):
            try:
                while True:
                    filler.write(b"x" * chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
    step = TrajectoryStep(index=0, actions=[], reward=1.0, terminated=True)
    try:
        store.add_step(job.id, trajectory.trajectory_id, step, {"screenshot": np.zeros((64, 64, 3), np.uint8)})
    except OSError as exc:
        raised = exc.errno
    job.finish()
    row = store.db.conn().execute("SELECT status, reward, error FROM trajectories").fetchone()
    print(json.dumps({"raised": raised, "row": list(row), "job": [job.status, job.error],
                      "reserve": os.path.exists(os.path.join(home, ".space-reserve"))}))
""")


@pytest.mark.skipif(not can_mount(), reason=REASON)
@pytest.mark.timeout(120)
def test_on_a_full_disk_a_run_ends_record_error_through_the_reserve(tmp_path: Path) -> None:
    """The disk is full to the last byte (the WAL truncated, so even a status update needs new
    space): the failed step's run ends ``record_error`` with no reward, written in the space of
    the released ballast file, and the job finishes with the count in its error."""
    disk = tmp_path / "disk"
    disk.mkdir()
    process = run_on_tmpfs(
        disk, "3m", [sys.executable, "-c", FULL_DISK], timeout=90, env={**os.environ, "HUD_GYM_HOME": str(disk)}
    )
    assert process.returncode == 0, process.stderr[-3000:]
    found = json.loads(process.stdout.strip().splitlines()[-1])
    assert found["raised"] == 28 and found["reserve"] is False
    status, reward, error = found["row"]
    assert (status, reward) == ("record_error", None) and "No space left on device" in error
    assert found["job"][0] == "completed" and "1 run(s) could not be recorded whole" in found["job"][1]
