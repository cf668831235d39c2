"""GRPO groups and jobs under faults: ``rollout_group`` with G=8 on an ``EnvPool`` and ``run_job``
with groups of 8, while renderers, the shared Chromium and controller servers are SIGKILLed by a
thread at seeded random moments.

Checked (see ``fault_harness``): no exception out of ``rollout_group`` / ``run_job``; no
trajectory (returned or stored) nor step ``ok`` after a fault of its episode; a trajectory has no
reward exactly when its status is a failure; every trajectory that finished, before or during the
faults, is in the job's store with its status and reward; no process the test started is left
after the pool and the job close.

Length: ``HUD_GYM_FAULT_ROUNDS`` (1 by default); ``HUD_GYM_FAULT_SEED`` replays a run.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from fault_harness import ROUNDS, FaultThread, fault_rng
from fault_kills import Fault, kill_browser, kill_renderer, kill_server
from fault_ledger import EnvTaps, check_store, check_taps
from fault_processes import ProcessTracker, check_processes

import hud_gym
from hud_gym import ClickAction, ResponseAction, Task, TypeAction
from hud_gym.controllers.browser.chromium import (
    MANAGER,
    ChromiumNotFoundError,
    find_chromium,
)
from hud_gym.suites.miniwob import MINIWOB_TASK_AREA
from hud_gym.trajectory import FAILED, Trajectory, TrajectoryStep
from hud_gym.wrappers.rollout.grpo import rollout_group
from hud_gym.wrappers.rollout.pool import EnvPool

pytestmark = pytest.mark.timeout(120 + 60 * ROUNDS)

G = 8
MINIWOB = {"screen_size": (320, 240), "observation_crop": MINIWOB_TASK_AREA, "step_timeout": 15, "reset_timeout": 30}


def needs_chromium() -> None:
    try:
        find_chromium()
    except ChromiumNotFoundError as exc:
        pytest.skip(str(exc))
    assert MANAGER.lease_count == 0, "another test holds the shared Chromium: its kills would hit that test"


def thinking(seed: int, act: Callable[[random.Random, list[TrajectoryStep]], Any]) -> Callable[..., Any]:
    """A policy that thinks for 0-80 ms (a model's latency: faults also land between steps), then
    returns ``act(rng, history)`` (thread-safe: sync policies run in worker threads)."""
    rng, lock = random.Random(seed), threading.Lock()

    def policy(observation: dict[str, Any], history: list[TrajectoryStep], task: Task) -> Any:
        with lock:
            pause, action = rng.uniform(0.0, 0.08), act(rng, history)
        time.sleep(pause)
        return action

    return policy


def clicker(seed: int) -> Callable[..., Any]:
    """Clicks at random in MiniWoB's task area (click-test-2 ends on a button), answering now and then."""
    return thinking(
        seed,
        lambda rng, history: (
            ResponseAction(text="done")
            if rng.random() < 0.1
            else ClickAction(point=(rng.randrange(160), rng.randrange(210)))
        ),
    )


def browser_fault(rng: random.Random, taps: EnvTaps) -> Callable[[], Fault | None]:
    def inject() -> Fault | None:
        return kill_renderer(rng, taps.live()) if rng.random() < 0.6 else kill_browser(taps.live())

    return inject


def check_trajectories(trajectories: Iterable[Trajectory], hits: list[Any], seed: int) -> dict[str, int]:
    """A returned trajectory has no reward exactly when it failed; one that saw a fault failed,
    and so did each of its steps that started after the fault."""
    by_id = {t.trajectory_id: t for t in trajectories}
    bad = [(t.trajectory_id, t.status, t.reward) for t in by_id.values() if (t.status in FAILED) != (t.reward is None)]
    assert not bad, f"seed {seed}: trajectories whose reward and status disagree: {bad[:5]}"
    for fault, episode, _ in hits:
        trajectory = by_id.get(episode.trajectory_id or "")
        if trajectory is None:
            continue
        late = [s for s in trajectory.steps if s.started_at.timestamp() > fault.wall_done]
        bad += [(trajectory.trajectory_id, str(fault), s.status) for s in late if s.status not in FAILED]
        if trajectory.status not in FAILED or trajectory.reward is not None:
            bad.append((trajectory.trajectory_id, str(fault), trajectory.status))
    assert not bad, f"seed {seed}: trajectories ok after a fault of their episode: {bad[:5]}"
    counts: dict[str, int] = {}
    for trajectory in by_id.values():
        counts[trajectory.status] = counts.get(trajectory.status, 0) + 1
    for error in sorted({f"{t.status}: {(t.error or '')[:160]}" for t in by_id.values() if t.error}):
        print(error)
    return counts


def check_job_status(job: Any, counts: dict[str, int], seed: int) -> None:
    """A job that ran to its end is ``completed`` when at least one run was graded, and ``failed``
    (with the counts in its error) when the faults left no run graded."""
    graded = sum(n for status, n in counts.items() if status not in FAILED)
    expected = "completed" if graded else "failed"
    assert job.status == expected, f"seed {seed}: job {job.status} with runs {counts}"
    if expected == "failed":
        assert job.error and "every run failed" in job.error, f"seed {seed}: {job.error!r}"


def report(processes: int, hits: list[Any], counts: dict[str, int], **more: Any) -> None:
    """What the checks covered (shown with ``pytest -s``)."""
    print(f"processes tracked: {processes}; runs that saw a fault: {len(hits)}; runs: {counts}; {more or ''}")


# ----------------------------------------------------------------------------- rollout_group


@pytest.mark.parametrize("where", ["local", "server"])
def test_groups_of_eight_under_kills(where: str) -> None:
    """G=8 groups from an ``EnvPool`` while renderers and the shared Chromium are killed (local
    envs), or while the envs' browser server is killed (``controller="subprocess"``)."""
    needs_chromium()
    seed, rng = fault_rng(f"groups-{'browser' if where == 'local' else 'server'}")
    taps = EnvTaps()
    trajectories: list[Trajectory] = []
    if where == "local":
        faults = FaultThread(rng, browser_fault(rng, taps), count=2 * ROUNDS, calls=2 * G * ROUNDS)
        pool_kwargs: dict[str, Any] = MINIWOB
    else:
        faults = FaultThread(rng, lambda: kill_server("browser", taps.live()), count=ROUNDS, calls=2 * G * ROUNDS)
        pool_kwargs = {"controller": "subprocess", **MINIWOB}

    async def run() -> None:
        async with EnvPool(size=G, **pool_kwargs) as pool:
            for g in range(ROUNDS):
                policy = faults.policy(clicker(seed + g))
                group = await rollout_group("miniwob/click-test-2", policy, G, seed=seed + g, pool=pool, max_steps=6)
                assert len(group.trajectories) == G
                trajectories.extend(group.trajectories)

    with ProcessTracker() as tracker, taps.installed():
        with faults:
            asyncio.run(run())
        hits = check_taps(taps, faults.faults, seed)
        counts = check_trajectories(trajectories, hits, seed)
        processes = check_processes(tracker, seed)
    report(processes, hits, counts)


# ----------------------------------------------------------------------------- run_job


def test_a_job_of_groups_under_renderer_and_browser_kills(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    needs_chromium()
    monkeypatch.setenv("HUD_GYM_HOME", str(tmp_path / "home"))
    seed, rng = fault_rng("job-browser")
    taps = EnvTaps()
    finished: list[Trajectory] = []
    tasks = ["miniwob/click-test-2"] * ROUNDS
    with ProcessTracker() as tracker, taps.installed():
        with FaultThread(rng, browser_fault(rng, taps), count=2 * ROUNDS, calls=2 * G * len(tasks)) as faults:
            job = hud_gym.run_job(
                faults.policy(clicker(seed)),
                tasks,
                "faults",
                group_size=G,
                max_concurrent=G,
                seed=seed,
                max_steps=6,
                env_kwargs=MINIWOB,
                on_trajectory=finished.append,
            )
        assert len(finished) == G * len(tasks)
        hits = check_taps(taps, faults.faults, seed)
        counts = check_trajectories(finished, hits, seed)
        check_job_status(job, counts, seed)
        stored = check_store(job, taps, hits, seed, returned=finished)
        processes = check_processes(tracker, seed)
    report(processes, hits, counts, stored=stored)


def test_a_job_on_a_controller_server_under_server_kills(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HUD_GYM_HOME", str(tmp_path / "home"))
    seed, rng = fault_rng("job-server")
    task = Task(id="france", prompt="What is the capital of France?", gym="qa", evaluate=("response_includes", "Paris"))

    spell = thinking(
        seed,
        lambda rng, history: (
            ResponseAction(text="Paris") if len(history) >= 4 else TypeAction(text="Paris"[len(history)])
        ),
    )
    taps = EnvTaps()
    finished: list[Trajectory] = []
    with ProcessTracker() as tracker, taps.installed():
        with FaultThread(rng, lambda: kill_server("qa", taps.live()), count=2 * ROUNDS, calls=6 * G * ROUNDS) as faults:
            job = hud_gym.run_job(
                faults.policy(spell),
                [task] * (2 * ROUNDS),
                "server faults",
                group_size=G,
                max_concurrent=G,
                seed=seed,
                on_trajectory=finished.append,
                env_kwargs={"controller": "subprocess", "step_timeout": 15},
            )
        assert len(finished) == G * 2 * ROUNDS
        hits = check_taps(taps, faults.faults, seed)
        counts = check_trajectories(finished, hits, seed)
        check_job_status(job, counts, seed)
        stored = check_store(job, taps, hits, seed, returned=finished)
        processes = check_processes(tracker, seed)
    report(processes, hits, counts, stored=stored)
