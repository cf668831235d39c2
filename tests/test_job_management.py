"""Job management on a real store: ``hud-gym run --tag``, ``hud-gym jobs rename|tag|delete``,
``hud-gym jobs list --agent/--taskset/--tag``, and a job whose runs all failed stored ``failed``.

Jobs are real QA jobs run by the CLI itself (typer's CliRunner in this process) in a temporary
HUD_GYM_HOME; every result is read back from the SQLite store and the images directory."""

from __future__ import annotations

import json
import sqlite3
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import hud_gym
from hud_gym.actions import ResponseAction
from hud_gym.cli.app import app
from hud_gym.jobs import create_job, list_jobs, load_job
from hud_gym.jobs.manage import tag_job
from hud_gym.jobs.tags import parse_tags

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HUD_GYM_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


@pytest.fixture
def agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A module with a policy that answers Paris (solves capital-france) and one that crashes."""
    name = f"manage_agents_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(
        textwrap.dedent("""
        from hud_gym.actions import ResponseAction

        def paris(observation, history, task):
            return [ResponseAction(text="Paris")]

        def crash(observation, history, task):
            raise KeyError("note")
    """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def _run(agents: str, *extra: str, agent: str = "paris") -> dict[str, Any]:
    result = invoke(
        "run", "qa-basic", "--agent", f"{agents}:{agent}", "--task", "capital-france", "--seed", "0", "--json", *extra
    )
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout[result.stdout.index("{") :])["job"]


def _db_rows(home: Path, query: str, *params: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(home / "hud_gym.db") as conn:
        return conn.execute(query, params).fetchall()


def test_run_tags_the_job_and_list_filters_by_tag_agent_and_taskset(agents: str, home: Path) -> None:
    first = _run(agents, "--tag", "ckpt=800", "--tag", "baseline")
    second = _run(agents, "--tag", "ckpt=1200")
    other = hud_gym.run_job(lambda o, h, t: [ResponseAction(text="Tokyo")], ["qa-basic/capital-japan"], "other")
    stored = {row[0]: json.loads(row[1]) for row in _db_rows(home, "SELECT id, metadata FROM jobs")}
    assert stored[first["id"]]["tags"] == {"ckpt": "800", "baseline": ""}
    assert stored[second["id"]]["tags"] == {"ckpt": "1200"}
    assert "tags" not in stored[other.id]

    def listed(*args: str) -> list[str]:
        result = invoke("jobs", "list", "--json", *args)
        assert result.exit_code == 0, result.output
        return [job["id"] for job in json.loads(result.stdout)]

    assert listed("--tag", "ckpt") == [second["id"], first["id"]]
    assert listed("--tag", "ckpt=800") == [first["id"]]
    assert listed("--tag", "baseline", "--tag", "ckpt=800") == [first["id"]]
    assert listed("--agent", "paris") == [second["id"], first["id"]]  # the policy's name
    assert listed("--agent", f"{agents}:paris") == [second["id"], first["id"]]  # the CLI's agent label
    assert listed("--taskset", "qa-basic") == [second["id"], first["id"]]
    assert listed("--agent", "nobody") == []
    assert set(listed()) == {first["id"], second["id"], other.id}
    (entry,) = json.loads(invoke("jobs", "list", "--json", "--tag", "ckpt=1200").stdout)
    assert entry["tags"] == {"ckpt": "1200"} and entry["agent"] == f"{agents}:paris" and entry["taskset"] == "qa-basic"
    shown = invoke("jobs", "show", first["id"][:8])
    assert "ckpt=800 baseline" in shown.stdout and "qa-basic" in shown.stdout
    empty = invoke("jobs", "list", "--agent", "nobody")
    assert empty.exit_code == 0 and "matches the filters" in empty.stdout


def test_a_malformed_tag_is_one_line_before_any_run(agents: str, home: Path) -> None:
    for bad in ("=1200", "ck pt=1", "a" * 65, "k=" + "v" * 129, "k=a\x01b"):
        result = invoke("run", "qa-basic", "--agent", f"{agents}:paris", "--task", "capital-france", "--tag", bad)
        assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "--tag" in result.stderr, result.output
    assert list_jobs() == []
    with pytest.raises(ValueError, match="at most 32 tags"):
        parse_tags(f"k{i}=v" for i in range(33))


def test_jobs_rename_tag_and_delete_change_the_store(agents: str, home: Path) -> None:
    kept = _run(agents)
    doomed = _run(agents)
    result = invoke("jobs", "rename", kept["id"][:10], "checkpoint 1200")
    assert result.exit_code == 0, result.output
    assert _db_rows(home, "SELECT name FROM jobs WHERE id = ?", kept["id"]) == [("checkpoint 1200",)]
    assert invoke("jobs", "rename", kept["id"], "  ").exit_code == 2

    result = invoke("jobs", "tag", kept["id"], "ckpt=1200", "lr=3e-4")
    assert result.exit_code == 0 and result.stdout.strip() == "ckpt=1200 lr=3e-4", result.output
    result = invoke("jobs", "tag", kept["id"], "ckpt=1400", "--remove", "lr")
    assert result.stdout.strip() == "ckpt=1400"
    (metadata,) = _db_rows(home, "SELECT metadata FROM jobs WHERE id = ?", kept["id"])[0]
    assert json.loads(metadata)["tags"] == {"ckpt": "1400"}
    assert json.loads(metadata)["run"]["taskset"] == "qa-basic"  # the rest of the metadata is kept
    assert invoke("jobs", "tag", kept["id"], "bad key=1").exit_code == 2

    images = home / "images" / doomed["id"]
    assert images.is_dir() and any(images.rglob("*.jpg"))
    result = invoke("jobs", "delete", doomed["id"])
    assert result.exit_code == 0 and doomed["id"] in result.stdout, result.output
    assert _db_rows(home, "SELECT COUNT(*) FROM jobs WHERE id = ?", doomed["id"]) == [(0,)]
    assert _db_rows(home, "SELECT COUNT(*) FROM trajectories WHERE job_id = ?", doomed["id"]) == [(0,)]
    assert not images.exists()
    assert [job.id for job in list_jobs()] == [kept["id"]]
    missing = invoke("jobs", "delete", kept["id"], "nosuchjob")
    assert missing.exit_code == 2 and "nosuchjob" in missing.stderr
    assert load_job(kept["id"]).name == "checkpoint 1200"  # nothing deleted when one id is unknown


def test_a_running_job_is_deleted_only_with_force(home: Path) -> None:
    job = create_job("still running")
    refused = invoke("jobs", "delete", job.id)
    assert refused.exit_code == 2 and "still running" in refused.stderr and "--force" in refused.stderr
    assert load_job(job.id).status == "running"
    assert invoke("jobs", "delete", "--force", job.id).exit_code == 0
    assert list_jobs() == []


def test_a_job_whose_runs_all_failed_is_stored_failed(agents: str, home: Path) -> None:
    job = _run(agents, agent="crash")
    assert job["status"] == "failed" and "every run failed" in (job["error"] or "")
    assert _db_rows(home, "SELECT status FROM jobs WHERE id = ?", job["id"]) == [("failed",)]
    assert _db_rows(home, "SELECT status FROM trajectories WHERE job_id = ?", job["id"]) == [("policy_error",)]

    def mixed(observation: Any, history: Any, task: Any) -> Any:
        if task.id == "capital-japan":
            raise RuntimeError("down")
        return ResponseAction(text="Paris")

    partly = hud_gym.run_job(mixed, ["qa-basic/capital-france", "qa-basic/capital-japan"], "partly")
    assert partly.status == "completed" and partly.error is None  # one graded run is enough


def _scalars(logdir: Path) -> dict[str, dict[int, float]]:
    """The scalars of the TensorBoard event files under ``logdir`` (TFRecord framing: a uint64
    length, its CRC, the ``Event`` proto, its CRC), read with tensorboardX's own proto."""
    import struct

    from tensorboardX.proto import event_pb2

    found: dict[str, dict[int, float]] = {}
    for path in logdir.glob("events.out.tfevents.*"):
        data = path.read_bytes()
        offset = 0
        while offset < len(data):
            (length,) = struct.unpack_from("<Q", data, offset)
            event = event_pb2.Event.FromString(data[offset + 12 : offset + 12 + length])
            offset += 12 + length + 4
            for value in event.summary.value:
                found.setdefault(value.tag, {})[event.step] = round(value.simple_value, 4)
    return found


