"""Desktop lifecycle: lazy start, clean resets (processes, windows, input, files), no process left
after close, two envs at once, task processes and paths, missing packages, a dead display.

The process tests run in both modes: the default sandbox (one per episode, ended whole) and
``sandbox=False`` (one process group per episode, plus the processes carrying the env's token)."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import gymnasium
import psutil
import pytest
from desktop_helpers import open_display

from hud_gym.actions import CustomAction, KeyDownAction, MoveAction, TypeAction
from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.process_utils import alive
from hud_gym.controllers.ubuntu import UbuntuController
from hud_gym.controllers.ubuntu import display as display_module
from hud_gym.controllers.ubuntu.display import DesktopNotAvailableError, require_programs
from hud_gym.controllers.ubuntu.profile import fresh_home_entries
from hud_gym.controllers.ubuntu.sandboxed import SANDBOX_PYTHON
from hud_gym.controllers.x11 import xvfb as xvfb_module
from hud_gym.envs.ubuntu_options import UbuntuOptions
from hud_gym.rewards import graded_reward

pytestmark = pytest.mark.timeout(90)

# A task process that ignores SIGTERM, with a child that does too, and a grandchild that leaves
# the process group (setsid) and ignores SIGTERM: all must be gone after a reset.
STUBBORN = """
import os, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
code = "import os, signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); " + sys.argv[2]
child = subprocess.Popen([sys.executable, "-c", code + "; time.sleep(600)"])
escaped = subprocess.Popen([sys.executable, "-c", code + "; time.sleep(600)"], start_new_session=True)
with open(sys.argv[1], "w") as f:
    f.write(f"{os.getpid()} {child.pid} {escaped.pid}")
