"""Per-renderer limits of the browser (issue 23, item 13): a page's spinning loop or 20 GB
allocation is stopped with its renderer (then disposed of with the env's context), ends its env's episode as ``env_error`` (reward ``None``),
and the neighbour env sharing the browser, and the browser itself, keep working.

The hog page starts only when clicked; before the click the test checks that its renderer is
under the guard (in its own cgroup with the memory backstop, or with ``RLIMIT_DATA``). Before the
limits the spinning page held a core until the env was closed and the allocation grew unbounded.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium
import psutil
import pytest

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym.actions import ClickAction, CustomAction, Point
from hud_gym.controllers.browser.chromium import MANAGER, ChromiumNotFoundError, find_chromium
from hud_gym.controllers.process_utils import alive
from hud_gym.controllers.sandbox.cgroups import BACKSTOP
from tests.support.waiting import wait_until

try:
    find_chromium()
except ChromiumNotFoundError as exc:
    pytest.skip(str(exc), allow_module_level=True)

pytestmark = pytest.mark.timeout(240)

LIMITS = {"memory_mb": 256, "cpu_seconds": 2.0}
PAGE = (
    "data:text/html,<title>{title}</title><body style='margin:0'>"
    "<button id=b style='width:400px;height:300px' onclick='hog()'>go</button><script>{script}</script>"
)
SPIN = "function hog() { setTimeout(() => { for (;;) {} }, 0); }"
ALLOCATE = (  # 20 GB in 32 MiB chunks, each touched; a pause between chunks keeps the page answering
    "const kept = []; function hog() { if (kept.length < 640) { kept.push(new Uint8Array(32 << 20).fill(7)); "
    "setTimeout(hog, 1); } }"
)


def _env() -> gymnasium.Env:
    return gymnasium.make("hud/Browser-v0", limits=LIMITS, max_steps=10_000, screen_size=(640, 480))


@pytest.fixture(scope="module")
def neighbour() -> Iterator[gymnasium.Env]:
    env = _env()
    env.reset(seed=0)
    yield env
    env.close()


@pytest.fixture
def hog_env(neighbour: gymnasium.Env) -> Iterator[gymnasium.Env]:
    env = _env()
    env.reset(seed=0)
    yield env
    env.close()


def _guard(env: gymnasium.Env) -> Any:
    key = env.unwrapped.controller.state.lease.key
    guard = MANAGER._entries[key].guard
    assert guard is not None, "the browser's renderers are guarded"
    return guard


def _page_renderers(guard: Any) -> set[int]:
    return {p for p in psutil.Process(guard.browser_pid).children(recursive=True) if _is_page_renderer(p)}


def _is_page_renderer(process: psutil.Process) -> bool:
    try:
        cmdline = process.cmdline()
    except psutil.Error:
        return False
    return "--type=renderer" in cmdline and "--top-chrome-webui" not in cmdline


def _assert_guarded(guard: Any) -> None:
    """Every page renderer of the browser is under its limits."""
    # Read afresh at each poll: a renderer can exit before the guard's next poll (one of a
    # closed env's, a spare one) and is then never the guard's to see.
    wait_until(
        lambda: {p.pid for p in _page_renderers(guard)} <= set(guard.renderers), 30, "the guard to see the renderers"
    )
    renderers = {p.pid for p in _page_renderers(guard)} & set(guard.renderers)
    for pid in renderers:
        group = guard.renderers[pid].cgroup
        if guard.mode == "rlimit":
            assert psutil.Process(pid).rlimit(psutil.RLIMIT_DATA) == (256 << 20, 256 << 20)
            continue
        assert group is not None and pid in group.pids()
        memory = group.folders["memory"]
        name = "memory.max" if group.support.version == 2 else "memory.limit_in_bytes"
        assert int((memory / name).read_text()) == BACKSTOP * (256 << 20)


def _run_hog(env: gymnasium.Env, title: str, script: str) -> tuple[Any, set[int], tuple[Any, dict[str, Any]]]:
    _, _, _, _, info = env.step(CustomAction(action="goto", args={"url": PAGE.format(title=title, script=script)}))
    assert info["status"] == "ok", info
    guard = _guard(env)
    _assert_guarded(guard)
    before = set(guard.killed)
    _, reward, _, _, info = env.step(ClickAction(point=Point(x=100, y=100)))
    return guard, {pid for pid, _ in before}, (reward, info)


def _step_until_env_error(
    env: gymnasium.Env, first: tuple[Any, dict[str, Any]], timeout: float
) -> tuple[Any, dict[str, Any]]:
    if first[1]["status"] != "ok":
        return first
    deadline = time.monotonic() + timeout
    while True:
        _, reward, terminated, _, info = env.step({"type": "wait", "time": 200})
        if info["status"] != "ok" or terminated:
            return reward, info
        assert time.monotonic() < deadline, "the hog's episode went on"


# The allocation keeps the renderer busy too: whichever limit it reaches first stops it.
@pytest.mark.parametrize(
    ("script", "reasons"), [(SPIN, ("busy for",)), (ALLOCATE, ("memory", "busy for"))], ids=["spin", "20GB"]
)
def test_a_hog_page_ends_its_episode_and_only_its_renderer(
    hog_env: gymnasium.Env, neighbour: gymnasium.Env, script: str, reasons: tuple[str, ...]
) -> None:
    guard, killed_before, first = _run_hog(hog_env, "hog", script)
    reward, info = _step_until_env_error(hog_env, first, timeout=90)
    assert info["status"] == "env_error" and math.isnan(reward), info
    wait_until(lambda: any(r.startswith(reasons) for _, r in guard.killed), 90, "the guard to stop the renderer")
    stopped = [pid for pid, r in guard.killed if r.startswith(reasons) and pid not in killed_before]
    assert stopped and all(psutil.Process(pid).status() == psutil.STATUS_STOPPED for pid in stopped)
    assert alive(guard.browser_pid), "the browser lives on"
    _, reward, _, _, info = neighbour.step({"type": "move", "point": {"x": 5, "y": 5}})
    assert info["status"] == "ok" and reward == 0.0, info
    hog_env.reset(seed=1)
    wait_until(lambda: not any(alive(pid) for pid in stopped), 60, "the browser to dispose of the stopped renderer")
    assert alive(guard.browser_pid), "the browser lives on"
    _, reward, _, _, info = hog_env.step({"type": "move", "point": {"x": 5, "y": 5}})
    assert info["status"] == "ok" and reward == 0.0, info


def test_a_closed_envs_renderer_groups_are_removed(neighbour: gymnasium.Env) -> None:
    before = set(MANAGER.pids())
    env = _env()
    env.reset(seed=0)
    guard = _guard(env)
    _assert_guarded(guard)
    mine = {pid: r.cgroup for pid, r in guard.renderers.items() if pid not in before}
    assert mine, "the env's context has renderers of its own"
    env.close()
    wait_until(lambda: not any(alive(pid) for pid in mine), 30, "the closed env's renderers to exit")
    folders: list[Path] = [f for group in mine.values() if group is not None for f in group.folders.values()]
    wait_until(lambda: not any(folder.exists() for folder in folders), 30, "their cgroups to be removed")
