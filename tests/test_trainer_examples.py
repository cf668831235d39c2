"""The trainer examples, each one command, run end to end in a short mode with the real packages:
examples/trl_grpo_miniwob.py (TRL GRPO, real Chromium), examples/rllib_ppo.py (RLlib PPO, real
Chromium) and examples/verifiers_traces.py (verifiers 0.4, in its overlay venv)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def _chromium() -> None:
    pytest.importorskip("miniwob")
    from hud_gym.controllers.browser.chromium import ChromiumNotFoundError, find_chromium

    try:
        find_chromium()
    except ChromiumNotFoundError as exc:
        pytest.skip(str(exc))


def _run(python: str | Path, script: str, *args: str, timeout: float = 420) -> str:
    result = subprocess.run(
        [str(python), str(EXAMPLES / script), *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


@pytest.mark.timeout(480)
def test_trl_grpo_example(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    _chromium()
    _run(sys.executable, "trl_grpo_miniwob.py", "--steps", "1", "--group", "2", "--out", str(tmp_path))
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["steps"] == 1 and summary["rollouts"] == 2
    # The default reads the element list of focus-text-2; TRL logs the mean of 2 successes (1) or not (0).
    assert summary["mode"] == "elements" and summary["task"] == "focus-text-2"
    assert all(r in (0.0, 0.5, 1.0) for r in summary["rewards"]) and summary["success"] == summary["rewards"]


@pytest.mark.timeout(480)
def test_rllib_ppo_example() -> None:
    pytest.importorskip("ray.rllib")
    _chromium()
    out = _run(sys.executable, "rllib_ppo.py", "--iterations", "1", "--runners", "0", "--envs", "1", "--batch", "16")
    [row] = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert row["iteration"] == 1 and row["env_steps"] >= 16
    assert row["episode_return_mean"] is None or 0.0 <= row["episode_return_mean"] <= 1.0


@pytest.mark.timeout(200)
def test_verifiers_example(tmp_path: Path) -> None:
    python = next((p for p in (ROOT / ".venv-verifiers/bin/python",) if p.exists()), None)
    if python is None:
        pytest.skip("no .venv-verifiers (make install creates it)")
    out = _run(python, "verifiers_traces.py", "--group", "4", "--out", str(tmp_path), timeout=180)
    records = [json.loads(line) for line in (tmp_path / "traces.jsonl").read_text().splitlines()]
    assert [r["ok"] for r in records] == [True, False, True, True]
    assert records[1]["errors"][0]["type"] == "ProviderError" and records[1]["rewards"] == {}
    assert "0.67 (0.50)" in out
