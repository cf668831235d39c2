"""Fixtures of the browser tests (the loopback ``site`` serving tests/browser/fixtures is in
tests/conftest.py, shared with the Ray and remote-controller tests)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, sync_playwright

from hud_gym.controllers.browser.chromium import LAUNCH_ARGS, ChromiumNotFoundError, find_chromium
from hud_gym.controllers.browser.launch_folder import LaunchFolder
from hud_gym.controllers.process_utils import kill_process_tree


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the browser tests (with the reason) on a machine without Chromium."""
    try:
        find_chromium()
    except ChromiumNotFoundError as exc:
        skip = pytest.mark.skip(reason=str(exc))
        for item in items:
            if "tests/browser" in str(item.fspath).replace("\\", "/"):
                item.add_marker(skip)


@pytest.fixture(scope="module")
def controller_gym() -> str:
    """The browser tests' ``controller="subprocess"`` envs share one browser server per module."""
    return "browser"


@pytest.fixture(scope="module", params=["cdp", "headed"])
def capture(request: pytest.FixtureRequest) -> str:
    """The behaviour tests run on both capture paths (``capture=`` of ``hud/Browser-v0``)."""
    return str(request.param)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """A plain headless Chromium of the test's own (for pages the product serves: the UI, reports)."""
    folder = LaunchFolder()  # its home, temp files and crash dumps: not the host's
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(find_chromium()), args=list(LAUNCH_ARGS), env={**folder.env(os.environ)}
        )
        yield browser
        browser.close()
    kill_process_tree(folder.pids())
    folder.remove()
