"""The ``hud-gym`` command line, run through the CLI itself: typer's CliRunner in this process, and
real subprocesses of the installed ``hud-gym`` console script. Jobs are real QA jobs in a
temporary HUD_GYM_HOME; every result is checked against the job store or the files written."""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import imageio.v3 as iio
import pytest
from private_mounts import REASON, can_mount, run_read_only
from typer.testing import CliRunner

import hud_gym
from hud_gym.cli import main
from hud_gym.cli.app import app
from hud_gym.cli.doctor import exit_code, run_checks
from hud_gym.controllers.remote.server import READY_PREFIX
from hud_gym.jobs import get_store, list_jobs, load_job
from hud_gym.jobs.liveness import ProcessIdentity
from hud_gym.tasksets import available_tasksets, load_taskset
from hud_gym.trajectory import Trajectory, utc_now

HUD_GYM = Path(sys.executable).parent / "hud-gym"
QA_TASKS = "capital-france,largest-planet"


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HUD_GYM_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


@pytest.fixture
def agent_module(tmp_path: Path) -> Iterator[str]:
    """A module in the current directory with agents for ``--agent module:attribute``."""
    name = f"cli_agents_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(
        textwrap.dedent("""
        from hud_gym.actions import ResponseAction, TypeAction

        class Oracle:
            def reset(self):
                pass

            def act(self, observation, info):
                prompt = observation.get("text") or ""
                if info.get("step", 0) == 0:
                    return [TypeAction(text="thinking")]
                return [ResponseAction(text="Paris" if "France" in prompt else "Saturn")]

        class NeedsArguments:
            def __init__(self, model):
                self.model = model

        def policy(observation, history, task):
            return [ResponseAction(text="Jupiter")]

        NOT_AN_AGENT = 42
    """)
    )
    yield name
    sys.modules.pop(name, None)


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def run_json(*args: str) -> dict[str, Any]:
    result = invoke("run", *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def assert_user_error(result: Any, *needles: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hud-gym: error: "), result.stderr
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in lines[0], lines[0]


# ---------------------------------------------------------------------- run and jobs


def test_run_stores_a_job_and_jobs_commands_read_it(agent_module: str, tmp_path: Path) -> None:
    out = run_json(
        "qa-basic",
        "--agent",
        f"{agent_module}:Oracle",
        "--task",
        QA_TASKS,
        "--group-size",
        "2",
        "--envs",
        "3",
        "--seed",
        "5",
        "--max-steps",
        "3",
        "--job",
        "cli-oracle",
    )
    job = load_job(out["job"]["id"])
    assert job.name == "cli-oracle" and job.status == "completed"
    assert job.metadata["agent"] == f"{agent_module}:Oracle"
    assert job.metadata["run"]["group_size"] == 2 and job.metadata["run"]["max_concurrent"] == 3
    trajectories = job.load_trajectories()
    assert sorted((t.task_id, t.reward, len(t.steps)) for t in trajectories) == [
        ("capital-france", 1.0, 2),
        ("capital-france", 1.0, 2),
        ("largest-planet", 0.0, 2),
        ("largest-planet", 0.0, 2),
    ]
    assert sorted({t.seed for t in trajectories}) == [5, 6]
    assert out["analytics"] == job.get_analytics().model_dump(mode="json")

    listed = json.loads(invoke("jobs", "list", "--json").stdout)
    assert [j["id"] for j in listed] == [job.id] and listed[0]["success_rate"] == 0.5
    table = invoke("jobs", "list")
    assert table.exit_code == 0 and job.id in table.stdout and "cli-oracle" in table.stdout

    shown = invoke("jobs", "show", job.id[:6], "--json")
    assert shown.exit_code == 0
    assert json.loads(shown.stdout)["analytics"] == out["analytics"]
    tables = invoke("jobs", "show", job.id[:6], "--trajectories")
    assert tables.exit_code == 0
    for text in (
        "per task",
        "per group",
        "capital-france",
        "largest-planet",
        *(t.trajectory_id[:12] for t in trajectories),
    ):
        assert text in tables.stdout


def test_jobs_export_writes_each_format(agent_module: str, tmp_path: Path) -> None:
    job_id = run_json("qa-basic", "--agent", f"{agent_module}:Oracle", "--task", QA_TASKS, "--max-steps", "3")["job"][
        "id"
    ]
    trajectories = {t.trajectory_id: t for t in load_job(job_id).load_trajectories()}

    result = invoke("jobs", "export", job_id, "--format", "jsonl", "--out", "data/train.jsonl", "--images", "base64")
    assert result.exit_code == 0, result.output
    path = Path(result.stdout.strip())
    assert path == (tmp_path / "data" / "train.jsonl")
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert sorted(r["trajectory_id"] for r in records) == sorted(trajectories)
    for record in records:
        assert record["reward"] == trajectories[record["trajectory_id"]].reward
        image = record["steps"][0]["image"]
        assert (
            image.startswith("data:image/jpeg;base64,") and base64.b64decode(image.split(",", 1)[1])[:2] == b"\xff\xd8"
        )

    result = invoke("jobs", "export", job_id[:8], "--format", "hud")
    assert result.exit_code == 0, result.output
    document = json.loads(Path(result.stdout.strip()).read_text(encoding="utf-8"))
    assert document["job"]["id"] == job_id and len(document["trajectories"]) == 2

    result = invoke("jobs", "export", job_id, "--format", "video", "--video-format", "gif", "--out", "replays")
    assert result.exit_code == 0, result.output
    gifs = sorted((tmp_path / "replays").glob("*.gif"))
    assert len(gifs) == 2 and [str(p) for p in gifs] == sorted(result.stdout.strip().splitlines()[1:])
    assert all(len(list(iio.imiter(p))) == 3 for p in gifs)  # the reset + 2 steps


def test_report_command_writes_one_html_file(agent_module: str, tmp_path: Path, home: Path) -> None:
    job_id = run_json(
        "qa-basic", "--agent", f"{agent_module}:Oracle", "--task", QA_TASKS, "--max-steps", "3", "--report"
    )["job"]["id"]
    default = home / "reports" / f"{job_id}.html"
    assert default.is_file()
    result = invoke("report", job_id, "--out", "r/report.html")
    assert result.exit_code == 0, result.output
    path = Path(result.stdout.strip())
    assert path == tmp_path / "r" / "report.html"
    page = path.read_text(encoding="utf-8")
    assert page.count('<article class="trajectory') == 2
    assert page.count('src="data:image/jpeg;base64,') == 6  # 2 runs x (reset + 2 steps)
    linked = invoke("report", job_id, "--out", "r/linked.html", "--link-images")
    assert linked.exit_code == 0
    page = Path(linked.stdout.strip()).read_text(encoding="utf-8")
    assert "data:image/jpeg" not in page and page.count("<img src=") == 6


def test_run_with_a_policy_function_and_a_task_file(agent_module: str, tmp_path: Path) -> None:
    (tmp_path / "tasks.jsonl").write_text(
        json.dumps({"id": "planet", "prompt": "Largest planet?", "target": "Jupiter", "gym": "qa"})
        + "\n"
        + json.dumps({"id": "ocean", "prompt": "Largest ocean?", "target": "Pacific", "gym": "qa"})
        + "\n"
    )
    out = run_json("tasks.jsonl", "--agent", f"{agent_module}:policy", "--seed", "0")
    rewards = {t.task_id: t.reward for t in load_job(out["job"]["id"]).load_trajectories()}
    assert rewards == {"planet": 1.0, "ocean": 0.0}


@pytest.mark.slow
def test_tasksets_list_and_doctor() -> None:
    rows = json.loads(invoke("tasksets", "list", "--json").stdout)
    assert [r["name"] for r in rows] == available_tasksets()
    by_name = {r["name"]: r for r in rows}
    assert by_name["qa-basic"]["tasks"] == len(load_taskset("qa-basic"))
    table = invoke("tasksets", "list")
    assert table.exit_code == 0 and all(name in table.stdout for name in available_tasksets())

    result = invoke("doctor", "--no-launch")
    checks = run_checks(launch_browser=False)
    assert result.exit_code == exit_code(checks)
    for check in checks:
        assert check.name in result.stdout


# ---------------------------------------------------------------------- user mistakes


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["run", "no-such-set", "--agent", "random"], ["unknown task set 'no-such-set'", "qa-basic"]),
        (["run", "missing.jsonl", "--agent", "random"], ["missing.jsonl", "does not exist"]),
        (["run", "qa-basic", "--agent", "genius"], ["unknown agent 'genius'", "random", "scripted"]),
        (["run", "qa-basic", "--agent", "no_such_module_xyz:Agent"], ["no_such_module_xyz"]),
        (["run", "qa-basic", "--agent", "json:NoSuchAgent"], ["has no attribute 'NoSuchAgent'"]),
        (["run", "qa-basic", "--agent", "json:"], ["package.module:Attribute"]),
        (["run", "qa-basic", "--agent", "random", "--task", "nope"], ["no task 'nope'", "capital-france"]),
        (["run", "qa-basic", "--agent", "random", "--envs", "0"], ["--envs"]),
        (["run", "qa-basic", "--agent", "random", "--group-size", "many"], ["--group-size", "valid integer"]),
        (["run", "qa-basic", "--agent", "random", "--env-kwarg", "screen"], ["key=value", "'screen'"]),
        (["run", "qa-basic", "--agent", "random", "--env-kwarg", "job=x"], ["job"]),
        (["run", "qa-basic"], ["--agent"]),
        (["jobs", "show", "0123456789abcdef"], ["no job with id '0123456789abcdef'"]),
        (["jobs", "export", "0123456789abcdef"], ["no job with id"]),
        (["report", "0123456789abcdef"], ["no job with id"]),
        (["jobs", "export", "x", "--format", "csv"], ["--format", "csv"]),
        (["jobs", "export", "x", "--images", "inline"], ["--images", "inline"]),
        (["jobs", "list", "--limit", "0"], ["--limit"]),
        (["serve", "spreadsheet"], ["unknown gym 'spreadsheet'", "qa"]),
        (["serve", "qa", "--token", "abc"], ["--token-file", "/proc/PID/cmdline"]),
        (["serve", "qa", "--token-file", "/no/such/token"], ["--token-file /no/such/token: cannot read it"]),
        (["serve", "qa", "--import", "no_such_module_xyz"], ["--import no_such_module_xyz", "ModuleNotFoundError"]),
        (["serve", "--protocol", "hud", "qa-basic", "--host", "0.0.0.0"], ["--host 0.0.0.0", "loopback only"]),
        (["serve", "--protocol", "hud", "no-such-taskset"], ["no-such-taskset"]),
        (["serve", "--protocol", "hud", "qa-basic", "--option", "[1]"], ["--option '[1]'", "KEY=VALUE"]),
        (["serve", "--protocol", "hud", "qa-basic", "--token-file", "t"], ["--token-file", "same-user"]),
        (["serve", "--protocol", "ftp", "qa"], ["--protocol 'ftp'", "ws or hud"]),
        (["no-such-command"], ["no-such-command"]),
    ],
)
def test_user_mistakes_are_one_line_and_exit_2(args: list[str], needles: list[str]) -> None:
    assert_user_error(invoke(*args), *needles)
    assert list_jobs() == []


