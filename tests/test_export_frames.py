"""Issue 28, item 14: what a step's image shows, said in the JSONL export (``image_shows``:
after the step's actions, repeated from before them when the step failed, or a suite's end
cover), and replays that end on the last real frame, not MiniWoB++'s START cover. Real jobs:
MiniWoB++'s click-test in Chromium, a QA step that times out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

import hud_gym
from hud_gym import Task, WaitAction
from hud_gym.agents.miniwob_scripted import MiniWoBScriptedAgent
from hud_gym.jobs.export import export_jsonl, trajectory_frames

pytestmark = pytest.mark.timeout(300)


class WaitThenSolve:
    """Waits one step (a frame of the page after an action), then solves click-test."""

    def __init__(self) -> None:
        self.solver = MiniWoBScriptedAgent()

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> list[Any]:
        return [WaitAction(time=0)] if info.get("step", 0) == 0 else self.solver.act(observation, info)


def _pixels(path: str) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))


def test_miniwob_cover_is_marked_and_the_replay_ends_on_the_page(tmp_path: Path) -> None:
    pytest.importorskip("miniwob")
    job = hud_gym.run_job(
        WaitThenSolve(),
        ["miniwob/click-test"],
        "cover",
        seed=0,
        max_steps=5,
        env_kwargs={"elements": True},
        home=tmp_path / "home",
    )
    (run,) = job.load_trajectories()
    assert run.status == "ok" and run.reward == 1.0 and len(run.steps) == 2
    assert [step.info["observed"] for step in run.steps] == ["after", "cover"]

    (record,) = [json.loads(line) for line in export_jsonl(job, tmp_path / "runs.jsonl").read_text().splitlines()]
    assert [step["image_shows"] for step in record["steps"]] == ["after", "cover"]

    page, cover = _pixels(run.steps[0].observation_ref), _pixels(run.steps[1].observation_ref)
    assert not np.array_equal(page, cover)  # the START cover is not the page
    frames = trajectory_frames(run, caption=False, min_width=page.shape[1], max_width=None)
    assert len(frames) == 3
    # the replay's last frame is the last real page, not the cover
    last = frames[-1][: page.shape[0], : page.shape[1]]
    assert np.array_equal(last, page), (last.mean(), page.mean(), cover.mean())


def test_a_failed_step_says_its_image_is_the_one_before(tmp_path: Path) -> None:
    task = Task(id="slow", prompt="2+2?", target="4", gym="qa")
    job = hud_gym.run_job(
        lambda observation, history, task: [WaitAction(time=3000)],
        [task],
        "repeated",
        seed=0,
        max_steps=3,
        env_kwargs={"step_timeout": 1.0},
        home=tmp_path / "home",
    )
    (run,) = job.load_trajectories()
    assert run.status == "timeout" and run.steps[-1].status == "timeout"
    (record,) = [json.loads(line) for line in export_jsonl(job, tmp_path / "runs.jsonl").read_text().splitlines()]
    assert record["steps"][-1]["image_shows"] == "repeated"
