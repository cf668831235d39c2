"""Nothing an env started outlives it: the children of an isolated evaluator die with its killed
worker process, and the temp folders of an env (a desktop's home and X cookie, a browser's
downloads) go at interpreter exit even without ``close()``, or, after a ``SIGKILL``, at the next
start of a process (only folders whose owner is dead).

Each test checks only the processes and folders it started.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from hud_gym import ResponseAction, Task
from hud_gym.controllers.process_utils import alive
from hud_gym.controllers.temp_folders import make_temp_folder, owner_of, sweep
from hud_gym.envs.qa import QAEnv
from hud_gym.evaluation.worker_pool import get_worker_pool
from hud_gym.rewards import graded_reward

sys.path.insert(0, str(Path(__file__).parent))
import failing_functions  # noqa: F401  (registers the evaluators)

pytestmark = pytest.mark.timeout(240)


def wait_gone(pids: list[int], timeout: float = 30.0) -> list[int]:
    """The pids of ``pids`` still alive after up to ``timeout`` s (a zombie counts as gone)."""
    deadline = time.monotonic() + timeout
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def test_the_children_of_a_killed_evaluation_worker_die_with_it(tmp_path: Path) -> None:
    pool = get_worker_pool()
    assert pool.wait_ready(60)  # the call goes to a worker process (not to a thread of this one)
    pid_file = tmp_path / "pids"
    task = Task(id="t", prompt="?", gym="qa", evaluate=("failing_spawns", str(pid_file), 5))
    env = QAEnv(task=task, step_timeout=3.0, screen_size=(32, 32))
    children: list[int] = []
    try:
        env.reset(seed=0)
        _, reward, _, _, info = env.step(ResponseAction(text="Paris"))
        assert (graded_reward(reward), info["status"]) == (None, "timeout")
        children = [int(p) for p in pid_file.read_text().split()]
        assert len(children) == 5
    finally:
        env.close()
        left = wait_gone(children)
        for pid in left:  # (the old code left them: end them here, they are ours)
            os.kill(pid, signal.SIGKILL)
    assert left == []


CHILD = textwrap.dedent(
    """
    import gymnasium, hud_gym
    ubuntu = gymnasium.make("hud/Ubuntu-v0", in_container=False, screen_size=(320, 240))
    ubuntu.reset(seed=0)
    browser = gymnasium.make("hud/Browser-v0", screen_size=(320, 240))
    browser.reset(seed=0)
    print(ubuntu.unwrapped.controller.state.session.base, flush=True)
    print(browser.unwrapped.controller.state.download_dir, flush=True)
    {end}
    """
)


def _child_folders(end: str) -> tuple[subprocess.Popen[str], list[Path]]:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD.format(end=end)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert child.stdout is not None
    folders = [Path(child.stdout.readline().strip()) for _ in range(2)]
    assert all(f.name for f in folders), child.stderr.read() if child.stderr else ""
    assert all(f.is_dir() for f in folders), folders
    return child, folders


def test_an_env_that_exits_without_close_leaves_no_temp_folder() -> None:
    child, folders = _child_folders("import sys; sys.stdin.readline()")  # then exits, both envs open
    try:
        child.communicate("go\n", timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):  # what of its group is left (Playwright's driver)
            os.killpg(child.pid, signal.SIGKILL)
    assert [f for f in folders if f.exists()] == []


class Owner:
    """An object a temp folder belongs to."""


def test_the_folders_of_a_killed_process_are_swept_at_the_next_start() -> None:
    child, folders = _child_folders("import time; time.sleep(600)")
    assert owner_of(folders[0], "hud-gym-ubuntu-") == owner_of(folders[1], "hud-gym-downloads-") is not None
    os.killpg(child.pid, signal.SIGKILL)  # the child and what it started: no exit handler runs
    child.wait(60)
    assert all(f.exists() for f in folders)
    # A live process's folder (a sleep this test starts) is never swept, a dead one's is.
    live = subprocess.Popen(["sleep", "120"])
    try:
        start = round(psutil.Process(live.pid).create_time() * 100)
        kept = Path(tempfile.mkdtemp(prefix=f"hud-gym-ubuntu-{live.pid}-{start}-"))
        reused = Path(tempfile.mkdtemp(prefix=f"hud-gym-ubuntu-{live.pid}-{start + 1}-"))  # a reused pid
        owner = Owner()  # (the folder goes when its owner does)
        ours = make_temp_folder("hud-gym-ubuntu-", owner)
        removed = set(sweep("hud-gym-ubuntu-")) | set(sweep("hud-gym-downloads-"))
        assert not folders[0].exists() and not folders[1].exists() and not reused.exists()
        assert kept.exists() and ours.exists() and kept not in removed and ours not in removed
    finally:
        live.kill()
        live.wait()
        for folder in (kept, ours):
            shutil.rmtree(folder, ignore_errors=True)
