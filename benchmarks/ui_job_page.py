"""``hud-gym ui`` on a large job: a store with a 200-run, 7,000-step job (groups of 8, every step
with a 160x210 JPEG, a policy trace and info), then the wall time of the app's answers over real
HTTP (the ``hud-gym ui`` console script as a subprocess), medians of 5 after one warm-up:

- ``/api/jobs`` (the jobs table), ``/api/jobs/<id>`` (the job page: analytics, per task, per
  group, every run), ``/api/runs/<id>`` (a 35-step run), ``/api/groups/<id>`` (8 runs side by side).

Then ``hud-gym report`` of the job (the whole process, start-up included): linked frames (the
default past 500 steps).

Targets (issue 18): the job page answers in under 1 s; the report takes under 20 s.

    python -m benchmarks.ui_job_page
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

RUNS, STEPS, GROUP = 200, 35, 8


def build(home: Path) -> tuple[str, str, str]:
    from hud_gym.jobs.store import Store
    from hud_gym.task import Task
    from hud_gym.trajectory import Trajectory, TrajectoryStep, new_id, utc_now

    store = Store(home)
    job_id = new_id()
    store.insert_job(job_id, "big job", {}, utc_now(), None)
    rng = np.random.default_rng(0)
    frame = rng.integers(0, 255, (210, 160, 3), dtype=np.uint8)
    group_id = ""
    run_id = ""
    for i in range(RUNS):
        if i % GROUP == 0:
            group_id = new_id()
        failed = i % 25 == 7
        trajectory = Trajectory(
            group_id=group_id,
            rollout_index=i % GROUP,
            task=Task(id=f"task-{i // GROUP}", prompt="Click the button.", gym="browser"),
            task_id=f"task-{i // GROUP}",
            seed=i // GROUP,
            prompt="Click the button.",
            status="env_error" if failed else "ok",
            reward=None if failed else float(rng.integers(0, 2)),
            error="EnvError: boom" if failed else None,
            ended_at=utc_now(),
            initial_observation={"screenshot": frame},
        )
        trajectory.steps = [
            TrajectoryStep(
                index=k,
                actions=[{"type": "click", "point": {"x": 80, "y": 105}, "button": "left"}],
                reward=0.0,
                text="page text " * 20,
                info={"status": "ok", "url": "http://127.0.0.1/page"},
                timings={"step_ms": 30.0},
                policy_trace={"prompt": "x" * 400, "completion": "click(80, 105)"},
                observation={"screenshot": frame},
            )
            for k in range(STEPS)
        ]
        store.save_trajectory(trajectory, job_id)
        run_id = trajectory.trajectory_id
    store.finish_job(job_id, "completed")
    return job_id, run_id, group_id


def timed(url: str, n: int = 5) -> float:
    urllib.request.urlopen(url, timeout=60).read()  # noqa: S310  (warm-up; the app's loopback http URL)
    times = []
    for _ in range(n):
        start = time.perf_counter()
        urllib.request.urlopen(url, timeout=60).read()  # noqa: S310  (the app's loopback http URL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        start = time.perf_counter()
        job_id, run_id, group_id = build(home)
        print(f"store: {RUNS} runs, {RUNS * STEPS} steps written in {time.perf_counter() - start:.1f} s")
        hud_gym = Path(sys.executable).parent / "hud-gym"
        process = subprocess.Popen(
            [str(hud_gym), "ui", "--port", "0"],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "HUD_GYM_HOME": str(home)},
        )
        try:
            assert process.stdout is not None
            base = process.stdout.readline().split()[2]
            for name, path in (
                ("jobs table", "api/jobs"),
                ("job page", f"api/jobs/{job_id}"),
                ("run (35 steps)", f"api/runs/{run_id}"),
                ("group (8 runs)", f"api/groups/{group_id}"),
            ):
                print(f"{name:16s} {timed(base + path) * 1000:8.1f} ms")
        finally:
            process.terminate()
            process.wait(timeout=10)
        for flag in ((),):  # ("--embed-images",) takes minutes on these incompressible noise frames
            start = time.perf_counter()
            subprocess.run(
                [str(hud_gym), "report", job_id, "--out", str(home / "report.html"), *flag],
                env={**os.environ, "HUD_GYM_HOME": str(home)},
                check=True,
                capture_output=True,
            )
            size = (home / "report.html").stat().st_size / 1e6
            label = "report, embedded" if flag else "report, linked"
            print(f"{label:16s} {(time.perf_counter() - start) * 1000:8.1f} ms  ({size:.1f} MB, process included)")


if __name__ == "__main__":
    main()
