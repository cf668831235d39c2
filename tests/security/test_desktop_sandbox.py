"""The desktop gym's sandbox (issue 11, items 2, 3 and 11): a task file, an agent or a server
client reaches nothing of the host.

Every attack runs one probe, a bash line that records who runs it and tries the host: read
``/etc/shadow``, a secret in ``$HUD_GYM_HOME`` (world-readable, so only the sandbox keeps it out),
list ``/root``, and write into a world-writable host folder. It is attempted the ways the issue
found (a task's ``.bashrc`` then ``launch("xterm")``; a task's Tk profile ``~/.editor.py`` then
``open_file``; an agent typing into the allowed xterm), through ``run`` of a task on an env with
``allow_shell=True``, and through an untrusted controller server. On the host (root here) the
probe must run as the sandbox's user (uid 1000 inside; an unprivileged uid on the host) and find
nothing: before the sandbox each of these ran it as root and read everything.

The envs are made as a user would (``in_container=False`` only: the sandbox is the default), so
the same tests run against the code before the sandbox fail.
"""

from __future__ import annotations

import os
import shlex
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium
import psutil
import pytest

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym import CustomAction, SetupError, Task
from hud_gym.controllers.process_utils import alive
from hud_gym.task import expand_config

pytestmark = pytest.mark.timeout(90)

try:
    from hud_gym.controllers.ubuntu.display import require_programs

    require_programs("openbox")
except Exception as _exc:
    pytest.skip(f"no desktop on this machine: {_exc}", allow_module_level=True)


class Host:
    """What the probe must not reach: a secret in ``$HUD_GYM_HOME`` and a folder to write into."""

    def __init__(self, root: Path) -> None:
        self.secret = f"HUD-GYM-HOME-SECRET-{uuid.uuid4().hex}"
        self.hud_home = root / "hud-gym-home"
        self.hud_home.mkdir(mode=0o755)
        (self.hud_home / "secret.txt").write_text(self.secret)
        (self.hud_home / "secret.txt").chmod(0o644)
        self.outside = root / "outside"
        self.outside.mkdir()
        self.outside.chmod(0o777)
        for folder in (root, root.parent):
            folder.chmod(0o755)

    def probe(self) -> str:
        """The bash line: ``~/probe-uid`` (who), ``~/probe-read`` (what it read), a file outside."""
        secret = shlex.quote(str(self.hud_home / "secret.txt"))
        return (
            f"id -u > ~/probe-uid.part; {{ cat /etc/shadow; cat {secret}; ls -a /root; "
            f"ls {shlex.quote(str(self.hud_home))}; }} > ~/probe-read 2>&1; "
            f"echo escaped > {shlex.quote(str(self.outside / 'escaped'))}; mv ~/probe-uid.part ~/probe-uid"
        )

    def python_probe(self) -> str:
        """The probe as Python (for Tk's profile scripts)."""
        return f"import subprocess\nsubprocess.run(['bash', '-c', {self.probe()!r}])\n"

    def assert_contained(self, home: Path, timeout: float = 20.0) -> None:
        """The probe ran, as the sandbox's user, and reached nothing of the host."""
        uid_file = home / "probe-uid"
        deadline = time.monotonic() + timeout
        while not uid_file.exists():
            assert time.monotonic() < deadline, f"the probe did not run: {sorted(p.name for p in home.iterdir())}"
            time.sleep(0.05)
        assert uid_file.read_text().strip() == "1000", "the probe ran as root (or the host user), not in the sandbox"
        assert os.stat(uid_file).st_uid != 0, "the probe's files belong to root on the host"
        read = (home / "probe-read").read_text(errors="replace")
        lines = read.splitlines()
        assert self.secret not in read and "secret.txt" not in lines, f"the probe read $HUD_GYM_HOME: {read[:300]}"
        assert not any(line.startswith("root:") for line in lines), f"the probe read /etc/shadow: {read[:300]}"
        assert ".." not in lines, f"the probe listed /root: {read[:300]}"
        self.assert_nothing_written()

    def assert_nothing_written(self) -> None:
        assert not (self.outside / "escaped").exists(), "the probe wrote outside its home"


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    secrets = Host(tmp_path_factory.mktemp("host"))
    before = os.environ.get("HUD_GYM_HOME")
    os.environ["HUD_GYM_HOME"] = str(secrets.hud_home)
    yield secrets
    if before is None:
        os.environ.pop("HUD_GYM_HOME", None)
    else:
        os.environ["HUD_GYM_HOME"] = before