def test_a_malformed_task_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    task = {"id": "a", "prompt": "p", "gym": "qa"}
    (tmp_path / "deep.json").write_text('[{"prompt": "p", "metadata": ' + "[" * 5000 + "]" * 5000 + "}]")
    (tmp_path / "dup.jsonl").write_text(json.dumps(task) + "\n" + json.dumps(task) + "\n")
    (tmp_path / "latin1.json").write_bytes(b'[{"prompt": "caf\xe9"}]')
    for name, needles in (
        ("deep.json", ["line 1", "nested deeper"]),
        ("dup.jsonl", ["line 2", "duplicate task id 'a'"]),
        ("latin1.json", ["line 1", "not UTF-8"]),
    ):
        assert_user_error(invoke("run", name, "--agent", "random"), name, *needles)
    process = _cli("run", "deep.json", "--agent", "random")
    assert process.returncode == 2 and "Traceback" not in process.stderr
    assert process.stderr.count("\n") == 1 and "deep.json, line 1: values nested deeper" in process.stderr
    assert list_jobs() == []


def test_agent_import_mistakes(agent_module: str) -> None:
    assert_user_error(
        invoke("run", "qa-basic", "--agent", f"{agent_module}:NeedsArguments"), "with no arguments", "model"
    )
    assert_user_error(invoke("run", "qa-basic", "--agent", f"{agent_module}:NOT_AN_AGENT"), "not an agent")


