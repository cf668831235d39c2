"""OSWorld's steps and files without a desktop: input scripts are read, never run (their clicks scaled to the screen); the mirror's
names come from the task and are checked; a file found nowhere is an error naming its URL; the
cache is keyed by URL; the per-example reasons (``why_not``)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from hud_gym import ClickAction
from hud_gym.controllers.ubuntu.homefs import HomeFiles
from hud_gym.evaluation.registry import FunctionContext
from hud_gym.suites.osworld.files import OSWorldFileMissing, cached_file, mirror_paths, url_key
from hud_gym.suites.osworld.getters import Getters
from hud_gym.suites.osworld.scripts import Click, pyautogui_input
from hud_gym.suites.osworld.steps import _click, opener_for
from hud_gym.suites.osworld.support import why_not

URL = "https://drive.usercontent.google.com/download?id=1abc&export=download"


@pytest.mark.parametrize(
    ("script", "keys"),
    [
        ('import pyautogui; pyautogui.hotkey("ctrl", "s");', [["ctrl", "s"]]),
        ("import pyautogui; import time; pyautogui.hotkey('ctrl', 's'); time.sleep(0.5); ", [["ctrl", "s"], 0.5]),
        ('import pyautogui; pyautogui.hotkey(["shift", "ctrl", "e"]);', [["shift", "ctrl", "e"]]),
        ('import pyautogui; pyautogui.press(["enter"]);', [["enter"]]),
        ("import pyautogui; import time; time.sleep(3600)", [10.0]),  # bounded
        ("import pyautogui; import time; pyautogui.click(960, 540); time.sleep(0.5);", [Click(960, 540), 0.5]),
        (
            "import pyautogui; import time;  time.sleep(4); pyautogui.doubleClick(x=960, y=540); time.sleep(0.5);"
            "pyautogui.mouseDown(); pyautogui.mouseUp(); time.sleep(0.5);",
            [4.0, Click(960, 540, 2), 0.5, Click(None, None), 0.5],
        ),
    ],
)
def test_input_scripts_become_key_presses_and_clicks(script: str, keys: list[object]) -> None:
    assert pyautogui_input(script) == keys


@pytest.mark.parametrize(
    "script",
    [
        "import pyautogui; import os; os.system('rm -rf ~')",
        "import pyautogui; pyautogui.hotkey('ctrl', 's'); __import__('os').system('id')",
        "import pyautogui; pyautogui.mouseDown()",  # left pressed
        "import pyautogui; pyautogui.mouseDown(10, 10); pyautogui.mouseUp(20, 20)",  # a drag
        "import pyautogui; pyautogui.click(960)",
        "import pyautogui; pyautogui.click(960, 540, button='right')",
        "import pyautogui; pyautogui.click(x=open('/etc/passwd'), y=1)",
        "import pyautogui; pyautogui.mouseUp()",
        "import pyautogui; pyautogui.hotkey(open('/etc/shadow').read())",
        "import os; import pyautogui; pyautogui.hotkey('ctrl', 's')",
        "import pyautogui;" + " pyautogui.press('a');" * 400,  # over the size bound
    ],
)
def test_anything_else_is_not_an_input_script(script: str) -> None:
    assert pyautogui_input(script) is None


def test_files_open_in_the_app_of_their_kind() -> None:
    assert opener_for("~/a.XLSX") == "libreoffice-calc" and opener_for("~/b.docx") == "libreoffice-writer"
    assert opener_for("~/c.pptx") == "libreoffice-impress" and opener_for("~/d.png") == "gimp"
    assert opener_for("~/e.mp4") == "vlc" and opener_for("~/f.txt") == "gedit"


def test_mirror_names_from_the_task_are_single_components() -> None:
    key = f"by-url/{url_key(URL)}"
    assert mirror_paths(URL, "libreoffice_calc", "7efeb4b1", "a.xlsx") == ["libreoffice_calc/7efeb4b1/a.xlsx", key]
    for bad in ("..", "../../etc", "a/b", "", "x" * 300, None):
        assert mirror_paths(URL, "os", bad, "a.xlsx") == [key]
        assert mirror_paths(URL, bad, "id", "a.xlsx") == [key]


def test_a_file_found_nowhere_is_an_error_naming_the_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HUD_GYM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HUD_GYM_OSWORLD_FILES", str(tmp_path / "mirror"))
    (tmp_path / "mirror").mkdir()
    with pytest.raises(OSWorldFileMissing, match="drive.usercontent.google.com/download\\?id=1abc") as info:
        cached_file(URL, domain="os", task_id="t", name="a.txt")  # no network, no sandbox: nothing fetched
    assert str(tmp_path / "mirror") in str(info.value) and "not downloaded" in str(info.value)


def test_the_mirror_fills_the_cache_and_its_links_are_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HUD_GYM_HOME", str(tmp_path / "home"))
    mirror = tmp_path / "mirror"
    (mirror / "os" / "t").mkdir(parents=True)
    secret = tmp_path / "secret"
    secret.write_text("host secret")
    os.symlink(secret, mirror / "os" / "t" / "a.txt")  # a link out of the mirror: not followed
    monkeypatch.setenv("HUD_GYM_OSWORLD_FILES", str(mirror))
    with pytest.raises(OSWorldFileMissing):
        cached_file(URL, domain="os", task_id="t", name="a.txt")
    (mirror / "os" / "t" / "a.txt").unlink()
    (mirror / "os" / "t" / "a.txt").write_text("the task's file")
    cached = cached_file(URL, domain="os", task_id="t", name="a.txt")
    assert cached.name == url_key(URL) and cached.read_text() == "the task's file"
    (mirror / "os" / "t" / "a.txt").unlink()
    assert cached_file(URL, domain="os", task_id="t", name="a.txt") == cached  # from the cache now
    assert HomeFiles(cached.parent).read_bytes(cached, 100) == b"the task's file"


def test_why_not_names_each_reason() -> None:
    example = {
        "config": [
            {"type": "chrome_open_tabs", "parameters": {}},
            {"type": "execute", "parameters": {"command": "echo password | sudo -S touch /x", "shell": True}},
        ],
        "evaluator": {
            "func": ["compare_table", "check_page_number_colors"],
            "result": [{"type": "vm_file"}, {"type": "accessibility_tree"}],
            "options": [{"rules": [{"type": "sheet_data"}, {"type": "chart"}]}, {}],
        },
    }
    assert why_not(example) == [
        "config step chrome_open_tabs: Chromium's tabs over CDP are not wired to the suite yet",
        "config step execute: runs sudo (the sandbox's user has no root)",
        "getter accessibility_tree: the desktop has no AT-SPI accessibility tree exported yet",
        "compare_table rule chart: not yet",
        "metric check_page_number_colors: not yet",
    ]
    assert why_not({"evaluator": {"func": "infeasible"}}) == []
    assert why_not({"evaluator": {"func": "x"}}, domain="vs_code") == [
        "VS Code is not in Debian (not installed on the desktop)"
    ]


@pytest.mark.parametrize("name", ["../../.ssh/id_rsa", "a/gimprc", "..", "", "x" * 300])
def test_the_gimp_config_getter_reads_only_a_file_name_in_gimps_folder(tmp_path: Path, name: str) -> None:
    ctx = FunctionContext(gym="ubuntu")
    getters = Getters(ctx, tmp_path, {})
    with pytest.raises(ValueError, match="not a file name"):
        asyncio.run(getters.get({"type": "gimp_config_file", "file_name": name, "dest": "gimprc"}))


def test_a_scripts_clicks_are_scaled_from_osworlds_screen_and_kept_on_the_envs() -> None:
    screen = SimpleNamespace(screen_size=(1280, 720))  # the env's screen (two thirds of OSWorld's)
    assert _click(screen, Click(960, 540, 2)) == ClickAction(point=(640, 360), pattern=[100])
    assert _click(screen, Click(5000, -3)) == ClickAction(point=(1279, 0))
    assert _click(screen, Click(None, None)) == ClickAction()  # where the pointer is
