"""Browser lifecycle: finding Chromium, one shared browser per process, isolated contexts,
clean episodes, no process left behind, and Gymnasium's env checker. The tests of this process's
shared Chromium and its contexts are ``local_only``; the episode and checker tests also run with the
controller in a controller server."""

from __future__ import annotations

import os
from pathlib import Path

import gymnasium
import pytest
from browser_helpers import goto, js
from gymnasium.utils.env_checker import check_env

from hud_gym.actions import ClickAction
from hud_gym.controllers.browser import binary, chromium
from hud_gym.controllers.browser.chromium import (
    MANAGER,
    ChromiumNotFoundError,
    find_chromium,
)
from hud_gym.controllers.process_utils import alive
from hud_gym.spaces import ActionSpaceConfig

pytestmark = pytest.mark.timeout(120)

STATE_JS = """async () => ({
  cookie: document.cookie,
  local: localStorage.getItem('k'),
  session: sessionStorage.getItem('k'),
  dbs: (await indexedDB.databases()).map(d => d.name),
  history: history.length,
})"""
SET_STATE_JS = """async (v) => {
  document.cookie = 'k=' + v + '; path=/';
  localStorage.setItem('k', v);
  sessionStorage.setItem('k', v);
  await new Promise(r => { const q = indexedDB.open('db-' + v, 1); q.onsuccess = () => { q.result.close(); r(); }; });
}"""


# ----------------------------------------------------------------------------- finding Chromium


def test_find_chromium_honours_the_env_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    real = find_chromium()
    monkeypatch.setenv(chromium.CHROMIUM_ENV, str(real))
    assert find_chromium() == real
    monkeypatch.setenv(chromium.CHROMIUM_ENV, "/nonexistent/chrome")
    with pytest.raises(ChromiumNotFoundError, match="HUD_GYM_CHROMIUM"):
        find_chromium()


def test_find_chromium_prefers_a_playwright_build(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(chromium.CHROMIUM_ENV, raising=False)
    for revision in ("1100", "1187"):
        exe = tmp_path / f"chromium-{revision}" / "chrome-linux" / "chrome"
        exe.parent.mkdir(parents=True)
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path))
    assert find_chromium(headless=False) == tmp_path / "chromium-1187" / "chrome-linux" / "chrome"


def test_find_chromium_says_what_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(chromium.CHROMIUM_ENV, raising=False)
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(binary, "SYSTEM_CANDIDATES", (str(tmp_path / "none"),))
    with pytest.raises(ChromiumNotFoundError, match="apt-get install chromium"):
        find_chromium()


# ----------------------------------------------------------------------------- sharing and isolation


@pytest.mark.local_only("compares the in-process controllers' browser and contexts and sets page state through them")
def test_envs_share_one_browser_with_isolated_contexts(site: str) -> None:
    a = gymnasium.make("hud/Browser-v0", screen_size=(800, 600))
    b = gymnasium.make("hud/Browser-v0", screen_size=(800, 600))
    try:
        a.reset(seed=0)
        b.reset(seed=0)
        assert a.unwrapped.controller.state.browser is b.unwrapped.controller.state.browser
        assert a.unwrapped.controller.state.context is not b.unwrapped.controller.state.context
        goto(a, f"{site}/page2.html")
        goto(b, f"{site}/page2.html")
        js(a, SET_STATE_JS, "from-a")
        state_b = js(b, STATE_JS)
        assert state_b["cookie"] == "" and state_b["local"] is None and state_b["session"] is None
        assert state_b["dbs"] == []
        # A's next episode is clean too, on the same origin.
        a.reset(seed=0)
        _, info = goto(a, f"{site}/page2.html")
        state_a = js(a, STATE_JS)
        assert state_a == {"cookie": "", "local": None, "session": None, "dbs": [], "history": 2}
        assert [t["url"] for t in info["tabs"]] == [f"{site}/page2.html"]
        # Closing one env keeps the shared browser for the other.
        pid = MANAGER.browser_pid()
        a.close()
        assert pid is not None and alive(pid)
        _, _, _, _, info = b.step(ClickAction(point=(10, 10)))
        assert info["status"] == "ok"
    finally:
        a.close()
        b.close()