def test_a_bad_env_option_is_refused_in_one_line_before_any_job() -> None:
    result = invoke("run", "qa-basic", "--agent", "random", "--limit", "1", "--env-kwarg", "colour=1")
    assert result.exit_code == 2 and "Traceback" not in result.output
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith("hud-gym: error: --env-kwarg: hud/QA-v0 has no option 'colour'")
    assert list_jobs() == []


def test_exporting_a_video_over_a_file_is_refused(agent_module: str, tmp_path: Path) -> None:
    job_id = run_json("qa-basic", "--agent", f"{agent_module}:policy", "--limit", "1")["job"]["id"]
    (tmp_path / "taken").write_text("x")
    assert_user_error(invoke("jobs", "export", job_id, "--format", "video", "--out", "taken"), "is a file")


def _damaged_store(home: Path) -> None:
    from hud_gym.jobs import Store
    from hud_gym.trajectory import utc_now

    store = Store(home)
    for i in range(200):
        store.insert_job(f"job{i:04d}", "x" * 200, {}, utc_now(), None)
    store.db.conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    with open(home / "hud_gym.db", "r+b") as db:
        db.seek(3 * 4096)
        db.write(b"\xff" * 40960)


@pytest.mark.parametrize(
    ("damage", "needles"),
    [
        (
            lambda home: (home.mkdir(), (home / "hud_gym.db").write_text("not a database " * 100)),
            ["hud_gym.db is not a hud-gym job store (not an SQLite database)"],
        ),
        (_damaged_store, ["hud_gym.db is damaged (database disk image is malformed)"]),
        (
            lambda home: (home.mkdir(), sqlite3.connect(home / "hud_gym.db").execute("PRAGMA user_version = 99")),
            ["has schema version 99", "upgrade hud-gym"],
        ),
        (lambda home: home.write_text("a file"), ["is not a directory"]),
    ],
    ids=["not-sqlite", "damaged", "newer-schema", "a-file"],
)
def test_a_store_that_cannot_be_used_is_one_line(home: Path, damage: Any, needles: list[str]) -> None:
    damage(home)
    for args in (["jobs", "list"], ["jobs", "show", "job0001"], ["report", "job0001"]):
        assert_user_error(invoke(*args), str(home), *needles)
    run = invoke("run", "qa-basic", "--agent", "random", "--limit", "1")  # a damaged page shows once the run writes
    assert run.exit_code == 2 and "Traceback" not in run.output
    assert run.stderr.strip().splitlines()[-1].startswith("hud-gym: error: ") and needles[-1] in run.stderr


