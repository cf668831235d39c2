"""The test tiers: which collected tests are ``e2e``, ``slow``, ``soak``, ``serial`` or ``matrix``.

``make test`` runs every test; ``make test-fast`` (the inner loop) deselects
``-m "not e2e and not slow and not soak and not matrix and not serial"``. The markers are registered in
pyproject.toml (``--strict-markers``) and put on the tests here, at collection, by folder,
module and fixture, so that a new test in a Chromium or desktop folder is ``e2e`` without a
decorator. A test may also carry one of them explicitly (``@pytest.mark.slow``).

- ``e2e``: drives a real Chromium, Xvfb desktop or their apps end to end.
- ``slow``: takes more than about 10 s on a loaded 2-core machine without being ``e2e``
  (trainers, Ray, the CLI's job runs, process-fault drills).
- ``soak``: loops long on purpose (memory and descriptor growth over many episodes).
- ``serial``: measures or exhausts its processes' memory and CPU; ``make test`` runs these
  after the others (which run in parallel workers, pytest-xdist), one at a time.
- ``matrix``: the ``subprocess`` variant of a behaviour test run with both controllers
  (``controller`` fixture, tests/conftest.py), except the :data:`PROTOCOL_SUBSET` kept in the
  fast tier to cover the controller protocol.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from _pytest.mark.expression import Expression  # what ``-m`` compiles its expression with

TESTS = Path(__file__).parent

E2E_FOLDERS = frozenset({"browser", "ubuntu", "peers", "hacking", "faults"})
"""Folders (under tests/) whose tests drive Chromium, the desktop or their apps."""

E2E_FIXTURES = frozenset({"site", "desktop", "controlled_desktop", "browser", "capture"})
"""Fixtures that only a test driving a real Chromium or desktop takes."""

E2E_MODULES = frozenset(
    {
        "agents/test_agents_e2e.py",
        "agents/test_hud_control_sdk.py",
        "security/test_browser_crash_isolation.py",
        "security/test_browser_file_urls.py",
        "security/test_desktop_sandbox.py",
        "security/test_desktop_xauth.py",
        "security/test_episode_limits.py",
        "security/test_host_functions.py",
        "security/test_renderer_limits.py",
        "security/test_server_exposure.py",
        "protocols/test_mcp_miniwob.py",
        "protocols/test_openenv.py",
    }
)
"""Modules outside :data:`E2E_FOLDERS` whose tests drive Chromium or the desktop."""

SLOW_MODULES = frozenset(
    {
        "test_ppo_miniwob_example.py",
        "test_ray.py",
        "test_rllib.py",
        "test_sb3.py",
        "test_sb3_vec_env.py",
        "test_trainer_examples.py",
        "test_trl_trainer.py",
        "test_verifiers_v1.py",
        "test_orphans.py",
        "protocols/test_mcp.py",
        "protocols/test_mcp_fidelity.py",
    }
)
"""Modules (paths under tests/) whose tests take more than about 10 s each."""

SOAK_MODULES = frozenset({"test_run_memory.py"})
"""Modules that loop many episodes on purpose."""

SERIAL_MODULES = frozenset(
    {
        "test_run_memory.py",
        "security/test_browser_crash_isolation.py",
        "security/test_episode_limits.py",
        "security/test_renderer_limits.py",
    }
)
"""Modules whose tests measure or exhaust their processes' memory and CPU (peaks, hogs, limits):
``make test`` runs them after the parallel run, alone on the machine."""

PROTOCOL_SUBSET = frozenset(
    {
        "test_check_env_passes_with_no_skips",
        "test_step_accepts_an_encoded_action",
        "test_bad_action_reports_and_the_episode_goes_on",
        "test_step_before_reset_and_after_the_end",
        "test_step_timeout_truncates",
        "test_evaluate_and_final_response",
        "test_observations_are_in_the_space",
        "test_info_contents",
        "test_close_twice_and_reset_after_close",
        "test_async_envs_run_concurrently",
    }
)
"""Behaviour tests (names, in tests/test_qa_env.py) whose ``subprocess`` variant stays in the fast
tier: reset, step, the action codec, errors, grading, observations, info, close and async over the
controller protocol."""


def path_tiers(path: Path) -> set[str]:
    """The tiers of every test under ``path`` (a folder or module), by folder and module name."""
    try:
        module = path.resolve().relative_to(TESTS.resolve()).as_posix()
    except ValueError:
        return set()
    tiers = set()
    if module.split("/")[0] in E2E_FOLDERS or module in E2E_MODULES:
        tiers.add("e2e")
    if module in SLOW_MODULES:
        tiers.add("slow")
    if module in SOAK_MODULES:
        tiers.add("soak")
    if module in SERIAL_MODULES:
        tiers.add("serial")
    return tiers


def tiers_of(item: pytest.Item) -> set[str]:
    """The tier markers that :func:`mark_tiers` gives ``item`` (besides any it carries)."""
    tiers = path_tiers(Path(str(item.fspath)))
    if E2E_FIXTURES & set(item.fixturenames):
        tiers.add("e2e")
    callspec = getattr(item, "callspec", None)
    remote = callspec is not None and callspec.params.get("controller", "local") != "local"
    if remote and getattr(item, "originalname", item.name) not in PROTOCOL_SUBSET:
        tiers.add("matrix")
    return tiers


def mark_tiers(items: list[pytest.Item]) -> None:
    """Put the tier markers on the collected ``items`` (before ``-m`` selects among them)."""
    for item in items:
        for tier in sorted(tiers_of(item)):
            item.add_marker(tier)


def deselected_whole(path: Path, markexpr: str) -> bool:
    """Whether ``-m markexpr`` deselects every test under ``path`` by its tiers alone, whatever other
    markers its tests carry: then ``make test-fast`` does not even import it (Playwright, torch, Ray)."""
    tiers = path_tiers(path)
    if not markexpr or not tiers:
        return False
    expression = Expression.compile(markexpr)
    free = sorted(set(re.findall(r"[A-Za-z_][\w.]*", markexpr)) - {"and", "or", "not", "True", "False"} - tiers)
    for values in itertools.product((False, True), repeat=len(free)):
        chosen = tiers | {name for name, on in zip(free, values, strict=True) if on}
        if expression.evaluate(chosen.__contains__):
            return False
    return True
