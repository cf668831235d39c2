"""``hud_gym``'s public names, and what ``import hud_gym`` loads: not the job store, the formats,
the controllers or the remote client, which load when first used."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import hud_gym

HEAVY = (
    "hud_gym.jobs",
    "hud_gym.jobs.store",
    "hud_gym.formats",
    "hud_gym.controllers.remote.client",
    "hud_gym.controllers.browser",
    "hud_gym.controllers.ubuntu",
    "hud_gym.controllers.qa",
    "hud_gym.wrappers",
    "hud_gym.cli",
    "playwright",
)


def _run(code: str, **env: str) -> dict:
    """``code`` in a fresh interpreter; it prints one JSON line, returned."""
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={**__import__("os").environ, **env},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_names_a_user_needs_are_exported_and_resolve() -> None:
    assert {
        "HudEnv",
        "Controller",
        "Trajectory",
        "HudGymError",
        "GymType",
        "register_gym",
        "make",
        "Task",
        "run_job",
        "Job",
        "load_taskset",
    } <= set(hud_gym.__all__)
    assert len(hud_gym.__all__) < 60 and len(set(hud_gym.__all__)) == len(hud_gym.__all__)
    for name in hud_gym.__all__:
        assert getattr(hud_gym, name) is not None, name
    assert set(hud_gym.__all__) <= set(dir(hud_gym))


def test_old_names_still_resolve() -> None:
    from hud_gym import formats, jobs

    assert hud_gym.run_job is jobs.run_job and hud_gym.current_job is jobs.current_job
    assert hud_gym.convert_gaia is formats.convert_gaia and hud_gym.detect_format is formats.detect_format
    for name in (
        "KEYS",
        "normalize_key",
        "sanitize_text",
        "expand_config",
        "register_envs",
        "SetupError",
        "UnknownFunctionError",
        "FunctionArgumentError",
        "UnknownKeyError",
        "ActionType",
        "FunctionConfig",
    ):
        assert hasattr(hud_gym, name), name
    with pytest.raises(AttributeError, match="no_such_name"):
        hud_gym.no_such_name  # noqa: B018


def test_import_hud_gym_loads_none_of_the_heavy_parts() -> None:
    loaded = _run(f"import hud_gym, sys, json; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    assert loaded == []


def test_a_job_id_and_a_task_file_work_in_a_process_that_imported_only_hud_gym(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    job_id = _run("import hud_gym, json; print(json.dumps(hud_gym.create_job('lazy').id))", HUD_GYM_HOME=home)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": "france", "prompt": "Capital of France?", "target": "Paris"}\n')
    code = f"""
import hud_gym, json, sys
before = [m for m in ("hud_gym.jobs", "hud_gym.formats") if m in sys.modules]
taskset = hud_gym.load_taskset({str(tasks)!r})
env = hud_gym.make(taskset[0], job={job_id!r})
env.reset(seed=0)
reward = env.step(hud_gym.ResponseAction(text="Paris"))[1]
env.close()
print(json.dumps({{"before": before, "reward": reward}}))
"""
    assert _run(code, HUD_GYM_HOME=home) == {"before": [], "reward": 1.0}
    stored = _run(
        f"import hud_gym, json; print(json.dumps([t.reward for t in hud_gym.load_job({job_id!r}).load_trajectories()]))",
        HUD_GYM_HOME=home,
    )
    assert stored == [1.0]


def test_env_and_controller_names() -> None:
    env = hud_gym.make("qa")
    try:
        assert env.gym == "qa" and env.placement == "local" and env.controller is None
        env.reset(seed=0)
        assert isinstance(env.controller, hud_gym.Controller) and env.controller.gym == env.gym
    finally:
        env.close()
