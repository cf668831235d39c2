"""Vector loops under faults: 8 browser envs (inside a job), 2 desktop envs, 8 QA envs on a
controller server, stepped while renderers, the shared Chromium, Xvfb, openbox and the server are
SIGKILLed at seeded random moments (between steps, or while a step is in flight).

Checked (see ``fault_harness``): no exception out of ``step``/``send``/``recv``; no row ``ok``
after a fault of its episode (each such row is a failure with a NaN reward); a row is NaN exactly
when its status is a failure; every episode the job saw is stored with its end; no process the
test started is left after ``close()``.

Length: ``HUD_GYM_FAULT_ROUNDS`` rounds of faults (1 by default); ``HUD_GYM_FAULT_SEED`` replays a
run (each test prints its seed).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import gymnasium
import pytest
from fault_harness import ROUNDS, fault_rng
from fault_kills import Fault, kill_browser, kill_desktop, kill_renderer, kill_server
from fault_ledger import EnvTaps, VectorLog, check_store, check_taps
from fault_processes import ProcessTracker, check_processes

import hud_gym
from hud_gym import (
    ClickAction,
    MoveAction,
    PressAction,
    ResponseAction,
    Task,
    TypeAction,
)
from hud_gym.controllers.browser.chromium import (
    MANAGER,
    ChromiumNotFoundError,
    find_chromium,
)
from hud_gym.suites.miniwob import MINIWOB_TASK_AREA

pytestmark = pytest.mark.timeout(120 + 60 * ROUNDS)

STEPS = 8  # vector steps per round


def run_loop(
    envs: Any,
    rng: random.Random,
    log: VectorLog,
    act: Callable[[random.Random], Any],
    inject: Callable[[], Fault | None],
    faults_per_round: int,
) -> list[Fault]:
    """ROUNDS rounds of STEPS vector steps; ``faults_per_round`` faults each, at seeded steps:
    before the step is sent, while it is in flight (after a seeded delay), or a storm (from a
    seeded delay on, for 1-3 s, whatever comes back up is killed again: a browser or server that
    keeps crashing while the envs restart it); and, half the time, one more just before the
    caller closes the envs. Returns the faults, with the env indices they hit."""
    faults: list[Fault] = []

    def injected() -> None:
        slots = {id(env): i for i, env in enumerate(envs.envs)}  # the env objects at the kill
        fault = inject()
        if fault is not None:
            fault.slots = {slots[e] for e in fault.envs if e in slots}
            faults.append(fault)

    sent = time.monotonic()
    envs.reset(seed=rng.randrange(1000))
    log.reset(sent)
    for _ in range(ROUNDS):
        moments = {
            rng.randrange(STEPS): rng.choices(["before", "during", "storm"], [9, 7, 4])[0]
            for _ in range(faults_per_round)
        }
        for step in range(STEPS):
            actions = [act(rng) for _ in range(envs.num_envs)]
            when = moments.get(step)
            delay, storm = rng.uniform(0.0, 0.4), rng.uniform(1.0, 3.0)
            if when == "before":
                injected()
            sent = time.monotonic()
            envs.send(actions)
            if when in ("during", "storm"):
                time.sleep(delay)
                injected()
            if when == "storm":
                end = time.monotonic() + storm
                while time.monotonic() < end:
                    injected()
                    time.sleep(0.05)
            log.record(sent, envs.recv())
    if rng.random() < 0.5:
        injected()  # right before the caller closes the envs: close() must still leave nothing
    return faults


def report(processes: int, constrained: int, **more: Any) -> None:
    """What the checks covered (shown with ``pytest -s``)."""
    print(f"processes tracked: {processes}; rows that had to fail: {constrained}; {more or ''}")


# ----------------------------------------------------------------------------- browser


def test_eight_browser_envs_under_renderer_and_browser_kills(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        find_chromium()
    except ChromiumNotFoundError as exc:
        pytest.skip(str(exc))
    assert MANAGER.lease_count == 0, "another test holds the shared Chromium: its kills would hit that test"
    monkeypatch.setenv("HUD_GYM_HOME", str(tmp_path / "home"))
    seed, rng = fault_rng("vector-browser")

    def act(rng: random.Random) -> Any:  # random clicks end click-test-2 now and then (reward 1 or -1)
        if rng.random() < 0.1:
            return ResponseAction(text="done")
        return ClickAction(point=(rng.randrange(160), rng.randrange(210)))

    job = hud_gym.create_job("vector faults")
    taps = EnvTaps()
    with ProcessTracker() as tracker, taps.installed():
        envs = gymnasium.make_vec(
            "hud/Browser-v0",
            num_envs=8,
            task="miniwob/click-test-2",
            screen_size=(320, 240),
            observation_crop=MINIWOB_TASK_AREA,
            step_timeout=15,
            reset_timeout=30,
            job=job,
        )
        try:

            def inject() -> Fault | None:
                return kill_renderer(rng, envs.envs) if rng.random() < 0.7 else kill_browser(envs.envs)

            log = VectorLog(8)
            faults = run_loop(envs, rng, log, act, inject, faults_per_round=2)
        finally:
            envs.close()
        hits = check_taps(taps, faults, seed)
        constrained = log.check(faults, seed)
        counts = check_store(job, taps, hits, seed)
        processes = check_processes(tracker, seed)
    report(processes, constrained, stored=counts)


# ----------------------------------------------------------------------------- desktop


def test_desktop_envs_under_xvfb_and_window_manager_kills() -> None:
    from hud_gym.controllers.ubuntu.display import (
        DesktopNotAvailableError,
        require_programs,
    )

    try:
        require_programs("openbox")
    except DesktopNotAvailableError as exc:
        pytest.skip(str(exc))
    seed, rng = fault_rng("vector-desktop")
    task = Task(
        id="note",
        prompt="Move around, then answer.",
        gym="hud-ubuntu",
        setup=[("write_file", "notes.txt", "hello")],
        evaluate=("file_contains", "notes.txt", "hello"),
    )

    def act(rng: random.Random) -> Any:
        roll = rng.random()
        if roll < 0.25:
            return ResponseAction(text="done")
        if roll < 0.4:
            return PressAction(keys=["escape"])
        return MoveAction(point=(rng.randrange(320), rng.randrange(240)))

    taps = EnvTaps()
    with ProcessTracker() as tracker, taps.installed():
        envs = gymnasium.make_vec(
            "hud/Ubuntu-v0",
            num_envs=2,
            task=task,
            screen_size=(320, 240),
            step_timeout=15,
            reset_timeout=30,
            in_container=False,
        )
        try:

            def inject() -> Fault | None:
                return kill_desktop(rng.choice(envs.envs), rng.choice(["xvfb", "wm"]))

            log = VectorLog(2)
            faults = run_loop(envs, rng, log, act, inject, faults_per_round=3)
        finally:
            envs.close()
        check_taps(taps, faults, seed)
        constrained = log.check(faults, seed)
        processes = check_processes(tracker, seed)
    report(processes, constrained)


# ----------------------------------------------------------------------------- controller server


def test_qa_envs_on_a_controller_server_under_server_kills() -> None:
    seed, rng = fault_rng("vector-server")
    task = Task(id="france", prompt="What is the capital of France?", gym="qa", evaluate=("response_includes", "Paris"))

    def act(rng: random.Random) -> Any:
        return ResponseAction(text="Paris") if rng.random() < 0.3 else TypeAction(text=rng.choice("Paris "))

    taps = EnvTaps()
    with ProcessTracker() as tracker, taps.installed():
        envs = gymnasium.make_vec(
            "hud/QA-v0", num_envs=8, task=task, controller="subprocess", step_timeout=15, reset_timeout=60
        )
        try:
            log = VectorLog(8)
            faults = run_loop(envs, rng, log, act, lambda: kill_server("qa", envs.envs), faults_per_round=2)
        finally:
            envs.close()
        check_taps(taps, faults, seed)
        constrained = log.check(faults, seed)
        processes = check_processes(tracker, seed)
    report(processes, constrained)