def test_more_mistakes_are_one_line_before_any_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "gyms.json").write_text(
        json.dumps([{"id": "a", "prompt": "p", "gym": "qa"}, {"id": "b", "prompt": "p", "gym": "nope"}])
    )
    assert_user_error(invoke("run", "gyms.json", "--agent", "random"), "task 1 ('b'), field 'gym': unknown gym 'nope'")
    assert_user_error(
        invoke("run", "qa-basic", "--agent", "random", "--env-kwarg", "screen_size=[1, 2, 3]"),
        "screen_size must be (width, height)",
        "[1, 2, 3]",
    )
    import hud_gym.formats.osworld as osworld

    monkeypatch.setattr(osworld, "MAX_SCANNED_FILES", 5)
    (tmp_path / "many").mkdir()
    for i in range(6):
        (tmp_path / "many" / f"{i}.txt").write_text("x")
    assert_user_error(invoke("run", "many", "--agent", "random"), "many: more than 5 files")
    assert list_jobs() == []


def test_a_damaged_screenshot_leaves_a_frame_blank(agent_module: str, tmp_path: Path) -> None:
    job_id = run_json("qa-basic", "--agent", f"{agent_module}:Oracle", "--task", "capital-france", "--max-steps", "3")[
        "job"
    ]["id"]
    (trajectory,) = load_job(job_id).load_trajectories()
    Path(trajectory.steps[0].observation_ref).write_bytes(b"not a jpeg")
    result = invoke("report", job_id, "--out", "r.html")
    assert result.exit_code == 0, result.output
    assert Path("r.html").read_text(encoding="utf-8").count('src="data:image/jpeg;base64,') == 2  # of 3 frames
    result = invoke("jobs", "export", job_id, "--format", "video", "--video-format", "gif", "--out", "replays")
    assert result.exit_code == 0, result.output
    assert len(list(iio.imiter(next((tmp_path / "replays").glob("*.gif"))))) == 3


