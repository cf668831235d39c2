"""Issue 11, item 4: no browser task, agent or page reads the host's files.

For ``/etc/passwd``, ``/etc/shadow`` and the listings of ``/root`` and ``$HUD_GYM_HOME``, the agent's
``goto``, ``new_tab`` and ``goto view-source:`` and a task's ``setup goto`` and a frame in its
``load_html_content`` are tried; for ``/etc/passwd`` and ``/root`` (a file and a listing) also a
page's link (clicked), HTTP redirect, script redirect, iframe and ``window.open``. The agent's
and the task's get a clear refusal (``action_error`` / setup error); after every attempt nothing of
the secret is in the observation, the step info, the task's grade, or the text of any frame of any
tab. With ``allow_file_urls`` naming a temp directory, its files open, and nothing outside it does:
not by path, ``..``, a symlink, or a page inside the directory reaching out.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium
import pytest
from browser_attacks import (
    CLICK,
    PAGE_VECTORS,
    Secret,
    attack_page,
    attack_site,
    attack_url,
    everything_seen,
    probe_task,
    secrets_of_host,
)

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym.actions import ClickAction, CustomAction, WaitAction
from hud_gym.controllers.browser.chromium import ChromiumNotFoundError, find_chromium
from hud_gym.evaluation import SetupError
from hud_gym.task import Task

try:
    find_chromium()
except ChromiumNotFoundError as exc:
    pytest.skip(str(exc), allow_module_level=True)

pytestmark = pytest.mark.timeout(300)

SECRETS = ("/etc/passwd", "/etc/shadow", "/root listing", "$HUD_GYM_HOME listing")
PAGE_TARGETS = ("/etc/passwd", "/root listing")
"""The secrets hostile pages go after: a file and a listing (the pages' ways in do not depend on
the path; the agent's and the task's ways are tried on every secret)."""
INSIDE = "inside-the-allowed-directory-7d1e"


@pytest.fixture(scope="module")
def secrets(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Secret]]:
    home = tmp_path_factory.mktemp("hud-gym-home")
    previous = os.environ.get("HUD_GYM_HOME")
    os.environ["HUD_GYM_HOME"] = str(home)
    try:
        yield {s.name: s for s in secrets_of_host(Path(os.environ["HUD_GYM_HOME"]))}
    finally:
        if previous is None:
            os.environ.pop("HUD_GYM_HOME", None)
        else:
            os.environ["HUD_GYM_HOME"] = previous


def secret_named(secrets: dict[str, Secret], name: str) -> Secret:
    if name not in secrets:
        pytest.skip(f"{name} does not exist on this machine")
    return secrets[name]


@pytest.fixture(scope="module")
def attacker() -> Iterator[str]:
    with attack_site() as base:
        yield base


def make_env(**options: Any) -> gymnasium.Env:
    return gymnasium.make("hud/Browser-v0", screen_size=(640, 480), navigation_timeout=5, **options)


@pytest.fixture(scope="module")
def env() -> Iterator[gymnasium.Env]:
    env = make_env()
    yield env
    env.close()


@pytest.fixture(scope="module")
def allowed_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("allowed")
    (root / "inside.txt").write_text(INSIDE)
    (root / "sub").mkdir()
    (root / "sub" / "page.html").write_text(f"<title>inside</title><p>{INSIDE}</p>")
    return root


@pytest.fixture(scope="module")
def files_env(allowed_dir: Path) -> Iterator[gymnasium.Env]:
    env = make_env(allow_file_urls=allowed_dir)
    yield env
    env.close()


def attempt(env: gymnasium.Env, secret: Secret, *actions: Any) -> tuple[dict[str, Any], str]:
    """A fresh episode graded by :func:`probe_task` and the ``actions``; return the first step
    info that is not ``ok`` (else the last one) and everything seen then."""
    observation, info = env.reset(options={"task": probe_task(secret)})
    for action in actions:
        observation, _, _, _, step_info = env.step(action)
        info = step_info if step_info["status"] != "ok" or info["status"] == "ok" else info
        assert step_info["status"] in ("ok", "action_error"), step_info
    return info, everything_seen(env, observation, info, secret)


def assert_unseen(secret: Secret, seen: str, how: str) -> None:
    assert secret.marker not in seen, f"{how} read {secret.name}"


def then(vector: str) -> list[Any]:
    """What the agent does on an attack page: click the link or the popup button (the step waits
    for the navigation or the tab it starts), else wait a little for what the page started."""
    return [ClickAction(point=CLICK)] if vector in ("link", "popup") else [WaitAction(time=150)]


def goto(url: str) -> CustomAction:
    return CustomAction(action="goto", args={"url": url})


@pytest.mark.parametrize("name", SECRETS)
def test_no_agent_action_page_or_task_setup_reads_the_host(
    env: gymnasium.Env, attacker: str, secrets: dict[str, Secret], name: str
) -> None:
    secret = secret_named(secrets, name)
    agent = {
        "goto": goto(secret.url),
        "new_tab": CustomAction(action="new_tab", args={"url": secret.url}),
        "goto view-source:": goto(f"view-source:{secret.url}"),
    }
    for how, action in agent.items():
        info, seen = attempt(env, secret, action)
        assert info["status"] == "action_error" and "refused" in info["action_error"], (how, info)
        assert "allow_file_urls" in info["action_error"] or how == "goto view-source:", info["action_error"]
        assert_unseen(secret, seen, f"the agent's {how}")
    for vector in PAGE_VECTORS if name in PAGE_TARGETS else ():
        _, seen = attempt(env, secret, goto(attack_url(attacker, vector, secret.url)), *then(vector))
        assert_unseen(secret, seen, f"a page's {vector}")
    framed = Task(
        id="framed",
        prompt="x",
        gym="hud-browser",
        evaluate=probe_task(secret).evaluate,
        setup=[("load_html_content", attack_page("iframe", secret.url))],
    )
    observation, info = env.reset(options={"task": framed})
    assert_unseen(secret, everything_seen(env, observation, info, secret), "a task's load_html_content iframe")
    task = Task(id="setup-goto", prompt="x", gym="hud-browser", setup=[("goto", secret.url)])
    with pytest.raises(SetupError, match="refused") as refused:
        env.reset(options={"task": task})
    assert secret.marker not in str(refused.value)


def test_allow_file_urls_opens_its_directory_only(
    files_env: gymnasium.Env, allowed_dir: Path, attacker: str, secrets: dict[str, Secret]
) -> None:
    inside = Secret("inside", (allowed_dir / "inside.txt").as_uri(), INSIDE)
    files_env.reset(options={"task": probe_task(inside)})
    _, _, _, _, info = files_env.step(goto(inside.url))
    assert info["status"] == "ok" and "navigation_error" not in info, info
    assert files_env.unwrapped.evaluate().info["grades"][1]["reward"] == 1.0  # page_contains(INSIDE)
    page = Task(
        id="inside",
        prompt="x",
        gym="hud-browser",
        setup=[("goto", (allowed_dir / "sub" / "page.html").as_uri())],
        evaluate=("page_contains", INSIDE),
    )
    _, info = files_env.reset(options={"task": page})
    assert info["title"] == "inside" and files_env.unwrapped.evaluate().reward == 1.0

    for index, secret in enumerate(secrets.values()):
        escapes = {
            "goto": goto(secret.url),
            "a '..' path": goto(f"{allowed_dir.as_uri()}/sub/../../../../../..{secret.url[len('file://') :]}"),
        }
        if not secret.url.endswith("/"):
            link = allowed_dir / f"link-{Path(secret.url).name}"
            link.symlink_to(secret.url[len("file://") :])
            escapes["a symlink"] = goto(link.as_uri())
        for how, action in escapes.items():
            info, seen = attempt(files_env, secret, action)
            assert info["status"] == "action_error" and "outside the directory" in info["action_error"], (how, info)
            assert_unseen(secret, seen, f"the agent's {how} with allow_file_urls")
        for vector in PAGE_VECTORS if secret.name in PAGE_TARGETS else ():
            # A page inside the allowed directory is a file: page, which Chromium lets open files.
            hostile = allowed_dir / f"{vector}-{abs(hash(secret.url))}.html"
            hostile.write_text(attack_page(vector, secret.url))
            _, seen = attempt(files_env, secret, goto(hostile.as_uri()), *then(vector))
            assert_unseen(secret, seen, f"a file: page's {vector}")
            if index == 0:  # web pages are no closer to the host with allow_file_urls: once suffices
                _, seen = attempt(files_env, secret, goto(attack_url(attacker, vector, secret.url)), *then(vector))
                assert_unseen(secret, seen, f"a web page's {vector} with allow_file_urls")


def test_browser_internal_pages_are_refused(env: gymnasium.Env) -> None:
    env.reset()
    for url in (
        "chrome://crash",
        "chrome://memory-exhaust",
        "chrome://version",
        "devtools://devtools/bundled/inspector.html",
        "about:version",
        "javascript:document.title='pwned'",
        "chrome-extension://x/y",
        "view-source:about:blank",
    ):
        _, _, terminated, _, info = env.step(goto(url))
        assert info["status"] == "action_error" and "refused" in info["action_error"] and not terminated, (url, info)
    _, _, _, _, info = env.step(WaitAction(time=10))
    assert info["status"] == "ok" and info["url"] == "about:blank" and info["title"] == ""
    for url in ("about:blank", "data:text/html,<title>data ok</title>"):
        _, _, _, _, info = env.step(goto(url))
        assert info["status"] == "ok", (url, info)
    assert info["title"] == "data ok"


def test_allow_file_urls_is_a_directory_not_a_switch() -> None:
    with pytest.raises(ValueError, match="names the one directory"):
        make_env(allow_file_urls=True)
    with pytest.raises(ValueError, match="not an existing directory"):
        make_env(allow_file_urls="/no/such/directory/hud-gym")
