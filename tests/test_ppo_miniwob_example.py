"""examples/ppo_miniwob.py end to end for a tiny budget: real Chromium, real PPO, its output files."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("miniwob")

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "ppo_miniwob.py"


@pytest.mark.timeout(240)
def test_example_trains_evaluates_and_writes_its_outputs(tmp_path: Path) -> None:
    from hud_gym.controllers.browser.chromium import (
        ChromiumNotFoundError,
        find_chromium,
    )

    try:
        find_chromium()
    except ChromiumNotFoundError as exc:
        pytest.skip(str(exc))
    command = [
        sys.executable,
        str(EXAMPLE),
        "--steps",
        "64",
        "--envs",
        "2",
        "--eval-every",
        "64",
        "--eval-episodes",
        "4",
        "--seed",
        "1",
        "--out",
        str(tmp_path),
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=200, check=False)
    assert result.returncode == 0, result.stderr[-3000:]

    with open(tmp_path / "learning_curve.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    # The untrained policy, then one evaluation after PPO's first rollout (2 envs x 64 steps).
    assert [int(row["steps"]) for row in rows] == [0, 128]
    for row in rows:
        assert 0.0 <= float(row["ppo"]) <= 1.0 and 0.0 <= float(row["random"]) <= 1.0
        # Four episodes: a rate is a multiple of 1/4.
        assert (float(row["ppo"]) * 4).is_integer() and (float(row["random"]) * 4).is_integer()
    assert result.stdout.count("success: PPO") == 2

    from stable_baselines3 import PPO

    model = PPO.load(tmp_path / "ppo_click-test.zip", device="cpu")
    assert model.action_space.n == 25 and model.observation_space.shape == (3, 64, 64)  # channel-first for the CNN
