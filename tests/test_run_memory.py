"""``hud-gym run`` keeps memory flat however many runs a job has (issue 23, item 12): a finished
run is let go once it is stored, so the peak RSS of 1,000 runs is close to that of 200."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent

PEAK_RSS = """
import resource, sys
from hud_gym.cli import main
try:
    main()
finally:
    sys.stderr.write("PEAK_KIB %d\\n" % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _peak_rss_mib(tmp_path: Path, runs: int) -> float:
    tasks = tmp_path / f"tasks{runs}.jsonl"
    tasks.write_text(
        "".join(json.dumps({"id": f"t{i}", "prompt": "2+2?", "target": "4", "gym": "qa"}) + "\n" for i in range(runs))
    )
    path = os.pathsep.join(p for p in (str(TESTS.parent), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "HUD_GYM_HOME": str(tmp_path / f"home{runs}"), "PYTHONPATH": path}
    done = subprocess.run(
        [sys.executable, "-c", PEAK_RSS, "run", str(tasks), "--agent", "bounds_agents:answer_with_trace", "-n", "4"],
        cwd=TESTS,
        env=env,
        capture_output=True,
        text=True,
        timeout=500,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{runs} solved" in done.stderr + done.stdout
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("PEAK_KIB")]
    return int(line.split()[1]) / 1024


@pytest.mark.timeout(1200)
def test_peak_memory_does_not_grow_with_runs(tmp_path: Path) -> None:
    # Each run's policy trace holds 512 KiB: a job that kept its finished runs until the end
    # would peak ~400 MiB higher at 1,000 runs than at 200 (it did: every group stayed referenced).
    small = _peak_rss_mib(tmp_path, 200)
    large = _peak_rss_mib(tmp_path, 1000)
    assert large - small < 100, f"peak RSS {small:.0f} MiB for 200 runs, {large:.0f} MiB for 1,000"
