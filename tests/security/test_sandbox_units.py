"""The parts of the desktop sandbox one by one: the bubblewrap policy (its command line, and run
for real), the X authority files, the home's safe file access, the server's trust policy."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import gymnasium
import pytest
from Xlib import xauth as xlib_xauth

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.remote.protocol import ProtocolError
from hud_gym.controllers.remote.server import validate_options
from hud_gym.controllers.sandbox.policy import (
    INNER_UID,
    SANDBOX_UID_BASE,
    Bind,
    Identity,
    SandboxPolicy,
    bwrap_argv,
    etc_files,
    host_layout,
    identity_for,
)
from hud_gym.controllers.ubuntu.display import DesktopNotAvailableError
from hud_gym.controllers.ubuntu.homefs import HomeFiles
from hud_gym.controllers.x11.xauth import (
    FAMILY_WILD,
    ProcessAuthority,
    new_cookie,
    write_display_authority,
)

pytestmark = pytest.mark.timeout(30)

FORBIDDEN = ("/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssh", "/root", "/home", "/work", "/proc/1")


def _mounted(argv: list[str]) -> list[str]:
    """Every host path a bwrap command line mounts."""
    sources = []
    for i, arg in enumerate(argv):
        if arg in ("--bind", "--ro-bind", "--ro-bind-try", "--bind-try", "--dev-bind"):
            sources.append(argv[i + 1])
    return sources


# ----------------------------------------------------------------------------- the policy


def test_root_drops_to_a_dedicated_uid_and_users_keep_theirs() -> None:
    root = identity_for(0, 0, 57)
    assert root == Identity(SANDBOX_UID_BASE + 57, SANDBOX_UID_BASE + 57, switch=True) and root.uid != 0
    assert identity_for(1000, 1000, 57) == Identity(1000, 1000, switch=False)
    argv = bwrap_argv(SandboxPolicy(identity=root), ["true"])
    assert argv[:6] == [
        "setpriv",
        f"--reuid={root.uid}",
        f"--regid={root.gid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--no-new-privs",
    ]
    assert bwrap_argv(SandboxPolicy(identity=identity_for(1000, 1000, 57)), ["true"])[0] == "bwrap"


def test_the_policy_shows_no_host_secret_and_no_network_by_default(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    policy = SandboxPolicy(
        identity=Identity(1000, 1000),
        binds=(Bind(home, writable=True), Bind("/tmp/.X11-unix/X57")),
        etc={"passwd": "/x/passwd"},
        layout={"/bin": "link:usr/bin", "/lib64": "dir"},
    )
    argv = bwrap_argv(policy, ["xterm"])
    for flag in (
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-net",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
    ):
        assert flag in argv, flag
    assert argv[argv.index("--uid") + 1] == str(INNER_UID) and argv[-2:] == ["--", "xterm"]
    mounted = _mounted(argv)
    assert not [m for m in mounted if m.startswith(FORBIDDEN) or m == "/etc"], mounted
    assert "/etc/resolv.conf" not in mounted and argv[argv.index("/x/passwd") - 1 : argv.index("/x/passwd") + 2] == [
        "--ro-bind",
        "/x/passwd",
        "/etc/passwd",
    ]
    assert argv.index("--bind") > argv.index("/tmp") and ["--bind", home, home] == argv[argv.index("--bind") :][:3]
    assert argv[argv.index("--symlink") :][:3] == ["--symlink", "usr/bin", "/bin"]
    networked = bwrap_argv(SandboxPolicy(identity=Identity(1000, 1000), network=True), ["true"])
    assert "--unshare-net" not in networked and "/etc/resolv.conf" in _mounted(networked)
    passwd = etc_files("/h")["passwd"]
    assert [line.split(":")[0] for line in passwd.splitlines()] == ["root", "user", "nobody"]
    assert "/h:/bin/bash" in passwd and "hosts" not in etc_files("/h", network=True)


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A temporary folder the sandbox uid may traverse (pytest's own are private to root)."""
    path = Path(tempfile.mkdtemp(prefix="hud-gym-policy-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_the_policy_run_by_bwrap_sees_no_host(open_dir: Path) -> None:
    tmp_path = open_dir
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "secret").write_text("host secret")
    identity = identity_for(os.geteuid(), os.getegid(), 999)
    if identity.switch:
        os.chown(home, identity.uid, identity.gid)
    policy = SandboxPolicy(
        identity=identity, binds=(Bind(str(home), writable=True),), layout=host_layout(), chdir=str(home)
    )
    script = (
        f"id -u; cat /etc/shadow {tmp_path}/secret 2>&1; ls /root 2>&1; echo x > out; echo x > {tmp_path}/out 2>&1;"
        "grep -E '^(CapEff|NoNewPrivs)' /proc/self/status; cat /proc/1/cmdline | tr '\\0' ' '"
    )
    done = subprocess.run(
        bwrap_argv(policy, ["bash", "-c", script]),
        check=False,
        capture_output=True,
        text=True,
        timeout=20,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == str(INNER_UID)
    assert "host secret" not in done.stdout and "No such file" in done.stdout
    assert (home / "out").read_text() == "x\n" and not (tmp_path / "out").exists()
    assert os.stat(home / "out").st_uid == identity.uid != 0 or not identity.switch
    assert "CapEff:\t0000000000000000" in lines and "NoNewPrivs:\t1" in lines
    assert lines[-1].startswith("bwrap")  # pid 1 of its own pid namespace: the host's init is not there


# ----------------------------------------------------------------------------- X authority


@pytest.mark.skipif(shutil.which("xauth") is None, reason="needs xauth")
def test_display_authority_files_are_private_and_readable_by_xauth(tmp_path: Path) -> None:
    cookie = new_cookie()
    path = write_display_authority(tmp_path / "auth", cookie)
    assert oct(os.stat(path.parent).st_mode & 0o777) == "0o700" and oct(os.stat(path).st_mode & 0o777) == "0o600"
    entries = xlib_xauth.Xauthority(str(path)).entries
    assert entries == [(FAMILY_WILD, b"", b"", b"MIT-MAGIC-COOKIE-1", cookie)]
    listed = subprocess.run(["xauth", "-f", str(path), "list"], check=False, capture_output=True, text=True, timeout=10)
    assert "MIT-MAGIC-COOKIE-1" in listed.stdout and cookie.hex() in listed.stdout


def test_the_process_authority_swaps_xauthority_only_while_connecting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_file = write_display_authority(tmp_path / "user", b"u" * 16)  # the user's own entries
    monkeypatch.setenv("XAUTHORITY", str(user_file))
    authority = ProcessAuthority()
    authority.add(73, b"c" * 16)
    with authority.connecting() as path:
        assert os.environ["XAUTHORITY"] == str(path) != str(user_file)
        entries = xlib_xauth.Xauthority(str(path)).entries
        assert (256, os.uname().nodename.encode(), b"73", b"MIT-MAGIC-COOKIE-1", b"c" * 16) in entries
        assert any(e[4] == b"u" * 16 for e in entries)  # the user's cookie still works meanwhile
        assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert os.environ["XAUTHORITY"] == str(user_file)
    monkeypatch.delenv("XAUTHORITY")
    with authority.connecting():
        pass
    assert "XAUTHORITY" not in os.environ
    authority.remove(73)
    assert not [e for e in xlib_xauth.Xauthority(str(authority.path)).entries if e[2] == b"73"]


# ----------------------------------------------------------------------------- the home's files


def test_home_files_refuse_links_out_of_the_home(tmp_path: Path) -> None:
    home, outside = tmp_path / "home", tmp_path / "outside"
    home.mkdir()
    outside.mkdir()
    (outside / "secret").write_text("secret")
    (home / "notes.txt").write_text("notes")
    (home / "leak").symlink_to(outside / "secret")
    (home / "up").symlink_to("../outside")
    (home / "inside").symlink_to("notes.txt")
    os.mkfifo(home / "fifo")
    files = HomeFiles(home)
    assert files.read_bytes(home / "inside", 100) == b"notes" and files.kind(home / "inside") == "file"
    for path in (home / "leak", home / "up" / "secret"):
        with pytest.raises(PermissionError):
            files.read_bytes(path, 100)
    with pytest.raises(PermissionError):
        files.read_bytes(home / "fifo", 100)  # refused, not blocked
    files.write_bytes(home / "leak", b"overwritten")  # the link is replaced by a fresh file, not followed
    assert not (home / "leak").is_symlink() and (home / "leak").read_bytes() == b"overwritten"
    with pytest.raises(PermissionError):
        files.write_bytes(home / "up" / "new.txt", b"x")
    with pytest.raises(PermissionError):
        files.listdir(home / "up")
    assert (outside / "secret").read_text() == "secret" and not (outside / "new.txt").exists()
    files.write_bytes(home / "a" / "b" / "c.txt", b"deep")
    files.copy(home / "a", home / "copy")
    assert (home / "copy" / "b" / "c.txt").read_bytes() == b"deep"
    (home / "a" / "link").symlink_to("/etc/passwd")
    files.copy(home / "a", home / "copy2")
    assert os.readlink(home / "copy2" / "link") == "/etc/passwd"  # copied as a link, not followed


# ----------------------------------------------------------------------------- the server's trust


def test_an_untrusting_server_refuses_options_that_leave_the_sandbox() -> None:
    for option in ({"sandbox": False}, {"allow_network": True}, {"allow_shell": True}):
        with pytest.raises(ProtocolError, match="trust-client-options"):
            validate_options("ubuntu", option, trusted=False)
        ((name, value),) = option.items()
        assert getattr(validate_options("ubuntu", option, trusted=True), name) == value
    for option in ({"sandbox": True}, {"sandbox": None}, {"allow_network": False}):
        validate_options("ubuntu", option, trusted=False)


# ----------------------------------------------------------------------------- clear errors


def _tools(folder: Path, *names: str) -> None:
    for name in names:
        found = shutil.which(name)
        if found is None:
            pytest.skip(f"needs {name}")
        (folder / name).symlink_to(found)


def test_a_missing_bwrap_names_the_package_and_the_way_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tools(tmp_path, "Xvfb", "openbox", "setpriv")
    monkeypatch.setenv("PATH", str(tmp_path))
    env = gymnasium.make("hud/Ubuntu-v0", in_container=False)
    try:
        with pytest.raises(DesktopNotAvailableError, match=r"apt-get install bubblewrap.*sandbox=False"):
            env.reset()
    finally:
        env.close()


def test_a_host_without_user_namespaces_gets_a_clear_error(open_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tmp_path = open_dir  # the fake bwrap runs as the sandbox uid
    _tools(tmp_path, "Xvfb", "openbox", "setpriv")
    fake = tmp_path / "bwrap"  # what bwrap says where unprivileged user namespaces are disabled
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    env = gymnasium.make("hud/Ubuntu-v0", in_container=False)
    try:
        with pytest.raises(
            ControllerError,
            match=r"(?s)No permissions to creating new namespace.*user namespaces.*"
            r"sandbox=False",
        ):
            env.reset()
    finally:
        env.close()
