"""``hud-gym doctor`` checks (hud_gym.cli.doctor), run for real on this machine.

The failure cases change the real conditions the checks look at (``HUD_GYM_CHROMIUM`` pointing
at nothing, an empty ``PATH``, an unwritable ``HUD_GYM_HOME``), nothing is mocked.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import psutil
import pytest

from hud_gym.cli.doctor import Check, check_chromium, check_home, exit_code, render_checks, run_checks

REQUIRED = [
    "python",
    "hud-gym",
    "chromium",
    "chromium-launch",
    "xvfb",
    "openbox",
    "bwrap",
    "python-xlib",
    "hud-gym-home",
]
OPTIONAL = ["xdotool", "xclip", "sb3", "ray", "miniwob", "ffmpeg"]


def _doctor_browsers(temp_dir: Path) -> list[int]:
    """Chromium processes started by this test's doctor run that are still alive: their profile
    is under ``temp_dir``, this test's own temporary folder (another doctor run on the machine
    has its own)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if any(str(temp_dir) in part for part in proc.info["cmdline"] or []):
                found.append(proc.pid)
        except psutil.Error:
            continue
    return found


@pytest.fixture(scope="module")
def doctor_temp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary folder of this module's doctor run (its Chromium profile goes there)."""
    return tmp_path_factory.mktemp("doctor-temp")


@pytest.fixture(scope="module")
def checks(tmp_path_factory: pytest.TempPathFactory, doctor_temp: Path) -> list[Check]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HUD_GYM_HOME", str(tmp_path_factory.mktemp("hud-gym-home")))
        patch.setattr(tempfile, "tempdir", str(doctor_temp))
        return run_checks()


@pytest.mark.timeout(120)
def test_every_required_check_passes_on_this_machine(checks: list[Check], doctor_temp: Path) -> None:
    by_name = {c.name: c for c in checks}
    assert list(by_name) == [
        "python",
        "hud-gym",
        "chromium",
        "chromium-launch",
        "xvfb",
        "openbox",
        "bwrap",
        "xdotool",
        "xclip",
        "python-xlib",
        "sb3",
        "ray",
        "miniwob",
        "hud-gym-home",
        "ffmpeg",
    ]
    failed = [c for c in checks if c.required and not c.ok]
    assert failed == [], render_checks(failed)
    assert [c.name for c in checks if c.required] == REQUIRED
    assert all(c.fix is None for c in checks if c.ok)
    assert exit_code(checks) == 0
    assert by_name["chromium"].detail.startswith("Chromium ") and "/chromium" in by_name["chromium"].detail
    assert by_name["xvfb"].detail == "Xvfb at /usr/bin/Xvfb"
    assert by_name["python-xlib"].detail.startswith("python-xlib 0.")
    assert by_name["hud-gym-home"].detail.endswith("is writable (HUD_GYM_HOME)")
    # This venv has every extra installed.
    assert all(by_name[name].ok for name in OPTIONAL), render_checks([by_name[n] for n in OPTIONAL])
    assert _doctor_browsers(doctor_temp) == []  # the headless launch left nothing running


def test_rendering_lists_each_check_and_the_fix_of_failures() -> None:
    checks = [
        Check(name="chromium", ok=True, detail="Chromium 1 at /usr/bin/chromium"),
        Check(name="xvfb", ok=False, detail="Xvfb not found", fix="apt-get install xvfb"),
        Check(name="ray", ok=False, detail="ray does not import", fix="pip install 'hud-gym[ray]'", required=False),
    ]
    assert render_checks(checks).splitlines() == [
        "ok      chromium  Chromium 1 at /usr/bin/chromium",
        "FAIL    xvfb      Xvfb not found",
        "                  fix: apt-get install xvfb",
        "missing ray       ray does not import",
        "                  fix: pip install 'hud-gym[ray]'",
    ]
    assert exit_code(checks) == 1
    assert exit_code(checks[:1] + checks[2:]) == 0  # an optional feature missing is not a failure


@pytest.mark.timeout(120)
def test_missing_binaries_are_reported_with_the_command_that_installs_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("HUD_GYM_CHROMIUM", str(tmp_path / "no-such-chromium"))
    monkeypatch.setenv("PATH", str(empty))
    checks = {c.name: c for c in run_checks()}
    chromium = checks["chromium"]
    assert not chromium.ok and "no-such-chromium" in chromium.detail
    assert chromium.fix == "unset HUD_GYM_CHROMIUM (or point it at a Chromium executable), or apt-get install chromium"
    assert not checks["chromium-launch"].ok and checks["chromium-launch"].detail == "skipped: no Chromium"
    for name, package in (
        ("xvfb", "xvfb"),
        ("openbox", "openbox"),
        ("bwrap", "bubblewrap"),
        ("xdotool", "xdotool"),
        ("xclip", "xclip"),
    ):
        assert not checks[name].ok and "not found on PATH" in checks[name].detail
        assert checks[name].fix == f"apt-get install {package}"
    assert checks["xvfb"].required and not checks["xdotool"].required
    assert exit_code(list(checks.values())) == 1
    assert checks["python"].ok and checks["python-xlib"].ok  # unaffected by PATH
    text = render_checks(list(checks.values()))
    assert "fix: apt-get install xvfb" in text and "FAIL    chromium" in text


def test_chromium_not_configured_says_apt_get(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no $HUD_GYM_CHROMIUM, no Playwright cache and no system browser the fix is the apt package."""
    monkeypatch.delenv("HUD_GYM_CHROMIUM", raising=False)
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path / "no-browsers"))
    monkeypatch.setenv("HOME", str(tmp_path))
    check, path = check_chromium()
    if Path("/usr/bin/chromium").exists():
        assert check.ok and path is not None  # the system browser is found without any configuration
    else:
        assert not check.ok and check.fix == "apt-get install chromium"


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write to read-only directories")
def test_unwritable_home_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    monkeypatch.setenv("HUD_GYM_HOME", str(locked / "home"))
    try:
        check = check_home()
    finally:
        locked.chmod(0o700)
    assert not check.ok and "is not writable" in check.detail and check.fix.startswith("export HUD_GYM_HOME=")


def test_home_that_is_a_file_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("HUD_GYM_HOME", str(blocker))
    check = check_home()
    assert not check.ok and str(blocker) in check.detail and "export HUD_GYM_HOME=" in check.fix
    monkeypatch.setenv("HUD_GYM_HOME", str(tmp_path / "fresh" / "home"))
    check = check_home()
    assert check.ok and check.detail.endswith("is writable (HUD_GYM_HOME)")
    assert (tmp_path / "fresh" / "home").is_dir()
