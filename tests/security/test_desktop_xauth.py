"""Issue 11, item 1: another local user can neither read nor drive an env's X display.

As uid 65534 (``setpriv``), ``xwd`` (read the screen) and ``xdotool`` (type into it) are refused
on the env's display, with and without the sandbox; so is this user without the display's cookie;
and the env itself keeps working. Before the cookie, both ran (the display had no ``-auth``).
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import gymnasium
import pytest

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym import ClickAction

pytestmark = pytest.mark.timeout(60)

try:
    from hud_gym.controllers.ubuntu.display import require_programs

    require_programs(None)
except Exception as _exc:
    pytest.skip(f"no desktop on this machine: {_exc}", allow_module_level=True)
if shutil.which("setpriv") is None or shutil.which("xdotool") is None:
    pytest.skip("needs setpriv and xdotool", allow_module_level=True)

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
CLEAN_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/nonexistent"}


def x_client(
    display: str, *command: str, prefix: list[str] | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [*(prefix or []), *command],
        check=False,
        capture_output=True,
        timeout=20,
        env={**CLEAN_ENV, "DISPLAY": display, **(env or {})},
    )
    out = done.stdout.decode(errors="replace")[:200]  # xwd writes a binary image
    return subprocess.CompletedProcess(done.args, done.returncode, out, done.stderr.decode(errors="replace"))


@pytest.fixture(params=["sandbox", "no sandbox"])
def desktop(request: pytest.FixtureRequest) -> Iterator[Any]:
    options: dict[str, Any] = {} if request.param == "sandbox" else {"sandbox": False}
    env = gymnasium.make("hud/Ubuntu-v0", in_container=False, screen_size=(320, 240), window_manager=None, **options)
    try:
        with pytest.warns(UserWarning, match="sandbox=False") if options else contextlib.nullcontext():
            env.reset()
        yield env
    finally:
        env.close()


def test_another_user_cannot_read_or_drive_the_display(desktop: Any) -> None:
    display = desktop.unwrapped.controller.state.display
    screen = x_client(display, "xwd", "-root", "-silent", prefix=NOBODY)
    assert screen.returncode != 0 and not screen.stdout, "uid 65534 read the env's screen"
    assert "Authorization required" in screen.stderr or "unable to open display" in screen.stderr, screen.stderr
    typed = x_client(display, "xdotool", "type", "id > /tmp/hud-gym-xauth-probe", prefix=NOBODY)
    assert typed.returncode != 0, "uid 65534 typed into the env's display"
    # Without the cookie this user (root here) is refused too: it is the cookie, not the uid.
    assert x_client(display, "xdotool", "getmouselocation").returncode != 0
    # The env itself, and this user's tools given the display's cookie, still work.
    _, _, _, _, info = desktop.step(ClickAction(point=(10, 10)))
    assert info["status"] == "ok", info
    desktop.step(ClickAction(point=(10, 10)))
    # Screenshots still go through MIT-SHM (mss hands the sandboxed Xvfb its segment as a memfd).
    assert "MIT-SHM is working" in desktop.unwrapped.controller.state.capture.backend
    xauthority = str(desktop.unwrapped.controller.state.xauthority)
    moved = x_client(display, "xdotool", "getmouselocation", env={"XAUTHORITY": xauthority})
    assert moved.returncode == 0 and "x:10 y:10" in moved.stdout, moved
