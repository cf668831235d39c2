"""The browser gym's setup and evaluate functions, against a real Chromium and loopback pages, with
the controller in this process and in a controller server (where the functions then run)."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import gymnasium
import pytest

import hud_gym
from hud_gym import ClickAction, Task, TypeAction, UnknownFunctionError
from hud_gym.evaluation import Grade

pytestmark = pytest.mark.timeout(120)

PAGE = """<!doctype html><html><head><title>Functions fixture</title></head><body>
<h1>Hello World</h1>
<button id="btn" style="position:absolute;left:20px;top:100px;width:120px;height:40px"
  onclick="this.dataset.n = (+(this.dataset.n||0)) + 1; document.getElementById('out').textContent = 'clicked ' + this.dataset.n">Press</button>
<div id="out">not clicked</div>
<input id="name" style="position:absolute;left:20px;top:200px;width:200px">
<select id="fruit"><option value="a">Apple</option><option value="b">Banana</option></select>
<script>setTimeout(() => { const d = document.createElement('p'); d.id = 'late'; d.textContent = 'late arrival'; document.body.appendChild(d); }, 300);</script>
</body></html>"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root: Path = tmp_path_factory.mktemp("site")
    (root / "page.html").write_text(PAGE, encoding="utf-8")
    (root / "other.html").write_text("<title>Other</title><p>Other page</p>", encoding="utf-8")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def env(controller: str) -> Iterator[gymnasium.Env]:
    env = gymnasium.make("hud/Browser-v0", screen_size=(800, 600), controller=controller)
    yield env
    env.close()


def run(env: gymnasium.Env, setup: object, evaluate: object, actions: list | None = None) -> tuple[float, dict]:
    task = Task(prompt="test", gym="hud-browser", setup=setup, evaluate=evaluate)
    env.reset(seed=0, options={"task": task})
    info: dict = {}
    for action in actions or []:
        _, _, _, _, info = env.step(action)
        assert info["status"] == "ok", info
    grade = env.unwrapped.evaluate()
    assert isinstance(grade, Grade)
    assert not grade.is_error, grade
    return grade.reward, info


def test_goto_adds_scheme_and_url_checks(env: gymnasium.Env, site: str) -> None:
    url = f"http://{site}/page.html"
    assert run(env, ("goto", f"{site}/page.html"), ("url_match", url))[0] == 1.0
    assert run(env, ("goto", f"{site}/page.html"), ("url_match", f"http://{site}/other.html"))[0] == 0.0
    assert run(env, ("navigate_to_url", url), ("url_contains", "page.html"))[0] == 1.0
    assert run(env, ("goto", url), ("url_contains", "nope"))[0] == 0.0


def test_load_html_content_and_page_contains(env: gymnasium.Env) -> None:
    html = "<p>alpha</p><p>beta</p>"
    assert run(env, ("load_html_content", html), ("page_contains", ["alpha", "beta"]))[0] == 1.0
    assert run(env, ("load_html_content", html), ("contains_text", ["alpha", "gamma"]))[0] == 0.0
    partial = {"function": "page_contains", "args": [["alpha", "gamma"]], "kwargs": {"partial_rewarding": True}}
    assert run(env, ("load_html_content", html), partial)[0] == 0.5


def test_page_contains_reads_the_html_as_huds_and_visible_text_contains_what_is_shown(env: gymnasium.Env) -> None:
    html = '<p>shown</p><p style="display:none">hidden</p><a title="tooltip">link</a>'
    assert run(env, ("load_html_content", html), ("page_contains", ["shown", "hidden", "tooltip"]))[0] == 1.0
    assert run(env, ("load_html_content", html), ("visible_text_contains", ["shown", "link"]))[0] == 1.0
    assert run(env, ("load_html_content", html), ("visible_text_contains", ["hidden"]))[0] == 0.0
    assert run(env, ("load_html_content", html), ("visible_text_contains", ["tooltip"]))[0] == 0.0


def test_page_checks_see_the_live_page_at_evaluate_time(env: gymnasium.Env, site: str) -> None:
    # The button is at (20..140, 100..140) on the page; the agent clicks it through a CLA action.
    reward, _ = run(
        env,
        ("goto", f"http://{site}/page.html"),
        ("text_matches", "#out", r"^clicked 1$"),
        actions=[ClickAction(point=(80, 120))],
    )
    assert reward == 1.0
    assert run(env, ("goto", f"http://{site}/page.html"), ("text_matches", "#out", r"^clicked"))[0] == 0.0