def test_curves_across_tagged_jobs_print_and_go_to_tensorboard(agents: str, home: Path, tmp_path: Path) -> None:
    _run(agents, "--tag", "ckpt=1200")
    _run(agents, "--tag", "ckpt=800", agent="crash")  # every run failed: no success figure, not 0
    words = hud_gym.run_job(
        lambda o, h, t: [ResponseAction(text="Rome")],
        hud_gym.TaskSet(tasks=[hud_gym.get_task("qa-basic/capital-france")], id="qa-basic"),
        "wrong",
        metadata={"tags": {"ckpt": "400"}},
    )
    assert tag_job(words.id, {"ckpt": "400"}) == {"ckpt": "400"}
    _run(agents, "--tag", "ckpt=final")
    result = invoke("jobs", "curves", "ckpt", "--json", "--tensorboard", str(tmp_path / "tb"))
    assert result.exit_code == 0, result.output
    points = json.loads(result.stdout)
    assert [p["value"] for p in points] == ["400", "800", "1200", "final"]  # numeric order, then text
    assert [p["success_rate"] for p in points] == [0.0, None, 1.0, 1.0]
    assert points[0]["per_task"] == {"capital-france": 0.0} and points[1]["errors"] == 1
    assert "left out (not integer steps): final" in result.stderr
    assert _scalars(tmp_path / "tb") == {
        "success/qa-basic": {400: 0.0, 1200: 1.0},
        "success/qa-basic/capital-france": {400: 0.0, 1200: 1.0},
        "reward/qa-basic": {400: 0.0, 1200: 1.0},
    }
    table = invoke("jobs", "curves", "ckpt")
    assert table.exit_code == 0 and "success across ckpt" in table.stdout and "final" in table.stdout
    missing = invoke("jobs", "curves", "step")
    assert missing.exit_code == 2 and "no job is tagged 'step'" in missing.stderr and "ckpt" in missing.stderr
