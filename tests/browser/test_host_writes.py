"""A browser env's Chromium writes nothing outside the env's own folders, and leaves nothing running.

A child process (tests/browser/host_writes_child.py) runs with ``HOME``, ``XDG_CONFIG_HOME``,
``XDG_CACHE_HOME`` and ``TMPDIR`` in this test's own folder, so the checks are hermetic: its env's
tab crashes (Chromium's Crashpad writes a minidump for it), then the env is closed. Before the fix
the dump and Crashpad's ``settings.dat`` landed in ``$HOME/.config/chromium/Crash Reports`` (on the
real host, ``/root/.config/chromium/Crash Reports/pending``: 128 dumps of ~150 KB from the fault
tests), and dconf's cache in ``$HOME/.cache``. Each test checks only the processes and folders its
child started, on both capture paths.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from hud_gym.controllers.process_utils import alive
from hud_gym.controllers.temp_folders import owner_of, sweep

pytestmark = pytest.mark.timeout(180)

CHILD = Path(__file__).with_name("host_writes_child.py")


@dataclass
class Run:
    """What one child run left: files under its ``HOME``, its launch's processes, its temp entries."""

    home_files: list[str]
    pids: list[int]
    alive_after_close: list[int]
    temp_at_crash: list[str]
    temp_after_close: list[str]
    temp_after_exit: list[str]


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if not p.is_dir())


def _child_env(root: Path) -> dict[str, str]:
    home, tmp = root / "home", root / "tmp"
    for folder in (home / ".config", home / ".cache", tmp):
        folder.mkdir(parents=True)
    return {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "TMPDIR": str(tmp),
    }


def _read(child: subprocess.Popen[str]) -> dict[str, list]:
    assert child.stdout is not None
    line = child.stdout.readline()
    if not line:
        child.wait(30)
        raise AssertionError(f"the child ended: {child.stderr.read() if child.stderr else ''}")
    return json.loads(line)


def _run(root: Path, capture: str) -> Run:
    env = _child_env(root)
    child = subprocess.Popen(
        [sys.executable, str(CHILD), capture, str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    pids: list[int] = []
    try:
        assert child.stdin is not None
        crashed = _read(child)
        pids = crashed["pids"]
        time.sleep(1.0)  # (the crash dump is written by Crashpad's handler, after the crash event)
        child.stdin.write("close\n")
        child.stdin.flush()
        closed = _read(child)
        deadline = time.monotonic() + 15  # what close() left: given a bounded while to go
        while any(alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [p for p in pids if alive(p)]
        child.stdin.write("exit\n")
        child.stdin.flush()
        child.wait(60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        for pid in pids:  # ours: end what the old code left
            with contextlib.suppress(ProcessLookupError):
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)
        child.wait(30)
    return Run(
        home_files=_files(root / "home"),
        pids=pids,
        alive_after_close=left,
        temp_at_crash=crashed["temp"],
        temp_after_close=closed["temp"],
        temp_after_exit=sorted(os.listdir(root / "tmp")),
    )


@pytest.fixture(scope="module", params=["cdp", "headed"])
def run(request: pytest.FixtureRequest) -> Iterator[Run]:
    """One child run per capture path, shared by the module's tests. Its folder is short (in the
    system's temp directory, not pytest's deep one under xdist), so that the launch folder's temp
    directory fits Chromium's socket path limit and is the one used."""
    root = Path(tempfile.mkdtemp(prefix="hw-"))
    try:
        yield _run(root, str(request.param))
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_crashed_renderer_writes_no_crash_dump_or_anything_under_home(run: Run) -> None:
    assert not [f for f in run.home_files if f.endswith(".dmp")], run.home_files
    assert run.home_files == []


def test_no_process_of_the_launch_outlives_env_close(run: Run) -> None:
    assert len(run.pids) >= 3  # the browser, its helpers, Crashpad's handlers
    assert run.alive_after_close == []


def test_the_temp_folders_of_the_env_go_with_close(run: Run) -> None:
    made = [n for n in run.temp_at_crash if n.startswith(("hud-gym-", "playwright", ".org.chromium"))]
    assert any(n.startswith("hud-gym-downloads-") for n in made), run.temp_at_crash
    # Only the process's own X authority (headed: its connections' cookies) lives to its exit.
    assert [n for n in run.temp_after_close if not n.startswith("hud-gym-xauth-")] == []
    assert run.temp_after_exit == []


def test_the_webapps_folder_of_a_killed_process_is_swept(tmp_path: Path) -> None:
    """The web apps' episode folder is named with its process (pid, start time): after a SIGKILL
    (no exit handler runs) the next process's sweep removes it."""
    env = _child_env(tmp_path)
    code = "from hud_gym.suites.webapps import server; server.base_url(); print(server._root, flush=True); input()"
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert child.stdout is not None
        folder = Path(child.stdout.readline().strip())
        assert folder.parent == tmp_path / "tmp" and folder.is_dir()
        assert owner_of(folder, "hud-gym-webapps-") is not None
        assert sweep("hud-gym-webapps-", tmp_path / "tmp") == []  # its process runs: kept
    finally:
        child.kill()
        child.wait(30)
    assert sweep("hud-gym-webapps-", tmp_path / "tmp") == [folder]


def test_a_temp_directory_too_deep_for_chromium_falls_back_to_one_it_starts_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chromium aborts at start when its singleton socket's path does not fit (the headed launch of
    a test under pytest-xdist's deep temp folders did): the launch then takes a temp directory that
    fits, never one that does not."""
    from hud_gym.controllers.browser.launch_folder import MAX_TMPDIR, LaunchFolder

    deep = tmp_path / ("d" * 80)
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    folder = LaunchFolder()
    try:
        assert len(str(folder.path / "tmp")) > MAX_TMPDIR
        assert folder.env({"TMPDIR": str(deep)})["TMPDIR"] == "/tmp"
        assert folder.env({"TMPDIR": "/var/tmp"})["TMPDIR"] == "/var/tmp"
    finally:
        folder.remove()
    shallow = LaunchFolder.__new__(LaunchFolder)
    shallow.path = Path("/tmp/hud-gym-chromium-1-2-x")
    assert shallow.env({"TMPDIR": str(deep)})["TMPDIR"] == "/tmp/hud-gym-chromium-1-2-x/tmp"
