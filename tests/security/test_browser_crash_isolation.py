"""Issue 11, items 5 and 6: one env's browser fault is that env's fault, reported, never ``ok``.

Eight envs of one vector env share a Chromium. Killing the renderer of one env's page ends that
env's episode as ``env_error`` (its page state is gone) while the seven others step on as ``ok``
on their pages; killing the browser itself ends each env's episode as its own ``env_error`` at once
(no env blocks), the next step resets every env in a relaunched browser, and closing the vector
env leaves none of either browser's processes behind. Nothing prints "exception was never
retrieved" on the way.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import time

import gymnasium
import psutil
import pytest

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym.actions import ClickAction, CustomAction
from hud_gym.controllers.browser.chromium import MANAGER, ChromiumNotFoundError, find_chromium
from hud_gym.controllers.process_utils import alive

try:
    find_chromium()
except ChromiumNotFoundError as exc:
    pytest.skip(str(exc), allow_module_level=True)

pytestmark = pytest.mark.timeout(240)

N = 8
VICTIM = 3
HOG_MB = 300
# The victim's page holds HOG_MB of touched memory: its renderer is the one much bigger than the rest.
HOG = (
    "data:text/html,<title>hog</title><script>window.hog = new Uint8Array("
    f"{HOG_MB} * 1024 * 1024); window.hog.fill(7);</script>"
)
CALM = "data:text/html,<title>calm {i}</title><p>calm</p>"


def goto(url: str) -> CustomAction:
    return CustomAction(action="goto", args={"url": url})


def victim_renderer() -> int:
    """The pid of the renderer holding the hog page (checked to be the only big one)."""
    sizes = []
    for pid in MANAGER.pids():
        try:
            process = psutil.Process(pid)
            if "--type=renderer" in process.cmdline():
                sizes.append((process.memory_info().rss, pid))
        except psutil.Error:
            continue
    sizes.sort()
    assert len(sizes) >= 2 and sizes[-1][0] - sizes[-2][0] > (HOG_MB - 100) * 2**20, f"no single hog renderer: {sizes}"
    return sizes[-1][1]


def live(pids: set[int]) -> list[int]:
    return sorted(p for p in pids if alive(p))


def test_a_dead_renderer_or_browser_ends_only_the_episodes_it_held(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="asyncio")
    envs = gymnasium.make_vec("hud/Browser-v0", num_envs=N, screen_size=(320, 240), step_timeout=20)
    seen: set[int] = set()
    try:
        envs.reset(seed=0)
        _, _, _, _, infos = envs.step([goto(HOG if i == VICTIM else CALM.format(i=i)) for i in range(N)])
        assert list(infos["status"]) == ["ok"] * N, infos
        seen |= MANAGER.pids()

        os.kill(victim_renderer(), signal.SIGKILL)
        _, _, terminated, _, infos = envs.step([ClickAction(point=(10, 10))] * N)
        assert infos["status"][VICTIM] == "env_error" and terminated[VICTIM], infos
        assert "crashed" in infos["error"][VICTIM]
        others = [i for i in range(N) if i != VICTIM]
        assert [infos["status"][i] for i in others] == ["ok"] * (N - 1), infos
        assert [infos["title"][i] for i in others] == [f"calm {i}" for i in others]
        assert not any(terminated[i] for i in others)

        _, _, _, _, infos = envs.step([ClickAction(point=(10, 10))] * N)  # the victim resets, the rest go on
        assert list(infos["status"]) == ["ok"] * N, infos
        assert infos["url"][VICTIM] == "about:blank"
        seen |= MANAGER.pids()

        browser = MANAGER.browser_pid()
        assert browser is not None
        os.kill(browser, signal.SIGKILL)
        started = time.perf_counter()
        _, _, terminated, _, infos = envs.step([ClickAction(point=(10, 10))] * N)
        logging.getLogger(__name__).info("step after the browser died: %.2f s", time.perf_counter() - started)
        assert list(infos["status"]) == ["env_error"] * N and all(terminated), infos

        _, _, _, _, infos = envs.step([ClickAction(point=(10, 10))] * N)  # autoreset: a relaunched browser
        assert list(infos["status"]) == ["ok"] * N and list(infos["url"]) == ["about:blank"] * N, infos
        relaunched = MANAGER.browser_pid()
        assert relaunched is not None and relaunched != browser and alive(relaunched)
        _, _, _, _, infos = envs.step([goto(CALM.format(i=i)) for i in range(N)])
        assert list(infos["title"]) == [f"calm {i}" for i in range(N)], infos
        seen |= MANAGER.pids()
    finally:
        envs.close()
    assert live(seen) == [], "Chromium processes left after close"
    gc.collect()
    unretrieved = [r.getMessage() for r in caplog.records if "never retrieved" in r.getMessage()]
    assert not unretrieved, unretrieved