def test_main_returns_the_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["jobs", "show", "feedface"]) == 2
    assert capsys.readouterr().err.strip().startswith("hud-gym: error: no job with id 'feedface'")
    assert main(["--version"]) == 0


# ---------------------------------------------------------------------- a store that cannot be written

READ_ONLY_CHILD = textwrap.dedent("""
    import json, sys
    from typer.testing import CliRunner
    from hud_gym.cli.app import app
    from hud_gym.jobs import StoreError, create_job, load_job

    job_id, out = sys.argv[1], sys.argv[2]

    def cli(*args):
        result = CliRunner().invoke(app, list(args))
        return [result.exit_code, result.stdout, result.stderr]

    job = load_job(job_id)
    found = {"trajectories": [[t.task_id, t.reward] for t in job.load_trajectories()], "status": job.status,
             "list": cli("jobs", "list", "--json"), "show": cli("jobs", "show", job_id[:8], "--json"),
             "report": cli("report", job_id), "report_out": cli("report", job_id, "--out", out),
             "run": cli("run", "qa-basic", "--agent", "random", "--limit", "1"),
             "dead": [load_job("deadjob").status, [[t.status, t.reward] for t in load_job("deadjob").load_trajectories()]]}
    try:
        create_job("write")
    except StoreError as exc:
        found["create"] = str(exc)
    print(json.dumps(found))
""")


