"""The HUD SDK's own names and forms (issue 15): ``response_matches``, ``setup=()`` and
``evaluate=()``, ``traj.id``, ``float(grade)``, a wire grade frame's ``score``, HUD's
``CustomGym`` as a ``controller="docker"`` gym, and HUD hub task set names refused in one line."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

import hud_gym
from hud_gym import ResponseAction, Task
from hud_gym.controllers.base import ControllerError
from hud_gym.evaluation import Grade
from hud_gym.trajectory import Trajectory


def test_response_matches_is_huds_name_of_the_regex_check() -> None:
    env = hud_gym.make(Task(prompt="Planet?", gym="qa", evaluate=("response_matches", r"^Sat\w+$")))
    try:
        env.reset(seed=0)
        assert env.step(ResponseAction(text="Saturn"))[1] == 1.0
        env.reset(seed=0)
        assert env.step(ResponseAction(text="Mars"))[1] == 0.0
    finally:
        env.close()


def test_empty_tuples_mean_no_setup_and_no_evaluate() -> None:
    task = Task(prompt="p", gym="qa", setup=(), evaluate=())
    assert (task.setup, task.evaluate) == (None, None)
    assert Task.model_validate({"prompt": "p", "setup": [], "evaluate": None}).setup == []


def test_traj_id_is_the_trajectory_id() -> None:
    trajectory = Trajectory()
    assert trajectory.id == trajectory.trajectory_id and len(trajectory.id) == 32


def test_float_of_a_grade_is_its_reward_and_nan_for_an_error() -> None:
    assert float(Grade(reward=0.25)) == 0.25
    assert math.isnan(float(Grade.error("evaluator raised")))


def test_a_wire_grade_frame_reads_score_as_the_reward() -> None:
    frame = {"score": 1, "done": True, "isError": False, "content": "matched", "info": {"k": 1}}
    grade = Grade.model_validate(frame)
    assert (grade.reward, grade.done, grade.is_error, grade.content, grade.info) == (
        1.0,
        True,
        False,
        "matched",
        {"k": 1},
    )
    assert grade.raw == frame
    partial = Grade.model_validate({"score": 0.5, "isError": False})
    assert (partial.reward, partial.done) == (0.5, False)
    failed = Grade.model_validate({"score": 0, "done": False, "isError": True, "content": "grader crashed"})
    assert failed.is_error and math.isnan(float(failed))
    no_score = Grade.model_validate({"isError": False, "done": True})
    assert no_score.is_error and "no numeric 'score'" in (no_score.content or "")


def test_a_custom_gym_image_is_a_docker_gym_with_a_clear_error_without_an_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("HUD_GYM_UBUNTU_IMAGE", raising=False)
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    task = Task(prompt="p", gym={"type": "public", "location": "local", "image_or_build_context": "me/desktop:1"})
    assert task.gym == "hud-ubuntu" and task.config == {
        "docker": {"image": "me/desktop:1", "build_context": None, "host_config": None}
    }
    env = hud_gym.make(task)
    try:
        assert env.unwrapped.placement == "docker"
        assert os.environ["HUD_GYM_UBUNTU_IMAGE"] == "me/desktop:1"
        with pytest.raises(ControllerError, match="no Docker engine is reachable"):
            env.reset(seed=0)
    finally:
        env.close()


def test_a_custom_gym_build_context_must_be_built_first() -> None:
    task = Task(prompt="p", gym={"image_or_build_context": Path("/srv/ctx"), "gym": "hud-browser"})
    assert task.gym == "hud-browser" and task.config is not None
    assert task.config["docker"]["build_context"] == "/srv/ctx"
    with pytest.raises(ValueError, match=r"must be built first: `docker build -t NAME /srv/ctx`"):
        hud_gym.make(task)
    with pytest.raises(ValueError, match="gym must be a gym name or a HUD CustomGym"):
        Task(prompt="p", gym={"location": "local"})


@pytest.mark.parametrize(
    ("name", "loader"),
    [("OSWorld-Verified", "format='osworld'"), ("GAIA", "format='gaia'"), ("WebVoyager", "format='webvoyager'")],
)
def test_a_hud_hub_task_set_name_fails_in_one_line_naming_the_loader(name: str, loader: str) -> None:
    with pytest.raises(ValueError) as caught:
        hud_gym.load_taskset(name)
    message = str(caught.value)
    assert "\n" not in message and "HUD hub task set" in message and loader in message


def test_osworld_ubuntu_without_a_checkout_fails_in_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("HUD_GYM_OSWORLD", raising=False)
    with pytest.raises(ValueError) as caught:
        hud_gym.load_taskset("OSWorld-Ubuntu")  # the OSWorld suite's set, from a local checkout
    message = str(caught.value)
    assert "\n" not in message and "HUD_GYM_OSWORLD=<checkout path>" in message
