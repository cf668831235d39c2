"""Trajectory exports (hud_gym.jobs.export) of a real QA job: JSONL, MP4/GIF/WebP replays and
HUD-style JSON, each read back (parsed, decoded, counted) and checked against the job store."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from urllib.request import url2pathname

import imageio.v3 as iio
import numpy as np
import pytest
from PIL import Image

import hud_gym
from hud_gym import Task
from hud_gym.actions import ResponseAction, TypeAction, parse_action
from hud_gym.jobs import Job
from hud_gym.jobs.export import (
    describe_action,
    export_hud_json,
    export_job,
    export_jsonl,
    export_video,
    export_videos,
    trajectory_frames,
)
from hud_gym.trajectory import Trajectory

INITIAL = "initial_observation_ref"


def _policy(observation: dict[str, Any], history: list[Any], task: Task) -> list[Any]:
    if task.id == "crash":
        raise RuntimeError("agent crashed")
    if not history:
        return [TypeAction(text="thinking")]
    return [ResponseAction(text="Paris")]


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> Job:
    """A stored QA job: a success, a wrong answer, a policy crash (policy_error, reset screenshot
    only) and a broken setup (env_error, no screenshot), each twice (groups of 2)."""
    tasks = [
        hud_gym.get_task("qa-basic/capital-france"),
        hud_gym.get_task("qa-basic/largest-planet"),
        Task(id="crash", prompt="The agent crashes here.", target="x", gym="qa"),
        Task(id="broken-setup", prompt="Setup fails.", setup=[("show_passage",)], target="x", gym="qa"),
    ]
    return hud_gym.run_job(
        _policy,
        tasks,
        "export-fixture",
        group_size=2,
        max_concurrent=4,
        seed=0,
        max_steps=4,
        home=tmp_path_factory.mktemp("home"),
    )


@pytest.fixture(scope="module")
def stored(job: Job) -> dict[str, Trajectory]:
    return {t.trajectory_id: t for t in job.load_trajectories()}


def _pixels(data: bytes | Path) -> np.ndarray:
    source = io.BytesIO(data) if isinstance(data, bytes) else data
    with Image.open(source) as image:
        return np.asarray(image.convert("RGB"))


def test_the_fixture_job_has_every_kind_of_run(stored: dict[str, Trajectory]) -> None:
    statuses = sorted((t.task_id, t.status, t.reward) for t in stored.values())
    assert (
        statuses
        == [("broken-setup", "env_error", None)] * 2
        + [("capital-france", "ok", 1.0)] * 2
        + [("crash", "policy_error", None)] * 2
        + [("largest-planet", "ok", 0.0)] * 2
    )


def test_jsonl_has_one_training_record_per_trajectory(job: Job, stored: dict[str, Trajectory], tmp_path: Path) -> None:
    path = export_jsonl(job, tmp_path / "out" / "train.jsonl")
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert sorted(r["trajectory_id"] for r in records) == sorted(stored)
    for record in records:
        trajectory = stored[record["trajectory_id"]]
        assert record["job_id"] == job.id
        assert (record["group_id"], record["task_id"], record["seed"], record["status"]) == (
            trajectory.group_id,
            trajectory.task_id,
            trajectory.seed,
            trajectory.status,
        )
        assert record["prompt"] == trajectory.prompt and record["prompt"]
        assert record["reward"] == trajectory.reward
        assert record["failed"] is (trajectory.status in ("env_error", "policy_error"))
        if record["failed"]:
            assert record["reward"] is None and record["error"]
        assert record["step_rewards"] == [s["reward"] for s in record["steps"]] == trajectory.step_rewards
        assert len(record["steps"]) == len(trajectory.steps)
        for step, original in zip(record["steps"], trajectory.steps, strict=True):
            actions = [parse_action(a) for a in step["actions"]]  # valid CLA JSON
            assert [a.model_dump(mode="json", exclude_none=True) for a in actions] == original.actions
            assert step["image"] == original.observation_ref and Path(step["image"]).is_file()
        assert record["initial_image"] == trajectory.metadata.get(INITIAL)
    groups: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        groups.setdefault(record["group_id"], []).append(record)
    assert sorted(len(g) for g in groups.values()) == [2, 2, 2, 2]
    assert all(len({r["task_id"] for r in g}) == 1 and len({r["seed"] for r in g}) == 1 for g in groups.values())


def test_jsonl_inlines_images_as_base64_on_request(job: Job, stored: dict[str, Trajectory], tmp_path: Path) -> None:
    records = [
        json.loads(line)
        for line in export_jsonl(job, tmp_path / "b64.jsonl", images="base64").read_text(encoding="utf-8").splitlines()
    ]
    checked = 0
    for record in records:
        trajectory = stored[record["trajectory_id"]]
        pairs = [(record["initial_image"], trajectory.metadata.get(INITIAL))]
        pairs += [(s["image"], o.observation_ref) for s, o in zip(record["steps"], trajectory.steps, strict=True)]
        for inline, ref in pairs:
            if ref is None:
                assert inline is None
                continue
            header, _, payload = inline.partition(",")
            assert header == "data:image/jpeg;base64"
            np.testing.assert_array_equal(_pixels(base64.b64decode(payload)), _pixels(Path(ref)))
            checked += 1
    assert checked == 6 + 4 * 2  # 6 reset screenshots (not the broken setups) + 2 steps x 4 answered runs
    without = export_jsonl(job, tmp_path / "none.jsonl", images="none").read_text(encoding="utf-8").splitlines()
    assert all(json.loads(line)["initial_image"] is None for line in without)


@pytest.mark.parametrize("video_format", ["mp4", "gif", "webp"])
def test_replays_have_a_frame_for_the_reset_and_each_step(
    job: Job, stored: dict[str, Trajectory], tmp_path: Path, video_format: str
) -> None:
    paths = export_videos(job, tmp_path / "replays", video_format=video_format)
    replayable = [t for t in stored.values() if t.metadata.get(INITIAL)]
    assert len(paths) == len(replayable) == 6  # the broken setups have no screenshot to show
    by_id = {t.trajectory_id[:8]: t for t in stored.values()}
    for path in paths:
        assert path.suffix == f".{video_format}" and path.stat().st_size > 0
        trajectory = by_id[path.stem.rsplit("-", 1)[1]]
        frames = [
            np.asarray(f)[..., :3] for f in iio.imiter(path, plugin="FFMPEG" if video_format == "mp4" else "pillow")
        ]
        assert len(frames) == 1 + len(trajectory.steps)
        assert all(f.shape[0] % 2 == 0 and f.shape[1] % 2 == 0 for f in frames)
        # The first frame shows the reset screenshot above the caption band.
        screenshot = _pixels(Path(trajectory.metadata[INITIAL]))
        top = frames[0][: screenshot.shape[0], : screenshot.shape[1]].astype(int)
        tolerance = 12 if video_format != "gif" else 40  # lossy codecs; a GIF has a 256-colour palette
        assert np.abs(top - screenshot.astype(int)).mean() < tolerance


def test_replay_frames_and_single_video(stored: dict[str, Trajectory], tmp_path: Path) -> None:
    answered = next(t for t in stored.values() if t.task_id == "capital-france")
    frames = trajectory_frames(answered, caption=False)
    assert len(frames) == 3 and frames[0].shape == (720, 1280, 3)
    assert not np.array_equal(frames[0], frames[2])  # the screen changed as the agent typed
    captioned = trajectory_frames(answered)
    assert captioned[0].shape[0] > 720 and np.array_equal(captioned[0][:720], frames[0])
    broken = next(t for t in stored.values() if t.task_id == "broken-setup")
    assert trajectory_frames(broken) == [] and export_video(broken, tmp_path / "x.mp4") is None
    path = export_video(answered, tmp_path / "one.gif", fps=4)
    assert path is not None and len(list(iio.imiter(path))) == 3
    with pytest.raises(ValueError, match="video format"):
        export_video(answered, tmp_path / "x.avi")
    with pytest.raises(ValueError, match="fps"):
        export_video(answered, tmp_path / "x.mp4", fps=0)


def test_hud_json_has_hud_trajectory_shape(job: Job, stored: dict[str, Trajectory], tmp_path: Path) -> None:
    document = json.loads(export_hud_json(job, tmp_path / "hud.json").read_text(encoding="utf-8"))
    assert document["job"]["id"] == job.id and document["job"]["name"] == "export-fixture"
    items = {item["id"]: item for item in document["trajectories"]}
    assert sorted(items) == sorted(stored)
    for trajectory_id, item in items.items():
        trajectory = stored[trajectory_id]
        assert set(item) >= {"id", "reward", "logs", "error", "trajectory"}
        assert item["reward"] == trajectory.reward and item["error"] == trajectory.error
        steps = item["trajectory"]
        assert len(steps) == 1 + len(trajectory.steps) and steps[0]["actions"] == []
        for step in steps:
            assert set(step) == {"observation_url", "observation_text", "actions", "start_timestamp", "end_timestamp"}
        for step, original in zip(steps[1:], trajectory.steps, strict=True):
            assert step["actions"] == original.actions and step["observation_text"] == original.text
            url = urlparse(step["observation_url"])
            assert url.scheme == "file" and Path(url2pathname(url.path)) == Path(original.observation_ref)
        if trajectory.status == "env_error":
            assert steps[0]["observation_url"] is None and item["reward"] is None
    inline = json.loads(
        export_hud_json(list(stored.values()), tmp_path / "inline.json", images="base64").read_text(encoding="utf-8")
    )
    assert inline["job"] is None
    urls = [s["observation_url"] for t in inline["trajectories"] for s in t["trajectory"] if s["observation_url"]]
    assert len(urls) == 14 and all(u.startswith("data:image/jpeg;base64,") for u in urls)


def test_export_job_dispatches_and_refuses_bad_options(job: Job, tmp_path: Path) -> None:
    (written,) = export_job(job, "jsonl", tmp_path / "a.jsonl")
    assert len(written.read_text(encoding="utf-8").splitlines()) == 8
    progress: list[tuple[int, int]] = []
    videos = export_job(
        job, "video", tmp_path / "v", video_format="webp", on_progress=lambda d, n: progress.append((d, n))
    )
    assert len(videos) == 6 and progress[-1] == (8, 8)
    for bad in ({"export_format": "csv"}, {"images": "inline"}, {"video_format": "avi"}):
        arguments = {"export_format": "jsonl", **bad}
        with pytest.raises(ValueError, match="must be one of"):
            export_job(job, arguments.pop("export_format"), tmp_path / "bad", **arguments)
    with pytest.raises(TypeError, match="Job or Trajectory"):
        export_jsonl(["not a trajectory"], tmp_path / "bad.jsonl")


def test_actions_read_as_short_phrases() -> None:
    assert describe_action({"type": "click", "point": {"x": 3, "y": 4}, "button": "left"}) == "click left at (3, 4)"
    assert describe_action({"type": "press", "keys": ["ctrl", "a"]}) == "press ctrl+a"
    assert describe_action({"type": "type", "text": "hi", "enter_after": True}) == 'type "hi" + enter'
    assert describe_action({"type": "drag", "path": [{"x": 1, "y": 2}, {"x": 5, "y": 6}]}) == "drag (1, 2) → (5, 6)"
