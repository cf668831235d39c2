"""Child processes for the job-store tests (run as a script or imported by ``multiprocessing``).

``python jobs_child_process.py kill``: a job finishes three QA episodes, then two envs start an
episode each and take one step; the process prints the job id (JSON line) and blocks reading
stdin until the parent kills it. ``... exit`` does the same but exits normally instead of blocking.
``... policy-error``: ``run_job`` runs one task twice (a group of 2) in one pooled env; the
policy raises in the first run, and in the second (after the env's reset) prints a JSON line and
blocks reading stdin until the parent kills the process, before the group ends.
``HUD_GYM_HOME`` comes from the environment.
"""

from __future__ import annotations

import json
import sys
import warnings

FINISHED = 3
RUNNING = 2
_alive: list[object] = []  # envs still open when the process exits ("exit" mode)


def run(mode: str) -> None:
    import hud_gym
    from hud_gym import ResponseAction, TypeAction
    from hud_gym.jobs import RecordingWarning

    warnings.simplefilter("error", RecordingWarning)
    job = hud_gym.create_job("child", {"mode": mode})
    env = hud_gym.make("qa-basic/capital-france", job=job)
    for seed in range(FINISHED):
        env.reset(seed=seed)
        env.step(TypeAction(text="Par"))
        env.step(ResponseAction(text="Paris"))
    open_envs = [hud_gym.make("qa-basic/largest-planet", job=job) for _ in range(RUNNING)]
    running = []
    for index, open_env in enumerate(open_envs):
        open_env.reset(seed=100 + index)
        open_env.step(TypeAction(text=f"thinking {index}"))
        running.append(open_env.unwrapped.listeners[0].trajectory_id)
    _alive.extend(open_envs)
    print(json.dumps({"job_id": job.id, "running": running}), flush=True)
    if mode == "kill":
        sys.stdin.read()  # blocks until the parent's SIGKILL


def write_trajectories(job_id: str, home: str, episodes: int, steps: int) -> int:
    """A ``multiprocessing`` worker: ``episodes`` QA episodes of ``steps`` steps into ``job_id``;
    returns the number of steps taken. A failed write raises (warnings are errors here)."""
    import hud_gym
    from hud_gym import ResponseAction, TypeAction
    from hud_gym.jobs import RecordingWarning

    warnings.simplefilter("error", RecordingWarning)
    job = hud_gym.load_job(job_id, home=home)
    env = hud_gym.make("qa-basic/capital-france", job=job)
    taken = 0
    try:
        for seed in range(episodes):
            env.reset(seed=seed)
            for _ in range(steps - 1):
                env.step(TypeAction(text="P"))
                taken += 1
            env.step(ResponseAction(text="Paris"))
            taken += 1
    finally:
        env.close()
    return taken


def open_fresh_store(home: str, start_at: float) -> str:
    """A ``multiprocessing`` worker: at ``start_at`` (``time.time()``), open the store in ``home``
    (maybe not created yet), write a job and a trajectory; returns "ok" or the error's type and
    message (never raises, so the parent sees every writer's outcome)."""
    import time

    while time.time() < start_at:
        time.sleep(0.001)
    try:
        import hud_gym
        from hud_gym.trajectory import Trajectory

        job = hud_gym.create_job("fresh", home=home)
        job.add_trajectory(Trajectory(task_id="t", reward=1.0))
    except BaseException as exc:  # reported to the parent
        return f"{type(exc).__name__}: {exc}"
    return "ok"


def run_policy_error() -> None:
    """See the module docstring (``policy-error``)."""
    import itertools

    import hud_gym

    calls = itertools.count()

    def policy(observation: object, history: object, task: object) -> object:
        if next(calls) == 0:
            raise RuntimeError("model server down")
        print(json.dumps({"blocked": True}), flush=True)
        sys.stdin.read()  # blocks until the parent's SIGKILL
        raise RuntimeError("unreachable: the parent kills this process")

    hud_gym.run_job(policy, ["qa-basic/capital-france"], "killed mid-group", group_size=2, max_concurrent=1)


if __name__ == "__main__":
    run_policy_error() if sys.argv[1] == "policy-error" else run(sys.argv[1])
