"""Shared fixtures.

Behaviour tests run against every place a controller can run on this machine: the ``controller``
fixture is parametrised over :data:`CONTROLLERS` (ids ``local`` and ``subprocess``). A test module
names the gym it drives with a ``controller_gym`` fixture; for ``"subprocess"`` the fixture then
keeps that gym's controller server running for the whole module (one server start, shared by
every env the module makes, as in a real process) and checks that it is gone afterwards. Tests
that reach inside an in-process controller carry the ``local_only`` marker: they do not take the
fixture, or their ``subprocess`` variants are deselected.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gymnasium
import pytest
from controller_servers import running_servers
from local_site import serve_directory
from tiers import deselected_whole, mark_tiers

import hud_gym  # noqa: F401  (registers the gym ids)

CONTROLLERS = ("local", "subprocess")
"""Where the behaviour tests run their envs' controllers (``controller=`` of every gym)."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "local_only(reason): the test reaches inside the in-process controller (its page, its X "
        "connection, its Chromium process, ...), so it runs with controller='local' only",
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``-m`` (``make test-fast``), a folder or module whose tiers the expression leaves out
    is not imported at all."""
    return True if deselected_whole(collection_path, config.getoption("markexpr")) else None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A ``local_only`` test that takes a ``controller``-parametrised fixture runs with ``local`` only;
    the others get their tier markers (tests/tiers.py) before ``-m`` selects among them."""
    kept, dropped = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        remote = callspec is not None and callspec.params.get("controller", "local") != "local"
        (dropped if remote and item.get_closest_marker("local_only") else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
    mark_tiers(items)


@pytest.fixture(scope="module")
def controller_gym() -> str | None:
    """The gym (``"qa"``, ``"browser"``, ``"ubuntu"``) whose server ``controller`` keeps running
    through a module; ``None``: none (each env's server then starts and stops with it)."""
    return None


@pytest.fixture(scope="module", params=CONTROLLERS, ids=CONTROLLERS)
def controller(request: pytest.FixtureRequest, controller_gym: str | None) -> Iterator[str]:
    """The ``controller=`` argument of the envs a behaviour test makes: ``"local"`` or ``"subprocess"``.

    For ``"subprocess"`` a lease on this process's server for ``controller_gym`` is held until the
    module ends (the server a user's envs would share); then no server process may be left.
    """
    where: str = request.param
    if where != "subprocess" or controller_gym is None:
        yield where
        return
    from hud_gym.controllers.remote.launch import SUBPROCESS
    from hud_gym.core.loop import get_loop_thread

    runner = get_loop_thread()
    lease = runner.run(SUBPROCESS.acquire(controller_gym), timeout=90)
    try:
        yield where
    finally:
        runner.run(lease.release(), timeout=90)
    leaked = running_servers()
    assert not leaked, f"controller servers left running after the module: {[p.pid for p in leaked]}"


@pytest.fixture
def make_env() -> Iterator[Callable[..., Any]]:
    """``gymnasium.make`` that closes every env it made at the end of the test."""
    made: list[Any] = []

    def factory(env_id: str = "hud/QA-v0", **kwargs: Any) -> Any:
        env = gymnasium.make(env_id, **kwargs)
        made.append(env)
        return env

    yield factory
    for env in made:
        env.close()


@pytest.fixture
def make_controller_env(make_env: Callable[..., Any], controller: str) -> Callable[..., Any]:
    """``make_env`` with ``controller=`` the ``controller`` parameter (unless given)."""

    def factory(env_id: str = "hud/QA-v0", **kwargs: Any) -> Any:
        kwargs.setdefault("controller", controller)
        return make_env(env_id, **kwargs)

    return factory


@pytest.fixture(scope="session")
def site() -> Iterator[str]:
    """Base URL (``http://127.0.0.1:<port>``) serving tests/browser/fixtures."""
    with serve_directory(Path(__file__).parent / "browser" / "fixtures") as url:
        yield url


@pytest.fixture(scope="session", autouse=True)
def _sb3_logs_in_the_tests_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Stable-Baselines3 makes a log folder per ``learn()`` (``$TMPDIR/SB3-<date>`` unless
    ``SB3_LOGDIR`` names one): inside pytest's own temporary tree, not loose in /tmp."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3-logs")))
        yield


@pytest.fixture(autouse=True)
def _release_the_stores_a_test_opened() -> Iterator[None]:
    """Close the connections of every job store a test opened (its tmp ``HUD_GYM_HOME``), once it
    is over: the evaluation and event-loop pool threads outlive tests, and each thread that touched
    a store keeps a connection (3 descriptors) to it, which over the whole suite ran out of
    descriptors (python-xlib's ``select()`` fails past fd 1023)."""
    from hud_gym.jobs import store

    before = set(store._stores)
    yield
    for home in set(store._stores) - before:
        store.release_store(home)
