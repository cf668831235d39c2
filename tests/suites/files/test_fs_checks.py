"""The file-system setups and evaluators of the task families (controllers/ubuntu/fs_checks.py,
hud_gym/suites/office/checks.py) on a live desktop env: what they grade, and that what an agent can
leave behind (an archive or a document that unpacks to far more than its size, garbage, a path
missing or of the wrong kind) is graded 0, never an evaluator error, and unpacked no further than
the bounds."""

from __future__ import annotations

import base64
import io
import tarfile
import zipfile
from typing import Any

import pytest

from hud_gym import SetupError, Task
from hud_gym.controllers.ubuntu.fs_checks import MAX_SETUP_FILES, MAX_UNPACKED
from hud_gym.evaluation import Grade

pytestmark = pytest.mark.timeout(300)


def grade(env: Any, setup: Any, evaluate: Any) -> Grade:
    env.reset(options={"task": Task(prompt="t", gym="hud-ubuntu", setup=setup, evaluate=evaluate)})
    result = env.unwrapped.evaluate()
    assert isinstance(result, Grade) and not result.is_error, result
    return result


def _b64_zip(name: str, size: int) -> str:
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(name, b"\0" * size)
    return base64.b64encode(data.getvalue()).decode()


def _b64_tar_gz(name: str, size: int) -> str:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as archive:
        info = tarfile.TarInfo(name)
        info.size = size
        archive.addfile(info, io.BytesIO(b"\0" * size))
    return base64.b64encode(data.getvalue()).decode()


def test_tree_mode_and_lines(desktop: Any) -> None:
    tree = {"a.txt": "one\n", "sub/b.txt": {"text": "two", "mode": "600", "mtime": 1_600_000_000}, ".hidden": "x"}
    setup = [("write_tree", "box", tree)]
    assert grade(desktop, setup, [("tree_equals", "box", {"a.txt": "one", "sub/b.txt": None})]).reward == 1.0
    assert grade(desktop, setup, [("tree_equals", "box", {"a.txt": "one"})]).reward == 0.0  # sub/b.txt is extra
    assert grade(desktop, setup, [("tree_equals", "box", {"a.txt": "two", "sub/b.txt": None})]).reward == 0.0
    assert grade(desktop, setup, [("file_mode", "box/sub/b.txt", "600")]).reward == 1.0
    assert grade(desktop, setup, [("file_mode", "box/a.txt", "600")]).reward == 0.0
    lines = [("write_tree", ".", {"r.txt": "  3 404\n\n 12   200 \n"})]
    assert grade(desktop, lines, [("file_lines", "r.txt", ["3 404", "12 200"])]).reward == 1.0
    assert grade(desktop, lines, [("file_lines", "r.txt", ["12 200", "3 404"])]).reward == 0.0
    assert grade(desktop, lines, [("file_lines", "r.txt", ["12 200", "3 404"], False)]).reward == 1.0


def test_missing_paths_grade_0(desktop: Any) -> None:
    for call in (
        ("tree_equals", "nowhere", {"a": None}),
        ("file_mode", "nowhere", "644"),
        ("archive_members", "nowhere.zip", {}),
        ("file_lines", "nowhere.txt", ["x"]),
        ("xlsx_cells", "nowhere.xlsx", {"A1": 1}),
        ("docx_paragraphs", "nowhere.docx", ["x"]),
    ):
        assert grade(desktop, [], [call]).reward == 0.0, call


def test_archives_and_documents_that_unpack_too_far_grade_0(desktop: Any) -> None:
    big = MAX_UNPACKED + 1024
    for name, data in (("bomb.zip", _b64_zip("a.txt", big)), ("bomb.tar.gz", _b64_tar_gz("a.txt", big))):
        result = grade(desktop, [("write_base64", name, data)], [("archive_members", name, {"a.txt": None})])
        assert result.reward == 0.0 and "more than" in result.content, result
    document = grade(
        desktop,
        [("write_base64", "d.xlsx", _b64_zip("xl/workbook.xml", 65 * 1024 * 1024))],
        [("xlsx_cells", "d.xlsx", {})],
    )
    assert document.reward == 0.0 and "unpacks to more" in document.content, document
    garbage = grade(desktop, [("write_tree", ".", {"g.docx": "not a zip"})], [("docx_paragraphs", "g.docx", ["x"])])
    assert garbage.reward == 0.0 and "not an office document" in garbage.content


def test_archive_members_reads_zip_and_tar(desktop: Any) -> None:
    zipped = _b64_zip("./dir/a.txt", 3)
    assert (
        grade(desktop, [("write_base64", "z.zip", zipped)], [("archive_members", "z.zip", {"dir/a.txt": None})]).reward
        == 1.0
    )
    tarred = _b64_tar_gz("b.txt", 2)
    assert (
        grade(desktop, [("write_base64", "t.tgz", tarred)], [("archive_members", "t.tgz", {"b.txt": "\0\0"})]).reward
        == 1.0
    )
    assert (
        grade(desktop, [("write_base64", "t.tgz", tarred)], [("archive_members", "t.tgz", {"c.txt": None})]).reward
        == 0.0
    )


def test_setups_refuse_too_much(desktop: Any) -> None:
    too_many = {f"f{i}": "" for i in range(MAX_SETUP_FILES + 1)}
    with pytest.raises(SetupError, match="at most"):
        desktop.reset(options={"task": Task(prompt="t", gym="hud-ubuntu", setup=[("write_tree", "x", too_many)])})
    with pytest.raises(SetupError, match="leave|outside|home"):
        desktop.reset(options={"task": Task(prompt="t", gym="hud-ubuntu", setup=[("write_tree", "../x", {"a": ""})])})