@pytest.mark.skipif(not can_mount(), reason=REASON)
@pytest.mark.timeout(180)
def test_a_read_only_store_is_read_and_writes_fail_in_one_line(agent_module: str, tmp_path: Path, home: Path) -> None:
    """``HUD_GYM_HOME`` on a read-only mount: with the -wal/-shm files of a writer that still has
    the database open (this process), and a copy without them (no writer)."""
    job_id = run_json("qa-basic", "--agent", f"{agent_module}:policy", "--limit", "1")["job"]["id"]
    stored = [[t.task_id, t.reward] for t in load_job(job_id).load_trajectories()]
    # A job and a run whose process died, not marked yet (a read-only store cannot mark them).
    exited = subprocess.Popen(["true"])
    exited.wait()
    ghost = ProcessIdentity(socket.gethostname(), exited.pid, 1.0)
    get_store().insert_job("deadjob", "died", {}, utc_now(), ghost)
    get_store().start_trajectory(Trajectory(task_id="lost", prompt="p"), "deadjob", writer=ghost)
    quiet = tmp_path / "quiet"
    quiet.mkdir()
    with sqlite3.connect(home / "hud_gym.db") as source, sqlite3.connect(quiet / "hud_gym.db") as copy:
        source.backup(copy)
    assert (home / "hud_gym.db-wal").exists() and not (quiet / "hud_gym.db-wal").exists()
    for store in (home, quiet):
        out = tmp_path / f"{store.name}-report.html"
        process = run_read_only(
            store,
            [sys.executable, "-c", READ_ONLY_CHILD, job_id, str(out)],
            env={**os.environ, "HUD_GYM_HOME": str(store)},
            timeout=120,
        )
        assert process.returncode == 0, process.stderr
        found = json.loads(process.stdout.strip().splitlines()[-1])
        assert found["trajectories"] == stored and found["status"] == "completed"
        code, stdout, _ = found["list"]
        assert code == 0 and [j["id"] for j in json.loads(stdout)] == ["deadjob", job_id]
        assert found["dead"] == ["interrupted", [["interrupted", None]]]
        code, stdout, _ = found["show"]
        assert code == 0 and json.loads(stdout)["analytics"]["trajectories"] == 1
        code, stdout, _ = found["report_out"]
        assert code == 0 and stdout.strip() == str(out) and out.is_file()
        code, _, stderr = found["report"]
        assert code == 2 and stderr.count("\n") == 1 and "Read-only file system; pass --out" in stderr
        code, _, stderr = found["run"]
        assert code == 2 and stderr.count("\n") == 1
        assert f"the job store {store} is read-only (a read-only file system)" in stderr
        assert f"the job store {store} is read-only" in found["create"]


# ---------------------------------------------------------------------- real subprocesses


def _cli(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(HUD_GYM), *args], capture_output=True, text=True, timeout=timeout, env=os.environ.copy(), check=False
    )


def test_console_script_reports_mistakes_without_a_traceback() -> None:
    for args in (
        ["jobs", "show", "nope"],
        ["run", "qa-basic", "--agent", "random", "--envs", "x"],
        ["run", "nope", "--agent", "random"],
    ):
        process = _cli(*args)
        assert process.returncode == 2, process.stderr
        assert process.stderr.count("\n") == 1 and process.stderr.startswith("hud-gym: error: ")
        assert "Traceback" not in process.stderr + process.stdout


def test_console_script_runs_a_job_and_lists_it() -> None:
    process = _cli(
        "run", "qa-basic", "--agent", "random", "--limit", "2", "--group-size", "2", "--max-steps", "2", "--seed", "1"
    )
    assert process.returncode == 0, process.stderr
    job_id = process.stdout.strip().splitlines()[-1].removeprefix("job id: ")
    job = load_job(job_id)
    assert job.status == "completed" and len(job.load_trajectories()) == 4
    assert "per task" in process.stdout and "per group" in process.stdout
    listed = _cli("jobs", "list", "--json")
    assert [j["id"] for j in json.loads(listed.stdout)] == [job_id]