time.sleep(600)
"""


def pids_of(path: Path, count: int = 3, timeout: float = 10) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and len(path.read_text().split()) == count:
            return [int(p) for p in path.read_text().split()]
        time.sleep(0.02)
    raise AssertionError(f"{path} was not written")


def python(env: Any) -> str:
    """The Python a task process of ``env`` runs (the sandbox sees only the host's /usr)."""
    return SANDBOX_PYTHON if env.unwrapped.controller.state.sandbox else sys.executable


@pytest.fixture(scope="module")
def unsandboxed() -> Any:
    """A desktop with ``sandbox=False`` (its warning expected)."""
    with pytest.warns(UserWarning, match="sandbox=False"):
        env = gymnasium.make("hud/Ubuntu-v0", screen_size=(640, 480), in_container=False, sandbox=False)
        env.reset()
    yield env
    env.close()


@pytest.fixture(params=["desktop", "unsandboxed"])
def either(request: pytest.FixtureRequest) -> Any:
    """The module's sandboxed desktop, then the unsandboxed one."""
    return request.getfixturevalue(request.param)


def keys_down(display_name: str) -> list[int]:
    d = open_display(display_name)
    try:
        keymap = d.query_keymap()
        pointer = d.screen().root.query_pointer()
        return [i * 8 + b for i, byte in enumerate(keymap) for b in range(8) if byte & (1 << b)] + (
            [-1] if pointer.mask & 0x1F00 else []
        )
    finally:
        d.close()


# ----------------------------------------------------------------------------- start


def test_make_is_lazy_and_options_are_checked() -> None:
    env = gymnasium.make("hud/Ubuntu-v0")
    try:
        assert env.unwrapped.controller is None  # no Xvfb runs before the first reset
    finally:
        env.close()
    with pytest.raises(ValueError, match="window_manager"):
        gymnasium.make("hud/Ubuntu-v0", window_manager="twm")


def test_missing_programs_name_the_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    real = display_module.shutil.which
    monkeypatch.setattr(display_module.shutil, "which", lambda name, *a, **k: None if name == "Xvfb" else real(name))
    with pytest.raises(DesktopNotAvailableError, match=r"Xvfb.*apt-get install xvfb openbox"):
        require_programs("openbox")
    env = gymnasium.make("hud/Ubuntu-v0")
    try:
        with pytest.raises(DesktopNotAvailableError, match="apt-get install xvfb openbox"):
            env.reset()
    finally:
        env.close()
    monkeypatch.setattr(display_module.shutil, "which", lambda name, *a, **k: None if name == "openbox" else real(name))
    with pytest.raises(DesktopNotAvailableError, match="openbox.*apt-get install xvfb openbox"):
        require_programs("openbox")
    assert "Xvfb" in require_programs(None)


def test_a_display_number_taken_meanwhile_is_retried(
    desktop: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    taken = int(desktop.unwrapped.controller.state.display[1:])
    socket_file = Path(f"/tmp/.X11-unix/X{taken}")
    before = socket_file.stat().st_ino
    # As if another process started a server on `taken` after our check for a free number: the
    # abstract socket name it holds (this process holds it for the desktop's display) says so.
    monkeypatch.setattr(xvfb_module, "_display_free", lambda number: True)
    monkeypatch.setattr(xvfb_module, "_claimed", set())
    monkeypatch.setattr(xvfb_module, "FIRST_DISPLAY", taken)
    log = tmp_path / "xvfb.log"
    foreign = socket.socket(socket.AF_UNIX)  # another server's abstract name on the next number
    foreign.bind(f"\0/tmp/.X11-unix/X{taken + 1}")

    async def start_and_stop() -> int:
        server = await xvfb_module.start_xvfb((320, 240), log)
        try:
            assert server.alive
            return server.number
        finally:
            await server.stop()

    try:
        assert asyncio.run(start_and_stop()) > taken + 1
    finally:
        foreign.close()
    assert socket_file.stat().st_ino == before  # the desktop's socket was never replaced
    _, _, _, _, info = desktop.step(MoveAction(point=(5, 5)))
    assert info["status"] == "ok", info


# ----------------------------------------------------------------------------- reset


def test_reset_kills_every_task_process(either: Any, run: Any) -> None:
    either.reset()
    controller = either.unwrapped.controller
    out = controller.state.home / "pids"
    marker = controller.state.home / "grandchild"
    run(
        either,
        lambda c: c.desktop.spawn([python(either), "-c", STUBBORN, str(out), f"open({str(marker)!r}, 'w').close()"]),
    )
    pids = pids_of(out)
    if controller.state.sandbox:  # pids inside the sandbox: the host's are those of its processes
        pids = sorted(controller.desktop.pids()["tasks"])
        assert len(pids) == 3
    assert all(alive(p) for p in pids)
    assert set(pids) <= controller.desktop.pids()["tasks"]
    either.reset()  # the sandbox ends whole; unsandboxed: SIGTERM, a 0.5 s grace, then SIGKILL
    assert [p for p in pids if alive(p)] == []
    assert controller.desktop.pids()["tasks"] == set()


def test_reset_cleans_files_windows_input(desktop: Any, run: Any, open_eventlog: Any) -> None:
    desktop.reset()
    controller = desktop.unwrapped.controller
    (controller.state.home / "notes.txt").write_text("old")
    (controller.state.home / "dir").mkdir()
    (controller.state.tmp / "scratch").write_text("old")
    open_eventlog(desktop)
    desktop.step(KeyDownAction(keys=["shift", "ctrl"]))
    desktop.step(TypeAction(text="ΩΨ"))  # remaps spare keycodes
    desktop.step(MoveAction(point=(500, 300)))
    assert keys_down(controller.state.display)
    # A window of a client outside the task's process group: reset closes it (XKillClient).
    foreign = subprocess.Popen(
        ["xlogo", "-title", "foreign"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "DISPLAY": controller.state.display, "XAUTHORITY": str(controller.state.xauthority)},
    )
    try:
        run(desktop, lambda c: c.desktop.wait_for_window("^foreign$"))
        obs, info = desktop.reset()
        assert info["windows"] == [] and info["focused_window"] is None
        assert "Focused window: (none)" in obs["text"]
        assert run(desktop, lambda c: c.desktop.windows()) == []
        assert foreign.wait(5) is not None  # it lost its X connection
    finally:
        if foreign.poll() is None:
            foreign.kill()
            foreign.wait()
    assert {p.name for p in controller.state.home.iterdir()} == fresh_home_entries()  # the profile only
    assert [p.name for p in controller.state.tmp.iterdir()] == ["runtime"]
    assert keys_down(controller.state.display) == []
    assert desktop.step({"type": "position"})[4]["position"] == (0, 0)
    assert controller.state.input._remapped == {}


# ----------------------------------------------------------------------------- processes, paths


def _cmdline(pid: int) -> list[str]:
    try:
        return psutil.Process(pid).cmdline()
    except psutil.Error:
        return []


def test_run_and_spawn(either: Any, run: Any) -> None:
    desktop = either
    desktop.reset()
    controller = desktop.unwrapped.controller
    assert run(desktop, lambda c: c.desktop.run(["echo", "hi"])) == (0, "hi\n", "")
    code, out, _ = run(desktop, lambda c: c.desktop.run('echo "$HOME|$DISPLAY|$TMPDIR|$LANG"; exit 3'))
    assert code == 3
    assert out.strip() == f"{controller.state.home}|{controller.state.display}|{controller.state.tmp}|C.UTF-8"
    env = controller.state.child_env
    assert env["XDG_RUNTIME_DIR"].startswith(str(controller.state.tmp))
    assert env["XDG_CONFIG_HOME"].startswith(str(controller.state.home))
    with pytest.raises(TimeoutError, match="did not finish within 0.3 s"):
        run(desktop, lambda c: c.desktop.run("sleep 30 & wait", timeout=0.3))
    # The env's own processes (its sandbox's pid namespace, or those carrying its token), not the
    # machine's: another program may well run a `sleep 30` of its own.
    assert not [pid for pid in controller.desktop.pids()["tasks"] if _cmdline(pid) == ["sleep", "30"]]
    process = run(desktop, lambda c: c.desktop.spawn(["sleep", "60"]))
    assert process.pid in controller.desktop.pids()["tasks"]
    if not controller.state.sandbox:
        assert os.getpgid(process.pid) == controller.state.procs.pgid
    with pytest.raises(FileNotFoundError, match="no-such-program"):
        run(desktop, lambda c: c.desktop.spawn(["no-such-program"]))
    desktop.reset()
    assert not alive(process.pid)


def test_paths_and_shell_permission(desktop: Any) -> None:
    desktop.reset()
    controller: UbuntuController = desktop.unwrapped.controller
    home = controller.state.home
    assert controller.desktop.resolve_path("a/b.txt") == home / "a" / "b.txt"
    assert controller.desktop.resolve_path("~/c.txt") == home / "c.txt"
    assert controller.desktop.resolve_path("a/../d.txt") == home / "d.txt"
    with pytest.raises(PermissionError, match="allow_absolute_paths=True"):
        controller.desktop.resolve_path("/etc/passwd")
    with pytest.raises(PermissionError, match="allow_absolute_paths=True"):
        controller.desktop.resolve_path("../outside")
    (home / "link").symlink_to("/etc")
    with pytest.raises(PermissionError, match="allow_absolute_paths=True"):
        controller.desktop.resolve_path("link/passwd")
    assert not controller.desktop.shell_allowed()
    with pytest.raises(
        PermissionError,
        match=r"^run runs arbitrary commands: create the env with allow_shell=True "
        r"or run it inside its container \(docker/ubuntu\)$",
    ):
        controller.desktop.require_shell("run")
    free = UbuntuController(options=UbuntuOptions(allow_shell=True, allow_absolute_paths=True, in_container=False))
    assert free.desktop.shell_allowed() and free.desktop.require_shell("run") is None
    assert UbuntuController(options=UbuntuOptions(in_container=True)).desktop.shell_allowed()


def test_in_container_detection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HUD_GYM_IN_CONTAINER", "1")
    assert UbuntuController().state.in_container
    assert not UbuntuController(options=UbuntuOptions(in_container=False)).state.in_container
    monkeypatch.delenv("HUD_GYM_IN_CONTAINER")
    # A generic container marker (/.dockerenv exists on many hosts and CI runners) is not enough.
    assert not UbuntuController().state.in_container


def test_windows_and_focus(desktop: Any, run: Any, open_eventlog: Any) -> None:
    desktop.reset()
    first = open_eventlog(desktop, title="first", geometry="+20+20")
    second = open_eventlog(desktop, title="second", geometry="+300+300")
    windows = run(desktop, lambda c: c.desktop.windows())
    assert [w["title"] for w in windows] == ["first", "second"]
    by_title = {w["title"]: w for w in windows}
    assert by_title["first"]["class"] == "Hudgymeventlog"  # Tk's spelling of className="HudGymEventLog"
    assert by_title["first"]["pid"] in (first.pid, None)
    assert list(by_title["second"]["geometry"]) == second.records("geometry")[-1]["window"]
    assert run(desktop, lambda c: c.desktop.focused_window())["title"] == "second"
    _, _, _, _, info = desktop.step({"type": "click", "point": first.point("pad")})
    assert info["focused_window"] == "first" and info["windows"] == ["first", "second"]
    assert run(desktop, lambda c: c.desktop.wait_for_window("sec.nd", 1))["title"] == "second"
    with pytest.raises(TimeoutError, match=r"'nope'.*\['first', 'second'\]"):
        run(desktop, lambda c: c.desktop.wait_for_window("nope", 0.2))


def test_clipboard_owner_is_a_task_process(desktop: Any, run: Any) -> None:
    desktop.reset()
    run(desktop, lambda c: c.desktop.clipboard_set("one ü"))
    assert run(desktop, lambda c: c.desktop.clipboard_get()) == "one ü"
    run(desktop, lambda c: c.desktop.clipboard_set("two"))
    assert run(desktop, lambda c: c.desktop.clipboard_get()) == "two"
    owners = desktop.unwrapped.controller.desktop.pids()["tasks"]
    assert owners
    desktop.reset()
    assert not [p for p in owners if alive(p)]
    assert run(desktop, lambda c: c.desktop.clipboard_get()) == ""


def _cut_buffer(display: str) -> bytes | None:
    d = open_display(display)
    try:
        prop = d.screen().root.get_full_property(d.intern_atom("CUT_BUFFER0"), 0)
        return bytes(prop.value) if prop is not None else None
    finally:
        d.close()


def test_the_clipboard_is_empty_at_every_episode_and_per_env(desktop: Any, run: Any) -> None:
    """An episode's CLIPBOARD and PRIMARY go with its programs, and its cut buffers (which xterm
    writes and pastes from when no program owns PRIMARY) are removed at reset; another env's
    display has a clipboard of its own (issue 23)."""
    desktop.reset()
    controller = desktop.unwrapped.controller
    run(desktop, lambda c: c.desktop.clipboard_set("episode one"))
    code, _, err = run(
        desktop,
        lambda c: c.desktop.run(["xprop", "-root", "-f", "CUT_BUFFER0", "8s", "-set", "CUT_BUFFER0", "cut one"]),
    )
    assert code == 0, err
    assert _cut_buffer(controller.state.display) == b"cut one"
    other = gymnasium.make("hud/Ubuntu-v0", window_manager=None, screen_size=(640, 480))
    try:
        other.reset()
        assert run(other, lambda c: c.desktop.clipboard_get()) == ""
        assert _cut_buffer(other.unwrapped.controller.state.display) is None
    finally:
        other.close()
    desktop.reset()
    assert run(desktop, lambda c: c.desktop.clipboard_get()) == ""
    assert _cut_buffer(controller.state.display) is None
    code, out, _ = run(desktop, lambda c: c.desktop.run(["xclip", "-selection", "primary", "-o"], timeout=10))
    assert out == ""


# ----------------------------------------------------------------------------- close, isolation, faults


def test_close_leaves_no_process_nor_file(run: Any) -> None:
    env = gymnasium.make("hud/Ubuntu-v0", screen_size=(640, 480))
    env.reset()
    controller = env.unwrapped.controller
    out = controller.state.home / "pids"
    run(env, lambda c: c.desktop.spawn([python(env), "-c", STUBBORN, str(out), "pass"]))
    env.step(CustomAction(action="launch", args={"app": "xterm"}))
    pids_of(out)
    tasks = list(controller.desktop.pids()["tasks"])
    assert len(tasks) >= 4  # the three of STUBBORN, xterm (and its shell)
    session = [controller.desktop.pids()["xvfb"], controller.desktop.pids()["wm"]]
    session += [p.pid for pid in session for p in psutil.Process(pid).children(recursive=True)]
    base, number = controller.state.home.parent, controller.state.display[1:]
    assert Path(f"/tmp/.X{number}-lock").read_text().strip() == str(session[0])
    assert Path(f"/tmp/.X11-unix/X{number}").exists()
    env.close()
    env.close()  # twice is fine
    assert [p for p in tasks + session if alive(p)] == []
    assert not base.exists()
    assert not Path(f"/tmp/.X{number}-lock").exists()
    assert not Path(f"/tmp/.X11-unix/X{number}").exists()


def test_two_envs_at_once(desktop: Any, open_eventlog: Any, run: Any) -> None:
    desktop.reset()
    other = gymnasium.make("hud/Ubuntu-v0", window_manager=None, screen_size=(800, 600))
    try:
        other.reset()
        assert other.unwrapped.controller.state.display != desktop.unwrapped.controller.state.display
        logs = {id(desktop): open_eventlog(desktop, title="A"), id(other): open_eventlog(other, title="B")}
        # No window manager: the focus follows the pointer (PointerRoot), so point at B's window.
        other.step(MoveAction(point=logs[id(other)].point("entry")))
        texts = {id(desktop): "alpha ä 1", id(other): "beta β 2"}
        errors: list[BaseException] = []

        def typist(env: Any) -> None:
            try:
                for char in texts[id(env)]:
                    env.step(TypeAction(text=char))
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=typist, args=(e,)) for e in (desktop, other)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert not errors
        for env in (desktop, other):
            log = logs[id(env)]
            assert log.wait(lambda rs, log=log, env=env: log.text() == texts[id(env)] or None), log.text()
        # Without a window manager the focus comes from XGetInputFocus.
        _, _, _, _, info = other.step({"type": "wait", "time": 0})
        assert info["windows"] == ["B"]
    finally:
        other.close()


def test_dead_display_is_an_env_error_then_reset_restarts() -> None:
    env = gymnasium.make("hud/Ubuntu-v0", screen_size=(320, 240))
    try:
        env.reset()
        controller = env.unwrapped.controller
        old_display = controller.state.display
        os.kill(controller.desktop.pids()["xvfb"], signal.SIGKILL)
        _, _, terminated, _, info = env.step(MoveAction(point=(10, 10)))
        assert info["status"] == "env_error" and terminated
        obs, info = env.reset()
        assert env.unwrapped.controller is not controller
        assert obs["screenshot"].shape == (240, 320, 3)
        assert env.unwrapped.controller.state.display != old_display or env.unwrapped.controller is not controller
        with pytest.raises(ControllerError):
            controller.state.check_alive()
    finally:
        env.close()


@pytest.mark.parametrize("which", ["xvfb", "wm"])
def test_a_program_killed_inside_its_sandbox_is_seen_dead_at_once(which: str) -> None:
    """Found by the fault-injection suite: a step sent just after openbox (or Xvfb) died inside its
    sandbox ran as ``ok``, because only the sandbox's launcher was watched, and asyncio had not yet
    seen it exit."""
    env = gymnasium.make("hud/Ubuntu-v0", screen_size=(320, 240))
    try:
        env.reset()
        controller = env.unwrapped.controller
        launcher = controller.desktop.pids()[which]
        name = "Xvfb" if which == "xvfb" else "openbox"
        family = [psutil.Process(launcher), *psutil.Process(launcher).children(recursive=True)]
        [program] = [p.pid for p in family if p.name() == name]

        async def kill_and_check(c: Any) -> str:
            os.kill(program, signal.SIGKILL)
            while alive(program):  # blocks the loop, so asyncio cannot learn that the launcher exited
                time.sleep(0.005)  # noqa: ASYNC251  (on purpose, see above)
            with pytest.raises(ControllerError) as caught:
                c.state.check_alive()
            return str(caught.value)

        message = env.unwrapped._runner.run(kill_and_check(controller), timeout=30)
        assert ("Xvfb" if which == "xvfb" else "window manager") in message
        _, reward, terminated, _, info = env.step(MoveAction(point=(10, 10)))
        assert (info["status"], graded_reward(reward), terminated) == ("env_error", None, True), info
        _, info = env.reset()
        assert info["status"] == "ok" and env.unwrapped.controller is not controller
    finally:
        env.close()