@pytest.mark.local_only("compares the in-process controller's contexts and sets page state through it")
def test_fresh_reset_mode_is_isolated_too(site: str) -> None:
    env = gymnasium.make("hud/Browser-v0", screen_size=(800, 600), reset_mode="fresh")
    try:
        env.reset(seed=0)
        first = env.unwrapped.controller.state.context
        goto(env, f"{site}/page2.html")
        js(env, SET_STATE_JS, "x")
        env.reset(seed=0)
        assert env.unwrapped.controller.state.context is not first
        goto(env, f"{site}/page2.html")
        assert js(env, STATE_JS) == {"cookie": "", "local": None, "session": None, "dbs": [], "history": 2}
    finally:
        env.close()


@pytest.mark.local_only("checks this process's Chromium")
def test_close_leaves_no_chromium_process() -> None:
    env = gymnasium.make("hud/Browser-v0", screen_size=(800, 600))
    env.reset(seed=0)
    pids = MANAGER.pids()
    assert pids and all(alive(p) for p in pids)
    download_dir = env.unwrapped.controller.state.download_dir
    assert MANAGER.lease_count >= 1
    env.close()
    if MANAGER.lease_count == 0:  # no other env of this process holds the browser
        assert [p for p in pids if alive(p)] == []
        assert not any("chrom" in _comm(p) for p in _descendants(os.getpid()))
    assert not download_dir.exists()
    env.close()  # twice is fine


def test_a_chromium_that_dies_at_launch_is_an_env_failure_that_leaves_nothing_running() -> None:
    """Found while testing the fault-injection suite: Chromium crashed at launch, and reset raised
    Playwright's TargetClosedError (no retry) and left the Playwright driver running after close."""
    from hud_gym.controllers.base import ControllerError

    before = set(_descendants(os.getpid()))
    env = gymnasium.make("hud/Browser-v0", executable_path="/bin/false")  # exits at once, as a crash would
    try:
        with pytest.raises(ControllerError, match=r"Chromium \(/bin/false\) did not start: the launch failed"):
            env.reset(seed=0)
    finally:
        env.close()
    assert [p for p in _descendants(os.getpid()) if p not in before] == []  # no driver, no browser left


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text()
    except OSError:
        return ""


def _descendants(pid: int) -> list[int]:
    import psutil

    try:
        return [c.pid for c in psutil.Process(pid).children(recursive=True) if alive(c.pid)]
    except psutil.Error:
        return []


def test_keep_page_task_keeps_the_document(site: str, controller: str) -> None:
    from hud_gym.task import Task

    env = gymnasium.make("hud/Browser-v0", screen_size=(800, 600), controller=controller)
    try:
        env.reset(seed=0)
        goto(env, f"{site}/page2.html")
        _, info = env.reset(seed=0, options={"task": Task(prompt="p", config={"keep_page": True})})
        assert info["url"] == f"{site}/page2.html"
        _, info = env.reset(seed=0)
        assert info["url"] == "about:blank"
    finally:
        env.close()


# ----------------------------------------------------------------------------- Gymnasium


# Random waits and pattern delays of up to a minute would only slow the checker down.
QUICK = ActionSpaceConfig(max_wait_ms=200, max_delay_ms=50)


@pytest.mark.filterwarnings("ignore:.*symmetric and normalized")
def test_check_env_passes(controller: str) -> None:
    env = gymnasium.make("hud/Browser-v0", screen_size=(320, 240), action_space_config=QUICK, controller=controller)
    try:
        check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()


@pytest.mark.filterwarnings("ignore:.*symmetric and normalized")
def test_check_env_with_render_check_passes(controller: str) -> None:
    env = gymnasium.make("hud/Browser-v0", screen_size=(320, 240), action_space_config=QUICK, controller=controller)
    try:
        check_env(env.unwrapped)
    finally:
        env.close()
