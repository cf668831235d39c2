"""A job that fills its disk: run as a script with ``HUD_GYM_HOME`` on a small tmpfs
(:func:`private_mounts.run_on_tmpfs`).

``python full_disk_child.py write``: ``run_job`` over 100 QA tasks (x2) until the screenshots fill
the disk, then, while this writer process is still alive (so nothing reads its rows as
``interrupted``), prints one JSON line: the job and every trajectory row as stored. Then it
starts ``python full_disk_child.py read JOB_ID``, which reads the job through the API from
another process and prints its analytics as a second JSON line.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import warnings


def write() -> None:
    from hud_gym.jobs import list_jobs, run_job
    from hud_gym.task import Task

    warnings.simplefilter("ignore")
    tasks = [Task(id=f"t{i}", prompt=f"Say {i}. " + "x" * 200, target=str(i), gym="qa") for i in range(100)]

    def policy(observation: object, history: list[object], task: Task) -> list[dict[str, object]]:
        return [{"type": "response", "text": task.target}] if len(history) >= 2 else [{"type": "wait", "time": 1}]

    try:
        raised = None
        run_job(policy, tasks, "fills the disk", max_concurrent=4, group_size=2, max_steps=5)
    except Exception as exc:
        raised = f"{type(exc).__name__}: {exc}"
    (job,) = list_jobs()
    conn = sqlite3.connect(os.path.join(os.environ["HUD_GYM_HOME"], "hud_gym.db"))
    conn.row_factory = sqlite3.Row
    rows = [dict(r) for r in conn.execute("SELECT id, status, reward, error FROM trajectories")]
    jobs = [dict(r) for r in conn.execute("SELECT id, status, error FROM jobs")]
    print(json.dumps({"raised": raised, "job": jobs[0], "rows": rows}), flush=True)
    subprocess.run([sys.executable, __file__, "read", job.id], check=True)


def read(job_id: str) -> None:
    from hud_gym.jobs import load_job

    job = load_job(job_id)
    analytics = job.get_analytics()
    print(
        json.dumps(
            {
                "status": job.status,
                "status_counts": analytics.status_counts,
                "errors": analytics.errors,
                "error_counts": analytics.error_counts,
                "scored": analytics.scored,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    write() if sys.argv[1] == "write" else read(sys.argv[2])
