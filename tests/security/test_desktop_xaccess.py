"""Issue 23, item 14: an agent that turns its display's access control off lets no other uid in.

The agent's desktop has a shell; from it, a client of the display may send ``SetAccessControl(0)``
(what ``xhost +`` does), after which the X server takes any client, cookie or not. Here the agent
does so from inside its sandbox (a stdlib X client: the sandbox has no ``xhost``), and tries to
make the socket file world-writable again; then uid 65534, without a cookie, must still be
refused: ``xdpyinfo`` fails, the socket file refuses the connection (``EACCES``), the abstract
socket name too (``ECONNREFUSED``), and it cannot take the abstract name for itself. The same
for a bare :func:`start_xvfb` (the headed browser's display), with access control turned off
from this process. Before, the server listened on a 0777 socket file and an abstract socket any
local uid reached: both connected and ``xdpyinfo`` ran.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium
import pytest

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym import Task

pytestmark = pytest.mark.timeout(90)

try:
    from hud_gym.controllers.ubuntu.display import require_programs

    require_programs(None)
except Exception as _exc:
    pytest.skip(f"no desktop on this machine: {_exc}", allow_module_level=True)
if os.geteuid() != 0 or shutil.which("setpriv") is None or shutil.which("xdpyinfo") is None:
    pytest.skip("needs root (to act as another uid), setpriv and xdpyinfo", allow_module_level=True)

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
CLEAN_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/nonexistent"}

ACCESS_OFF = r"""
import os, socket, struct, sys
number = os.environ["DISPLAY"].lstrip(":").split(".")[0]
data, cookie = open(os.environ["XAUTHORITY"], "rb").read(), None
while data and cookie is None:
    fields, data = [], data[2:]
    for _ in range(4):
        size = struct.unpack(">H", data[:2])[0]
        fields.append(data[2 : 2 + size])
        data = data[2 + size :]
    if fields[1].decode() in (number, "") and fields[2] == b"MIT-MAGIC-COOKIE-1":
        cookie = fields[3]
pad = lambda b: b + b"\0" * (-len(b) % 4)
x = socket.socket(socket.AF_UNIX)
x.connect("/tmp/.X11-unix/X" + number)
name = b"MIT-MAGIC-COOKIE-1"
x.sendall(struct.pack("<cxHHHHxx", b"l", 11, 0, len(name), len(cookie)) + pad(name) + pad(cookie))
head = x.recv(8, socket.MSG_WAITALL)
assert head[0] == 1, head
x.recv(struct.unpack("<H", head[6:8])[0] * 4, socket.MSG_WAITALL)
x.sendall(struct.pack("<BBH", 111, 0, 1))  # SetAccessControl(Disable): xhost +
x.sendall(struct.pack("<BxH", 110, 1))  # ListHosts: the mode is in its reply
reply = x.recv(32, socket.MSG_WAITALL)
print("access control", "off" if reply[0] == 1 and reply[1] == 0 else "on")
"""

PROBE = r"""
import errno, json, socket, sys
path = sys.argv[1]
result = {}
for name, address in (("file", path), ("abstract", "\0" + path)):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(address)
        result[name] = "connected"
    except OSError as exc:
        result[name] = errno.errorcode.get(exc.errno, str(exc.errno))
s = socket.socket(socket.AF_UNIX)
try:
    s.bind("\0" + path)
    result["bind"] = "bound"
except OSError as exc:
    result["bind"] = errno.errorcode.get(exc.errno, str(exc.errno))
print(json.dumps(result))
"""


def as_nobody(display: str, *command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*NOBODY, *command],
        check=False,
        capture_output=True,
        text=True,
        timeout=20,
        env={**CLEAN_ENV, "DISPLAY": display},
    )


def assert_nobody_refused(display: str) -> None:
    """uid 65534, without a cookie, reaches the display by no socket and cannot take its name."""
    number = int(display[1:])
    shown = as_nobody(display, "xdpyinfo")
    assert shown.returncode != 0 and "unable to open display" in shown.stderr, shown
    probe = as_nobody(display, sys.executable, "-I", "-c", PROBE, f"/tmp/.X11-unix/X{number}")
    assert probe.returncode == 0, probe
    assert json.loads(probe.stdout) == {"file": "EACCES", "abstract": "ECONNREFUSED", "bind": "EADDRINUSE"}, probe
    assert Path(f"/tmp/.X11-unix/X{number}").stat().st_mode & 0o777 == 0o600


@pytest.fixture
def shell_desktop() -> Iterator[Any]:
    env = gymnasium.make(
        "hud/Ubuntu-v0", in_container=False, allow_shell=True, screen_size=(320, 240), window_manager=None
    )
    try:
        yield env
    finally:
        env.close()


def test_access_control_off_in_the_sandbox_lets_no_other_uid_in(shell_desktop: Any) -> None:
    agent = "chmod 0777 /tmp/.X11-unix/X${DISPLAY#:} 2>/dev/null; python3 -I xoff.py && xdpyinfo >/dev/null && echo ok"
    check = ("command_output_contains", agent, ["access control off", "ok"])
    task = Task(prompt="x", gym="hud-ubuntu", setup=[("write_file", "xoff.py", ACCESS_OFF)], evaluate=check)
    shell_desktop.reset(options={"task": task})
    display = shell_desktop.unwrapped.controller.state.display
    grade = shell_desktop.unwrapped.evaluate()
    assert grade.reward == 1.0, grade  # the agent's clients still connect, and access control is off
    # Anyone reaching the server would now connect without a cookie: root does (CAP_DAC_OVERRIDE).
    unauthorised = subprocess.run(
        ["xdpyinfo"], check=False, capture_output=True, timeout=20, env={**CLEAN_ENV, "DISPLAY": display}
    )
    assert unauthorised.returncode == 0, unauthorised.stderr
    assert_nobody_refused(display)
    _, _, _, _, info = shell_desktop.step({"type": "click", "point": [10, 10]})
    assert info["status"] == "ok", info
    # Xvfb made its socket in a private folder of its uid; the socket was linked out and the folder removed.
    uid = Path(f"/tmp/.X11-unix/X{display[1:]}").stat().st_uid
    assert uid != 0
    assert not [p for p in Path("/tmp/.X11-unix").glob(".hud-gym-*") if p.stat().st_uid == uid]


def test_a_bare_display_lets_no_other_uid_in(tmp_path: Path) -> None:
    from hud_gym.controllers.x11.xauth import new_cookie, process_authority, write_display_authority
    from hud_gym.controllers.x11.xvfb import start_xvfb

    async def scenario() -> None:
        cookie = new_cookie()
        auth = write_display_authority(tmp_path / "auth", cookie)
        server = await start_xvfb((320, 240), tmp_path / "xvfb.log", auth=auth)
        try:
            process_authority().add(server.number, cookie)
            env = {**CLEAN_ENV, "DISPLAY": server.name, "XAUTHORITY": str(process_authority().path)}
            command = [sys.executable, "-I", "-c", ACCESS_OFF]
            off = await asyncio.to_thread(subprocess.run, command, capture_output=True, text=True, env=env)
            assert "access control off" in off.stdout, off
            await asyncio.to_thread(assert_nobody_refused, server.name)
        finally:
            process_authority().remove(server.number)
            await server.stop()

    asyncio.run(scenario())