@pytest.fixture(scope="module")
def desktop() -> Iterator[gymnasium.Env]:
    """A desktop as users make it on the host: no shell for tasks, the default sandbox."""
    env = gymnasium.make("hud/Ubuntu-v0", in_container=False)
    yield env
    env.close()


@pytest.fixture(scope="module")
def shell_desktop() -> Iterator[gymnasium.Env]:
    """A desktop whose tasks may run commands (``allow_shell=True``)."""
    env = gymnasium.make("hud/Ubuntu-v0", in_container=False, allow_shell=True)
    yield env
    env.close()


def task(setup: Any = None, evaluate: Any = None, **fields: Any) -> Task:
    return Task(prompt="x", gym="hud-ubuntu", setup=setup, evaluate=evaluate, **fields)


def home_of(env: gymnasium.Env) -> Path:
    return Path(env.unwrapped.controller.state.home)


def type_into_new_xterm(env: gymnasium.Env, line: str) -> None:
    """As an agent: launch the allowed xterm and type ``line`` and Enter into it."""
    _, _, _, _, info = env.step(CustomAction(action="launch", args={"app": "xterm"}))
    assert info["status"] == "ok" and info["window"], info
    time.sleep(0.3)  # the shell's prompt
    _, _, _, _, info = env.step({"type": "type", "text": line, "enter_after": True})
    assert info["status"] == "ok", info


# ----------------------------------------------------------------------------- the three bypasses


def test_a_task_bashrc_then_xterm_stays_in_the_sandbox(desktop: gymnasium.Env, host: Host) -> None:
    desktop.reset(options={"task": task([("write_file", ".bashrc", host.probe()), ("launch", "xterm")])})
    host.assert_contained(home_of(desktop))


def test_a_task_tk_profile_then_open_file_runs_nothing_on_the_host(desktop: gymnasium.Env, host: Host) -> None:
    # Tk runs ~/.<argv0 name>.py and ~/.<class name>.py at start unless Python ignores the environment.
    profile = host.python_probe()
    setup = [
        ("write_file", ".editor.py", profile),
        ("write_file", ".HudGymEditor.py", profile),
        ("write_file", "notes.txt", "x"),
        ("open_file", "notes.txt"),
    ]
    desktop.reset(options={"task": task(setup)})
    time.sleep(1.0)  # the profile would have run before the window showed
    home = home_of(desktop)
    if (home / "probe-uid").exists():  # the apps run isolated (-I) now, but if a profile ever ran:
        host.assert_contained(home)
    host.assert_nothing_written()


def test_an_agent_typing_into_the_allowed_xterm_stays_in_the_sandbox(desktop: gymnasium.Env, host: Host) -> None:
    desktop.reset(options={"task": task()})
    type_into_new_xterm(desktop, host.probe())
    host.assert_contained(home_of(desktop))


# ----------------------------------------------------------------------------- tasks with the shell


def test_task_commands_run_in_the_sandbox(shell_desktop: gymnasium.Env, host: Host) -> None:
    probe = ("run", host.probe())
    checks = [("command_output_contains", "id -un; cat /etc/hostname 2>&1; ls /", ["user"])]
    shell_desktop.reset(options={"task": task(probe, checks)})
    host.assert_contained(home_of(shell_desktop))
    grade = shell_desktop.unwrapped.evaluate()
    assert grade.reward == 1.0, grade
    listing = grade.info["stdout"].split()
    assert "root" not in listing and "home" not in listing and "work" not in listing, grade.info["stdout"]


