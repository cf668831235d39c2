"""Browser tasks graded from the page's state (``page_contains``, ``text_matches``, ...) grade
only a page their setup made (controllers/browser/binding.py): a ``data:`` page or another page
holding the text the evaluator looks for is the task's failure, never a success nor an
``eval_error``; ``config["graded_pages"]`` widens or narrows that."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gymnasium
import pytest
from hacking_harness import Attack, Episode, check_family, play

from hud_gym import ClickAction, CustomAction, Point, Task, TypeAction

pytestmark = pytest.mark.timeout(300)

FORGED = "data:text/html,<div id=who>user: alice</div><p>user: alice</p>"


def login_task(site: str, **config: Any) -> Task:
    """Type 'alice' into the login page's field: graded from what the page shows."""
    return Task(
        id="login-alice",
        prompt="Type alice into the field.",
        gym="hud-browser",
        setup=[("goto", f"{site}/login.html")],  # type: ignore[list-item]
        evaluate=[("text_matches", "#who", "^user: alice$"), ("visible_text_contains", "user: alice")],  # type: ignore[list-item]
        config={"evaluate_combine": "min", **config},
    )


def html_task() -> Task:
    """The same, on a page the setup writes itself (``about:blank``'s origin: only its token binds it)."""
    html = (
        '<input id="username" style="position:absolute;left:20px;top:20px;width:200px;height:30px" '
        "oninput=\"document.getElementById('who').textContent = 'user: ' + this.value\"><div id=who></div>"
    )
    return Task(
        id="html-alice",
        prompt="Type alice into the field.",
        gym="hud-browser",
        setup=[("load_html_content", html)],  # type: ignore[list-item]
        evaluate=[("text_matches", "#who", "^user: alice$")],  # type: ignore[list-item]
    )


def _goto(url: str) -> Any:
    return lambda ep: ep.step(CustomAction(action="goto", args={"url": url}))


PAGE_ATTACKS = (
    Attack("goto a forged data: page", _goto(FORGED)),
    Attack("forged page in a new tab", lambda ep: ep.step(CustomAction(action="new_tab", args={"url": FORGED}))),
    Attack("goto about:blank", _goto("about:blank")),
    Attack("back", lambda ep: ep.step(CustomAction(action="back"))),
)


def solve(episode: Episode) -> None:
    episode.step([ClickAction(point=Point(x=100, y=35)), TypeAction(text="alice")])


@pytest.fixture(scope="module")
def env() -> Iterator[gymnasium.Env]:
    env = gymnasium.make("hud/Browser-v0", screen_size=(640, 400), step_timeout=60)
    yield env
    env.close()


def test_no_forged_page_scores(env: gymnasium.Env, site: str) -> None:
    check_family(env, [login_task(site), html_task()], PAGE_ATTACKS)


def test_the_setups_page_still_grades_and_graded_pages_says_which_pages_count(env: gymnasium.Env, site: str) -> None:
    for task in (login_task(site), html_task()):
        assert play(env, task, Attack("solve", solve)).reward == 1.0
    # "any": the task says any page counts (its agent is to navigate somewhere).
    assert play(env, login_task(site, graded_pages="any"), PAGE_ATTACKS[0]).reward == 1.0
    # "origin" (the default) counts a page of the setup's site the agent went on to, "instance" does not.
    two = Task(
        id="second-page",
        prompt="Open page2.html.",
        gym="hud-browser",
        setup=[("goto", f"{site}/login.html")],  # type: ignore[list-item]
        evaluate=[("page_contains", "Second page")],  # type: ignore[list-item]
    )
    assert play(env, two, Attack("same site", _goto(f"{site}/page2.html"))).reward == 1.0
    strict = two.model_copy(update={"config": {"graded_pages": "instance"}})
    verdict = play(env, strict, Attack("same site", _goto(f"{site}/page2.html")))
    assert verdict.reward == 0.0 and verdict.statuses == ("ok", "ok"), verdict
    assert play(env, strict, Attack("reload", lambda ep: ep.step(CustomAction(action="reload")))).reward == 0.0
