"""The desktop's launch and path policy (:mod:`hud_gym.controllers.ubuntu.policy`), as the pure
functions it is: what ``launch`` starts and which paths a task reaches, with and without the
env's permissions. No display needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.ubuntu.apps import KNOWN_APPS
from hud_gym.controllers.ubuntu.policy import LAUNCHABLE, detect_container, launch_argv, resolve_path

pytestmark = pytest.mark.timeout(30)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


def test_every_launchable_app_is_a_known_app() -> None:
    assert set(LAUNCHABLE) == set(KNOWN_APPS)


def test_known_apps_start_with_only_the_options_they_list(home: Path) -> None:
    assert launch_argv("xterm", ["-title", "notes", "-g", "80x24"], home=home) == [
        "xterm",
        "-title",
        "notes",
        "-g",
        "80x24",
    ]
    for args, refused in ((["-e", "sh"], "-e"), (["-title"], "-title"), (["-title", "x", "-hold"], "-hold")):
        with pytest.raises(PermissionError, match=f"argument '{refused}' is not allowed without shell permission"):
            launch_argv("xterm", args, home=home)
    assert launch_argv("xterm", ["-e", "sh"], home=home, shell_allowed=True) == ["xterm", "-e", "sh"]
    with pytest.raises(PermissionError, match="takes no arguments"):
        launch_argv("xcalc", ["-rpn"], home=home)
    assert launch_argv("xcalc", ["-rpn"], home=home, shell_allowed=True) == ["xcalc", "-rpn"]


def test_file_arguments_stay_in_the_home(home: Path, tmp_path: Path) -> None:
    editor = [*KNOWN_APPS["editor"]]
    assert launch_argv("editor", ["notes.txt"], home=home) == [*editor, str(home / "notes.txt")]
    assert launch_argv("editor", [], home=home) == editor
    for path in ("/etc/passwd", "../outside.txt", "~root/.bashrc"):
        with pytest.raises(PermissionError, match="home"):
            launch_argv("editor", [path], home=home)
    with pytest.raises(ValueError, match="at most one argument"):
        launch_argv("xedit", ["a.txt", "b.txt"], home=home)
    with pytest.raises(ValueError, match="at most one argument"):
        launch_argv("xedit", ["-geometry"], home=home)
    assert launch_argv("xedit", [str(tmp_path / "x.txt")], home=home, allow_absolute_paths=True)[-1] == str(
        tmp_path / "x.txt"
    )


def test_the_event_log_goes_to_the_home(home: Path) -> None:
    base = [*KNOWN_APPS["eventlog"]]
    assert launch_argv("eventlog", ["--title", "log"], home=home) == [
        *base,
        "--title",
        "log",
        "--log",
        str(home / "eventlog.jsonl"),
    ]
    assert launch_argv("eventlog", ["--log", "logs/a.jsonl"], home=home)[-1] == str(home / "logs" / "a.jsonl")
    with pytest.raises(PermissionError, match="home"):
        launch_argv("eventlog", ["--log", "/tmp/a.jsonl"], home=home)
    with pytest.raises(PermissionError, match="'-x'"):
        launch_argv("eventlog", ["-x", "1"], home=home, shell_allowed=True)  # its options, whatever the shell


def test_other_programs_need_the_shell_and_the_path(home: Path, tmp_path: Path) -> None:
    with pytest.raises(PermissionError, match="only xterm, editor, .* can be launched by name.*allow_shell=True"):
        launch_argv("bash", ["-c", "true"], home=home)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "hello").write_text("#!/bin/sh\n")
    (bin_dir / "hello").chmod(0o755)
    assert launch_argv("hello", ["a"], home=home, shell_allowed=True, search_path=str(bin_dir)) == ["hello", "a"]
    with pytest.raises(ValueError, match="no program 'bash' on the PATH"):
        launch_argv("bash", [], home=home, shell_allowed=True, search_path=str(bin_dir))


def test_the_apps_of_the_session_give_the_command_line(home: Path) -> None:
    apps = {**KNOWN_APPS, "editor": ["/sandbox/python", "-I", "/share/apps/editor.py"]}
    assert launch_argv("editor", ["a.txt"], home=home, apps=apps) == [*apps["editor"], str(home / "a.txt")]


def test_without_a_home_only_launches_that_need_no_path_work() -> None:
    assert launch_argv("xclock", [], home=None) == ["xclock"]
    with pytest.raises(ControllerError, match="not started"):
        launch_argv("editor", ["a.txt"], home=None)
    with pytest.raises(ControllerError, match="not started"):
        launch_argv("eventlog", [], home=None)


def test_paths_resolve_inside_the_home_and_no_link_leads_out(home: Path, tmp_path: Path) -> None:
    assert resolve_path("~", home) == home
    assert resolve_path("~/a/b.txt", home) == home / "a" / "b.txt"
    assert resolve_path("a/../b.txt", home) == home / "b.txt"
    (home / "out").symlink_to(tmp_path)
    for path in ("out/x", "..", "/etc/passwd", "~other"):
        with pytest.raises(PermissionError):
            resolve_path(path, home)
    assert resolve_path("/etc/passwd", home, allow_absolute_paths=True) == Path("/etc/passwd")
    assert resolve_path("out/x", home, allow_absolute_paths=True) == home / "out" / "x"


def test_only_the_gyms_image_counts_as_its_container(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HUD_GYM_IN_CONTAINER", raising=False)
    assert detect_container() is False
    monkeypatch.setenv("HUD_GYM_IN_CONTAINER", "1")
    assert detect_container() is True
    monkeypatch.setenv("HUD_GYM_IN_CONTAINER", "yes")
    assert detect_container() is False
