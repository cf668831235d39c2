"""The fast tier (``make test-fast``) selects what tests/tiers.py says: no Chromium or desktop test,
no trainer, and the ``subprocess`` half of the controller matrix only on the protocol subset."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from _pytest.mark.expression import Expression  # what ``-m`` compiles its expression with
from tiers import PROTOCOL_SUBSET

ROOT = Path(__file__).parent.parent


def fast_expression() -> str:
    """The ``-m`` expression of ``make test-fast`` (the Makefile's ``FAST``)."""
    found = re.search(r"^FAST := (.+)$", (ROOT / "Makefile").read_text(encoding="utf-8"), re.MULTILINE)
    assert found, "the Makefile defines no FAST expression"
    return found.group(1).strip()


MODULES = [
    "tests/test_qa_env.py",
    "tests/browser/test_browser_lifecycle.py",
    "tests/test_orphans.py",
    "tests/test_run_memory.py",
    "tests/security/test_renderer_limits.py",
]
"""The modules whose tiers are checked: one ``--collect-only`` run of them all (each run imports
the suite's conftests and these modules: a minute on a loaded machine)."""


@pytest.fixture(scope="module")
def collected() -> dict[str, set[str]]:
    """Node id -> marker names of every test ``pytest --collect-only`` collects in :data:`MODULES`."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "tier_report",
            *MODULES,
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "tests")},  # where ``-p tier_report`` is found
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = [line.split(" ", 2) for line in done.stdout.splitlines() if line.startswith("TIERS ")]
    listed = [line for line in done.stdout.splitlines() if "::" in line and not line.startswith("TIERS ")]
    assert sorted(row[1] for row in rows) == sorted(listed), "the plugin saw other tests than the run listed"
    return {row[1]: set(row[2].split()) for row in rows}


def select(collected: dict[str, set[str]], expression: str, *modules: str) -> list[str]:
    """The node ids of ``modules`` that ``-m expression`` selects (pytest's own evaluation of it)."""
    compiled = Expression.compile(expression)
    chosen = [n for n in collected if n.split("::")[0] in modules]
    assert chosen, f"none of {modules} collected"
    return [n for n in chosen if compiled.evaluate(collected[n].__contains__)]


@pytest.mark.timeout(300)
def test_the_fast_tier_keeps_the_protocol_subset_and_drops_chromium_and_slow_modules(
    collected: dict[str, set[str]],
) -> None:
    modules = ["tests/test_qa_env.py", "tests/browser/test_browser_lifecycle.py", "tests/test_orphans.py"]
    fast = select(collected, fast_expression(), *modules)

    assert not [n for n in fast if not n.startswith("tests/test_qa_env.py")]
    remote = {n.split("::")[1].split("[")[0] for n in fast if n.endswith("[subprocess]")}
    assert remote == set(PROTOCOL_SUBSET), remote ^ set(PROTOCOL_SUBSET)
    local = {n.split("::")[1].split("[")[0] for n in fast if n.endswith("[local]")}
    assert remote < local and len(local) > 3 * len(remote), local


def test_an_unregistered_marker_is_an_error(tmp_path: Path) -> None:
    """``--strict-markers``: a typo in a tier marker fails the run instead of selecting nothing."""
    test = tmp_path / "test_typo.py"
    test.write_text("import pytest\n\n@pytest.mark.sloww\ndef test_x():\n    pass\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", str(ROOT / "pyproject.toml"), str(test)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0 and "'sloww' not found in `markers`" in done.stdout + done.stderr, done.stdout


@pytest.mark.timeout(300)
def test_make_test_runs_the_serial_tier_apart_and_everything_once(collected: dict[str, set[str]]) -> None:
    """``make test``: the workers' run (``-m "not serial"``) and the serial run (``-m serial``)
    split the suite; the memory and limit tests are in the serial one."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    runs = re.findall(r"^\t\$\(PY\) -m pytest (.*)$", makefile.split("\ntest:", 1)[1].split("\n\n", 1)[0], re.MULTILINE)
    assert runs == ['$(XDIST) -m "not serial"', "-m serial"], runs
    modules = ["tests/test_run_memory.py", "tests/security/test_renderer_limits.py", "tests/test_qa_env.py"]
    serial, parallel = select(collected, "serial", *modules), select(collected, "not serial", *modules)
    assert serial and {n.split("::")[0] for n in serial} == set(modules[:2]), serial
    assert parallel and {n.split("::")[0] for n in parallel} == {modules[2]}, parallel
    assert sorted(serial + parallel) == sorted(n for n in collected if n.split("::")[0] in modules)