def test_evaluators_do_not_follow_a_planted_link_out_of_the_home(
    shell_desktop: gymnasium.Env, host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = host.hud_home / "secret.txt"
    plant = ("run", f"ln -s {shlex.quote(str(secret))} leak; ln -s /etc/shadow shadow; ln -s / root-link")
    shell_desktop.reset(options={"task": task(plant)})
    env = shell_desktop.unwrapped
    controller = env.controller
    # As if each link were planted just after resolve_path checked its path (a race it cannot close).
    monkeypatch.setattr(controller.desktop, "resolve_path", lambda path: controller.state.home / path)
    for check in [
        ("file_contains", "leak", "HUD-GYM-HOME-SECRET"),
        ("file_matches", "shadow", "^root:"),
        ("file_contains", "root-link/etc/shadow", "root:"),
    ]:
        calls = controller.resolve("evaluate", expand_config(check))
        grade = env._runner.run(controller.evaluate(calls, env.episode.state.context))
        assert grade.reward == 0.0, (check, grade)
        shown = str(grade)
        assert host.secret not in shown and "root:x" not in shown and "root:*" not in shown, grade


# ----------------------------------------------------------------------------- no survivor (item 11)


def _host_pids_of(argv: list[str], timeout: float = 15.0) -> set[int]:
    deadline = time.monotonic() + timeout
    while True:
        found = {p.pid for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == argv}
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def test_an_agents_daemon_dies_with_the_episode_and_the_env(host: Host) -> None:
    env = gymnasium.make("hud/Ubuntu-v0", in_container=False, screen_size=(640, 480))
    try:
        for ending in ("reset", "close"):
            env.reset(options={"task": task()})
            seconds = f"{86400 + time.monotonic_ns() % 10000}"
            type_into_new_xterm(env, f"env -i setsid sleep {seconds} > /dev/null 2>&1 < /dev/null &")
            daemons = _host_pids_of(["sleep", seconds])
            assert daemons, "the daemon did not start"
            if ending == "reset":
                env.reset(options={"task": task()})
            else:
                env.close()
            deadline = time.monotonic() + 5
            while [p for p in daemons if alive(p)] and time.monotonic() < deadline:
                time.sleep(0.05)
            assert [p for p in daemons if alive(p)] == [], f"the agent's daemon survived the {ending}"
    finally:
        env.close()


# ----------------------------------------------------------------------------- the network


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP server on the host's loopback; yields its port."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                server.accept()[0].close()
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(2)
    server.close()


def test_no_network_unless_the_task_asks_and_the_env_allows(shell_desktop: gymnasium.Env, listener: int) -> None:
    connect = (
        f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {listener}), 5); print('connected')\""
    )
    check = ("command_output_contains", connect, "connected")
    shell_desktop.reset(options={"task": task(evaluate=check)})
    grade = shell_desktop.unwrapped.evaluate()
    assert grade.reward == 0.0 and "refused" in grade.info["stderr"].lower(), grade
    asks = task(evaluate=check, config={"network": True})
    with pytest.raises(PermissionError, match="allow_network=True"):
        shell_desktop.reset(options={"task": asks})
    networked = gymnasium.make(
        "hud/Ubuntu-v0",
        in_container=False,
        allow_shell=True,
        allow_network=True,
        screen_size=(320, 240),
        window_manager=None,
    )
    try:
        networked.reset(options={"task": asks})
        assert networked.unwrapped.evaluate().reward == 1.0
        networked.reset(options={"task": task(evaluate=check)})  # allowed, not asked: no network
        assert networked.unwrapped.evaluate().reward == 0.0
    finally:
        networked.close()


# ----------------------------------------------------------------------------- an untrusted server (item 3)


def test_an_untrusted_ubuntu_server_gives_no_host_shell(host: Host) -> None:
    from hud_gym.controllers.remote.server import ControllerServer
    from hud_gym.core.loop import get_loop_thread

    server = ControllerServer("ubuntu", port=0, token="security-token")  # no --trust-client-options
    url = get_loop_thread().run(server.start(), timeout=30)
    try:
        env = gymnasium.make("hud/Ubuntu-v0", controller=url, controller_token="security-token", screen_size=(640, 480))
        try:
            env.reset(options={"task": task(evaluate=("file_exists", "."))})
            home = Path(env.unwrapped.evaluate().info["path"])
            type_into_new_xterm(env, host.probe())
            host.assert_contained(home)
            with pytest.raises(SetupError, match="allow_shell"):
                env.reset(options={"task": task(("run", host.probe()))})
        finally:
            env.close()
        for option in ({"sandbox": False}, {"allow_network": True}):
            refused = gymnasium.make("hud/Ubuntu-v0", controller=url, controller_token="security-token", **option)
            try:
                with pytest.raises(Exception, match=next(iter(option))) as caught:
                    refused.reset()
                assert "trust-client-options" in str(caught.value)
            finally:
                refused.close()
    finally:
        get_loop_thread().run(server.stop(), timeout=30)