def test_wait_for_element_click_type_select(env: gymnasium.Env, site: str) -> None:
    setup = [
        ("goto", f"http://{site}/page.html"),
        ("wait_for_element", "#late"),
        ("click", "#btn"),
        ("type", "#name", "Ada Lovelace"),
        ("select_option", "#fruit", "Banana"),
        "browser.maximize",
    ]
    evaluate = [
        ("element_exists", "#late"),
        ("text_matches", "#out", "clicked 1"),
        ("text_matches", "#name", "^Ada Lovelace$"),
        ("text_matches", "#fruit", "^b$"),
    ]
    assert run(env, setup, evaluate)[0] == 1.0
    assert run(env, ("load_html_content", "<p>x</p>"), ("element_exists", "#late"))[0] == 0.0


def test_agent_typing_is_seen_by_text_matches(env: gymnasium.Env, site: str) -> None:
    reward, _ = run(
        env,
        ("goto", f"http://{site}/page.html"),
        ("text_matches", "#name", "^héllo 日本$"),
        actions=[ClickAction(point=(100, 210)), TypeAction(text="héllo 日本")],
    )
    assert reward == 1.0


def test_cookies(env: gymnasium.Env, site: str) -> None:
    setup = [
        ("goto", f"http://{site}/page.html"),
        ("set_cookies", [{"name": "session", "value": "abc"}, {"name": "theme", "value": "dark"}]),
    ]
    assert run(env, setup, ("cookie_exists", ["session", "theme"]))[0] == 1.0
    assert run(env, setup, ("cookie_exists", "missing"))[0] == 0.0
    assert run(env, setup, ("cookie_match", "session", "abc"))[0] == 1.0
    assert run(env, setup, ("cookie_match", ["session", "abc", "theme", "dark"]))[0] == 1.0
    assert run(env, setup, ("cookie_match", {"theme": "light"}))[0] == 0.0
    # A new episode starts without the previous episode's cookies.
    assert run(env, ("goto", f"http://{site}/page.html"), ("cookie_exists", "session"))[0] == 0.0


def test_clear_cookies(env: gymnasium.Env, site: str) -> None:
    setup = [("goto", f"http://{site}/page.html"), ("set_cookies", [{"name": "a", "value": "1"}]), "clear_cookies"]
    assert run(env, setup, ("cookie_exists", "a"))[0] == 0.0


def test_invalid_regex_is_a_grading_error(env: gymnasium.Env) -> None:
    task = Task(
        prompt="x",
        gym="hud-browser",
        setup=("load_html_content", "<p id=a>x</p>"),
        evaluate=("text_matches", "#a", "(unclosed"),
    )
    env.reset(seed=0, options={"task": task})
    grade = env.unwrapped.evaluate()
    assert grade.is_error and "invalid regex" in (grade.content or "")


@pytest.mark.timeout(60)  # Python's re needs minutes for these
def test_a_catastrophic_regex_finishes_as_a_grade_or_a_grading_error(env: gymnasium.Env) -> None:
    text = "a" * 40 + "!"
    nested = Task(
        prompt="x",
        gym="hud-browser",
        setup=("load_html_content", f"<p id=a>{text}</p>"),
        evaluate=("text_matches", "#a", r"^(a+)+$"),
    )
    env.reset(seed=0, options={"task": nested})
    grade = env.unwrapped.evaluate()
    assert (grade.reward, grade.is_error) == (0.0, False)  # answered at once: no match
    exponential = Task(
        prompt="x",
        gym="hud-browser",
        setup=("load_html_content", f"<p id=a>{text}</p>"),
        evaluate=("text_matches", "#a", r"(a|aa)+$"),
    )
    env.reset(seed=0, options={"task": exponential})
    grade = env.unwrapped.evaluate()
    assert grade.is_error and "did not finish matching" in (grade.content or "")


def test_unknown_functions_are_rejected_before_anything_runs(env: gymnasium.Env) -> None:
    with pytest.raises(UnknownFunctionError, match="goto_page.*Known setup functions:.*goto"):
        env.reset(options={"task": Task(prompt="x", gym="hud-browser", setup=("goto_page", "x"))})
    with pytest.raises(UnknownFunctionError, match="url_matches.*url_match"):
        env.reset(options={"task": Task(prompt="x", gym="hud-browser", evaluate=("url_matches", "x"))})


def test_response_evaluators_are_shared(env: gymnasium.Env) -> None:
    task = Task(prompt="say hi", gym="hud-browser", evaluate=("response_includes", "hi"))
    env.reset(seed=0, options={"task": task})
    _, reward, terminated, _, _ = env.step(hud_gym.ResponseAction(text="hi there"))
    assert terminated and reward == 1.0
