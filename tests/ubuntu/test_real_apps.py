"""The real desktop apps (issue 25): each starts in the episode's sandbox as its uid, and shows its
main window with no first-run wizard, tip or privacy dialog; Calc opens an ``.xlsx``.

One env for the module; the apps start one after another, each in a fresh episode (a reset lays
down the home profile, and ends the previous app). Real Xvfb, real apps: a generous bounded wait
per app (a cold LibreOffice or Thunderbird start takes 10-30 s on a loaded 2-core box).
"""

from __future__ import annotations

import io
import shutil
import time
from pathlib import Path
from typing import Any

import openpyxl
import psutil
import pytest
from conftest import on_loop

from hud_gym.controllers.ubuntu.apps import CDP_PORT, KNOWN_APPS, REAL_APPS
from hud_gym.controllers.ubuntu.homefs import HomeFiles
from hud_gym.controllers.ubuntu.policy import launch_argv
from hud_gym.controllers.ubuntu.profile import HOME_FOLDERS, THUNDERBIRD_PROFILE

pytestmark = pytest.mark.timeout(150)

WINDOW_WAIT = 90.0
"""Seconds an app may take to show its main window (a cold start on a loaded box)."""
SETTLE = 4.0
"""Seconds a first-run dialog is given to appear after the main window did."""

# app -> (launch args, its main window's title: a substring)
MAIN_WINDOWS: dict[str, tuple[list[str], str]] = {
    "libreoffice-calc": ([], "LibreOffice Calc"),
    "libreoffice-writer": ([], "LibreOffice Writer"),
    "libreoffice-impress": ([], "LibreOffice Impress"),
    "gimp": ([], "GNU Image Manipulation Program"),
    "vlc": ([], "VLC media player"),
    "thunderbird": ([], "Thunderbird"),
    "gedit": ([], "gedit"),
    "pcmanfm": (["Documents"], "Documents"),
    "chromium": ([], "Chromium"),
    "xterm": ([], "xterm"),
}

DIALOGS = ("tip of the day", "welcome", "privacy", "account setup", "set up your", "default", "recovery", "update")
"""Words of the titles of the first-run windows the home profile keeps away."""


def _launch(env: Any, app: str, args: list[str]) -> int:
    async def start(controller: Any) -> int:
        process = await controller.desktop.spawn(controller.desktop.launch_argv(app, args))
        return int(process.pid)

    return int(on_loop(env, start))


def _windows(env: Any) -> list[dict[str, Any]]:
    return list(on_loop(env, lambda c: c.desktop.windows()))


def _wait_for_title(env: Any, text: str, timeout: float = WINDOW_WAIT) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        windows = _windows(env)
        for window in windows:
            if text in window["title"]:
                return window
        assert time.monotonic() < deadline, f"no window titled *{text}* after {timeout} s: {windows}"
        time.sleep(0.25)


def test_the_real_apps_are_launchable_with_one_file_at_most(tmp_path: Any) -> None:
    assert set(MAIN_WINDOWS) - {"xterm"} >= REAL_APPS - {"libreoffice"} and set(KNOWN_APPS) >= REAL_APPS
    home = tmp_path
    assert launch_argv("gimp", ["a.png"], home=home)[-1] == str(home / "a.png")
    assert launch_argv("libreoffice", ["--calc", "b.xlsx"], home=home)[-2:] == ["--calc", str(home / "b.xlsx")]
    assert launch_argv("chromium", ["https://example.com/x"], home=home)[-1] == "https://example.com/x"
    # A document name that is a LibreOffice macro URL is opened as a file of the home, never run.
    assert launch_argv("libreoffice-calc", ["macro:///Standard.Module1.Main"], home=home)[-1].startswith(str(home))
    for app, args in (("gimp", ["-b", "(gimp-quit 0)"]), ("libreoffice", ["--headless"]), ("vlc", ["a", "b"])):
        with pytest.raises(PermissionError, match="at most one argument"):
            launch_argv(app, args, home=home)
    with pytest.raises(PermissionError, match="leaves the env's home"):
        launch_argv("gedit", ["../../etc/passwd"], home=home)
    with pytest.raises(PermissionError, match="takes no arguments"):
        launch_argv("thunderbird", ["-P"], home=home)


def test_every_episode_starts_with_the_home_profile(desktop: Any) -> None:
    desktop.reset()
    home = desktop.unwrapped.controller.state.home
    uid = desktop.unwrapped.controller.state.session.file_owner
    for folder in HOME_FOLDERS:
        assert (home / folder).is_dir()
    xcu = home / ".config/libreoffice/4/user/registrymodifications.xcu"
    assert 'oor:name="ShowTipOfTheDay"' in xcu.read_text()
    if uid is not None:
        assert (xcu.stat().st_uid, (home / "Desktop").stat().st_uid) == (uid[0], uid[0])