@pytest.mark.e2e
@pytest.mark.timeout(420)
def test_make_demo_stores_the_job_and_writes_its_report(home: Path) -> None:
    """What ``make demo`` runs: the MiniWoB++ demo job in batched browser envs, then its report."""
    pytest.importorskip("miniwob")
    from hud_gym.controllers.browser.chromium import ChromiumNotFoundError, find_chromium
    from hud_gym.demo import GROUP_SIZE, MINIWOB_DEMO_TASKS

    try:
        find_chromium()
    except ChromiumNotFoundError as exc:
        pytest.skip(str(exc))
    process = subprocess.run(
        [sys.executable, "-m", "hud_gym.demo"],
        capture_output=True,
        text=True,
        timeout=400,  # about 40 s on a quiet machine; 170 s was not enough at load 15
        env=os.environ.copy(),
        check=False,
    )
    assert process.returncode == 0, process.stderr
    report = Path(process.stdout.strip().splitlines()[-1].removeprefix("HTML report: "))
    (job,) = list_jobs()
    assert report == home / "reports" / f"{job.id}.html" and report.is_file()
    analytics = job.get_analytics()
    assert job.status == "completed" and analytics.trajectories == len(MINIWOB_DEMO_TASKS) * GROUP_SIZE
    assert sorted(t.task_id for t in analytics.per_task) == sorted(MINIWOB_DEMO_TASKS)
    assert len(analytics.per_group) == len(MINIWOB_DEMO_TASKS)
    assert all(len(g.rewards) == GROUP_SIZE for g in analytics.per_group)
    # The scripted agent solves most tasks, not the drag and the slider.
    solved = {t.task_id for t in analytics.per_task if t.success_rate == 1.0}
    assert {"click-test", "enter-text", "login-user"} <= solved and not {"drag-box", "use-slider"} & solved
    for text in ("per task", "per group", job.id):
        assert text in process.stdout
    assert report.read_text(encoding="utf-8").count('<article class="trajectory') == analytics.trajectories


@pytest.mark.timeout(90)
def test_serve_hosts_controllers_for_a_remote_env(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("cli-secret\n")
    process = subprocess.Popen(
        [str(HUD_GYM), "serve", "qa", "--port", "0", "--token-file", str(token_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        url = None
        for line in process.stdout:
            if line.startswith(READY_PREFIX):
                url = line[len(READY_PREFIX) :].strip()
                break
        assert url and url.startswith("ws://127.0.0.1:"), process.stderr.read() if process.stderr else ""
        task = hud_gym.get_task("qa-basic/capital-france")
        env = hud_gym.make(task, controller=url, controller_token="cli-secret")
        try:
            env.reset(seed=0)
            _, reward, terminated, _, _ = env.step({"type": "response", "text": "Paris"})
            assert reward == 1.0 and terminated
        finally:
            env.close()
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


def test_functions_lists_every_setup_and_evaluate_function() -> None:
    """``hud-gym functions [GYM]``: each registered function with its signature and doc (table and JSON)."""
    from hud_gym.evaluation.registry import REGISTRY

    result = invoke("functions", "browser", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    for phase in ("setup", "evaluate"):
        names = {r["name"] for r in rows if r["phase"] == phase}
        assert names == set(REGISTRY.names(phase, "browser")) and names
    goto = next(r for r in rows if r["name"] == "goto" and r["phase"] == "setup")
    assert goto["signature"].startswith("goto(url: str") and goto["doc"]
    table = invoke("functions", "qa")
    assert table.exit_code == 0 and "match_all(answers:" in table.output and "prefill_answer(text: str)" in table.output
    assert "hud-browser" not in table.output and "page_contains" not in table.output
    assert_user_error(invoke("functions", "nope"), "unknown gym 'nope'")


def test_task_typo_gets_did_you_mean_and_the_match_is_listed() -> None:
    result = invoke("run", "miniwob", "--agent", "random", "--task", "click-tst")
    assert_user_error(result, "no task 'click-tst' (did you mean 'click-test'", "its 130 tasks: click-test,")


def test_task_file_without_gym_names_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nogym.json").write_text(
        json.dumps([{"id": "a", "prompt": "say hi", "evaluate": {"function": "response_includes", "args": ["hi"]}}])
    )
    result = invoke("run", "nogym.json", "--agent", "random", "--max-steps", "1")
    assert result.exit_code == 0, result.output
    assert "1 of 1 task(s) have no \"gym\" field, so they run on the default gym 'qa' (hud/QA-v0)" in result.output


def test_agent_needs_is_importable_from_agents() -> None:
    from hud_gym.agents import AgentNeeds, MiniWoBScriptedAgent
    from hud_gym.agents.needs import agent_needs

    assert isinstance(agent_needs(MiniWoBScriptedAgent()), AgentNeeds)
