"""The built wheel holds every package and data file of the source tree.

`make test` installs hud-gym editable, which never sees the wheel: a subpackage or data file left
out of it (as ``hud_gym.agents`` once was) only breaks ``pip install hud-gym``. This builds the
wheel and compares its file list with the checkout. ``scripts/wheel-smoke.sh`` (CI) goes further:
it installs the wheel into a clean venv and runs the CLI and a job from it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCE_FOLDERS = {"hud_gym": "hud_gym", "controllers": "hud_gym/controllers", "wrappers": "hud_gym/wrappers"}
DATA_SUFFIXES = (".json", ".jsonl", ".yaml", ".js", ".html", ".css")


def _source_files(*folders: str) -> list[str]:
    """The checkout's files (tracked, or new and not ignored) under ``folders``."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", *folders],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [path for path in listed if (ROOT / path).is_file()]


def _expected_files() -> set[str]:
    """Wheel paths of every module and data file in the package folders of the checkout."""
    tracked = _source_files(*SOURCE_FOLDERS)
    expected = set()
    for path in tracked:
        folder, _, rest = path.partition("/")
        if path.endswith(".py") or path.endswith(DATA_SUFFIXES):
            expected.add(f"{SOURCE_FOLDERS[folder]}/{rest}")
    return expected


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Built from a copy: setuptools reuses a source tree's build/ folder, which may hold old files.
    source = tmp_path_factory.mktemp("source")
    for path in _source_files():
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / path, source / path)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(source)],
        check=True,
        capture_output=True,
        timeout=240,
    )
    (built,) = out.glob("*.whl")
    return built


@pytest.fixture(scope="module")
def wheel_files(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


@pytest.mark.timeout(300)
def test_wheel_has_every_module_and_data_file(wheel_files: set[str]) -> None:
    missing = sorted(_expected_files() - wheel_files)
    assert not missing, f"the wheel leaves out {len(missing)} files: {missing[:20]}"


@pytest.mark.timeout(300)
def test_wheel_has_the_cli_entry_point(wheel: Path, wheel_files: set[str]) -> None:
    (entry_points,) = [name for name in wheel_files if name.endswith(".dist-info/entry_points.txt")]
    with zipfile.ZipFile(wheel) as archive:
        text = archive.read(entry_points).decode()
    assert "hud-gym = hud_gym.cli:main" in text