@pytest.mark.parametrize("app", list(MAIN_WINDOWS))
def test_app_starts_in_the_sandbox_without_first_run_dialogs(desktop: Any, app: str) -> None:
    if shutil.which(KNOWN_APPS[app][0]) is None:
        pytest.fail(f"{app} is not installed: run `bash scripts/install-system.sh`")
    desktop.reset()
    controller = desktop.unwrapped.controller
    args, title = MAIN_WINDOWS[app]
    _launch(desktop, app, args)
    window = _wait_for_title(desktop, title)
    time.sleep(SETTLE)
    titles = [w["title"] for w in _windows(desktop)]
    assert not [t for t in titles if any(word in t.lower() for word in DIALOGS)], titles
    # The window belongs to a process of the episode's sandbox, running as its uid.
    assert window["pid"] in on_loop(desktop, lambda c: _async(c.desktop.pids()["tasks"])), window
    owner = controller.state.session.file_owner
    if owner is not None:
        assert psutil.Process(window["pid"]).uids().real == owner[0]
    if app == "thunderbird":  # its wizard is drawn inside the main window: check that it used our profile
        profiles = sorted(p.name for p in (controller.state.home / ".thunderbird").glob("*.default*"))
        assert profiles == [Path(THUNDERBIRD_PROFILE).name], profiles
    if app == "chromium":  # its DevTools answer on the sandbox's own loopback, as OSWorld's Chrome's do
        fetch = (
            f"import urllib.request as u; print(u.urlopen('http://127.0.0.1:{CDP_PORT}/json/version').read().decode())"
        )
        code, out, err = on_loop(desktop, lambda c: c.desktop.run(["python3", "-c", fetch], timeout=30), timeout=60)
        assert code == 0 and "webSocketDebuggerUrl" in out, (out, err)


def test_files_open_in_the_apps_of_their_kind(desktop: Any) -> None:
    desktop.reset()
    expected = {
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "libreoffice-calc.desktop",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "libreoffice-writer.desktop",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation": "libreoffice-impress.desktop",
        "application/vnd.oasis.opendocument.text": "libreoffice-writer.desktop",
        "image/png": "gimp.desktop",
        "video/mp4": "vlc.desktop",
        "text/plain": "org.gnome.gedit.desktop",
        "inode/directory": "pcmanfm.desktop",
        "x-scheme-handler/https": "chromium.desktop",
    }
    command = "; ".join(f"xdg-mime query default {mime}" for mime in expected)
    code, out, err = on_loop(desktop, lambda c: c.desktop.run(command, timeout=60), timeout=90)
    assert code == 0 and out.split() == list(expected.values()), (out, err)


def test_calc_opens_an_xlsx_made_with_openpyxl(desktop: Any) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Sales"
    sheet.append(["Region", "Total"])
    sheet.append(["North", 42])
    data = io.BytesIO()
    book.save(data)
    desktop.reset()
    controller = desktop.unwrapped.controller
    HomeFiles(controller.state.home, controller.state.session.file_owner).write_bytes(
        controller.state.home / "Documents/report.xlsx", data.getvalue()
    )
    _launch(desktop, "libreoffice-calc", ["Documents/report.xlsx"])
    window = _wait_for_title(desktop, "report.xlsx")
    assert "LibreOffice Calc" in window["title"], window
    time.sleep(SETTLE)
    titles = [w["title"] for w in _windows(desktop)]
    assert not [t for t in titles if any(word in t.lower() for word in (*DIALOGS, "keep current format"))], titles
    assert controller.state.home.joinpath("Documents/report.xlsx").stat().st_size == len(data.getvalue())


async def _async(value: Any) -> Any:
    return value


def test_xdg_open_opens_a_spreadsheet_in_calc(desktop: Any) -> None:
    book = openpyxl.Workbook()
    data = io.BytesIO()
    book.save(data)
    desktop.reset()
    controller = desktop.unwrapped.controller
    path = controller.state.home / "Downloads/budget.xlsx"
    HomeFiles(controller.state.home, controller.state.session.file_owner).write_bytes(path, data.getvalue())

    async def xdg_open(c: Any) -> None:
        await c.desktop.spawn(["xdg-open", str(path)])

    on_loop(desktop, xdg_open)
    window = _wait_for_title(desktop, "budget.xlsx")
    assert "LibreOffice Calc" in window["title"], window
