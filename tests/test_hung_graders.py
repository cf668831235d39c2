"""Hung sync evaluators (blocked on a thread for good, as on a FIFO an agent swapped in under a
checked file) take no later evaluator's place, and do not keep the process from exiting.

On the old code the evaluators shared a pool of 32 threads: once 32 hung, every later evaluator of
the process waited behind them and timed out, and the pool's threads were joined at exit.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from hud_gym import ResponseAction, Task
from hud_gym.envs.qa import QAEnv
from hud_gym.evaluation.threads import hung_threads
from hud_gym.wrappers.vector import HudVectorEnv

sys.path.insert(0, str(Path(__file__).parent))
import failing_functions

pytestmark = pytest.mark.timeout(180)

HUNG = 40
SMALL = (32, 32)
"""A small screen: 40 envs with 1280x720 observation spaces take ~1 s each to make."""


def qa_task(evaluate: object, task_id: str) -> Task:
    return Task(id=task_id, prompt="Capital of France?", gym="qa", evaluate=evaluate)


def test_hung_sync_evaluators_do_not_take_the_place_of_later_ones() -> None:
    started, release, finished = failing_functions.events("exhaust")
    hanging = qa_task(("failing_hangs", "exhaust"), "hangs")
    envs = HudVectorEnv([lambda: QAEnv(task=hanging, step_timeout=2.0, screen_size=SMALL)] * HUNG)
    try:
        envs.reset(seed=0)
        _, rewards, _, _, infos = envs.step([ResponseAction(text="Paris")] * HUNG)
        assert set(infos["status"].tolist()) == {"timeout"} and np.isnan(rewards).all()
        assert hung_threads() >= HUNG and not finished.is_set()
        env = QAEnv(task=qa_task(("failing_answers", 1.0), "fast"), step_timeout=20.0)
        try:
            for seed in range(3):  # a correct evaluator grades, now and later
                env.reset(seed=seed)
                _, reward, _, _, info = env.step(ResponseAction(text="Paris"))
                assert (reward, info["status"]) == (1.0, "ok"), info.get("error")
        finally:
            env.close()
        assert not finished.is_set()  # (graded while every hung evaluator still hung)
    finally:
        release.set()
        envs.close()
    deadline = time.monotonic() + 60
    while hung_threads() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert hung_threads() == 0  # a released evaluator's thread ends and is no longer counted


CHILD = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tests!r})
    import failing_functions
    from hud_gym import ResponseAction, Task
    from hud_gym.envs.qa import QAEnv
    from hud_gym.rewards import graded_reward

    task = Task(id="t", prompt="Capital of France?", gym="qa", evaluate=("failing_blocks", 3600.0))
    env = QAEnv(task=task, step_timeout=1.0)
    env.reset(seed=0)
    _, reward, _, _, info = env.step(ResponseAction(text="Paris"))
    assert (graded_reward(reward), info["status"]) == (None, "timeout"), info
    env.close()
    print("closed", flush=True)
    """
)


def test_a_process_with_a_hung_evaluator_exits_after_close() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD.format(tests=str(Path(__file__).parent))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = child.communicate(timeout=90)  # generous on a loaded machine; the hang is 3,600 s
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
        pytest.fail(f"the process did not exit after close(): {out!r} {err[-2000:]!r}")
    assert child.returncode == 0 and "closed" in out, err[-2000:]
