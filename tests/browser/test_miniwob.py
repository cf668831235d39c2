"""MiniWoB++ in hud/Browser-v0: the bundled task set, seeded resets, the page reward, and scripted
solvers that reach reward 1 through CLA actions alone.

The solvers read the page only to find where things are (an oracle standing in for a vision
model); every interaction is a CLA action through ``env.step``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import gymnasium
import numpy as np
import pytest

import hud_gym
from hud_gym import ClickAction, DragAction, Point, PressAction, TypeAction
from hud_gym.controllers.browser.miniwob import MINIWOB_TASK_AREA, miniwob_task_names

pytest.importorskip("miniwob")
pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def env() -> Iterator[gymnasium.Env]:
    env = gymnasium.make("hud/Browser-v0", task="miniwob/click-test-2", observation_crop=MINIWOB_TASK_AREA,
                         screen_size=(500, 320))
    yield env
    env.close()


def js(env: gymnasium.Env, expression: str, arg: Any = None) -> Any:
    """Evaluate JS in the env's page (the test's oracle, not an action)."""
    inner = env.unwrapped
    return inner._runner.run(inner.controller.page.evaluate(expression, arg))


def center(env: gymnasium.Env, finder: str, arg: Any = None) -> Point:
    """Center, in observation pixels, of the element a JS finder (``(arg) => Element``) returns."""
    rect = js(env, f"(arg) => {{ const el = ({finder})(arg); const r = el.getBoundingClientRect();"
                   " return [r.x + r.width / 2, r.y + r.height / 2]; }", arg)
    return Point(x=round(rect[0]), y=round(rect[1]))


BY_TEXT = "(t) => [...document.querySelectorAll('#area *')].find(e => e.children.length === 0 && e.textContent.trim() === t)"


def step_all(env: gymnasium.Env, actions: list[Any]) -> tuple[float, bool, dict]:
    reward, terminated, info = 0.0, False, {}
    for action in actions:
        _, reward, terminated, truncated, info = env.step(action)
        assert info["status"] == "ok", info
        if terminated or truncated:
            break
    return reward, terminated, info


def solve_click_test(env, utterance):
    return [ClickAction(point=center(env, "() => document.querySelector('#subbtn')"))]


def solve_click_test_2(env, utterance):
    return [ClickAction(point=center(env, "() => document.querySelector('#subbtn')"))]


def solve_click_button(env, utterance):
    label = re.search(r'"(.+)"', utterance).group(1)
    return [ClickAction(point=center(env, "(t) => [...document.querySelectorAll('#area button')].find(b => b.textContent === t)", label))]


def solve_click_link(env, utterance):
    label = re.search(r'"(.+)"', utterance).group(1)
    return [ClickAction(point=center(env, BY_TEXT, label))]


def solve_focus_text(env, utterance):
    return [ClickAction(point=center(env, "() => document.querySelector('#tt')"))]


def solve_enter_text(env, utterance):
    text = re.search(r'"(.+)"', utterance).group(1)
    return [
        ClickAction(point=center(env, "() => document.querySelector('#tt')")),
        TypeAction(text=text),
        ClickAction(point=center(env, "() => document.querySelector('#subbtn')")),
    ]


def solve_enter_password(env, utterance):
    password = re.search(r'"(.+)"', utterance).group(1)
    return [
        ClickAction(point=center(env, "() => document.querySelector('#password')")),
        TypeAction(text=password),
        PressAction(keys=["tab"]),
        TypeAction(text=password),
        ClickAction(point=center(env, "() => document.querySelector('#subbtn')")),
    ]


def solve_login_user(env, utterance):
    user, password = re.findall(r'"([^"]+)"', utterance)
    return [
        ClickAction(point=center(env, "() => document.querySelector('#username')")),
        TypeAction(text=user),
        ClickAction(point=center(env, "() => document.querySelector('#password')")),
        TypeAction(text=password, enter_after=False),
        ClickAction(point=center(env, "() => document.querySelector('#subbtn')")),
    ]


def solve_click_checkboxes(env, utterance):
    wanted = re.match(r"Select (.*) and click Submit\.", utterance).group(1)
    names = [] if wanted == "nothing" else [n.strip() for n in wanted.split(",")]
    actions: list[Any] = [
        ClickAction(point=center(env, "(t) => [...document.querySelectorAll('#boxes label')].find(l => l.textContent.trim() === t).querySelector('input')", name))
        for name in names
    ]
    actions.append(ClickAction(point=center(env, "() => document.querySelector('#subbtn')")))
    return actions


def solve_click_option(env, utterance):
    wanted = re.match(r"Select (.*) and click Submit\.", utterance).group(1)
    return [
        ClickAction(point=center(env, "(t) => [...document.querySelectorAll('#boxes label')].find(l => l.textContent.trim() === t).querySelector('input')", wanted)),
        ClickAction(point=center(env, "() => document.querySelector('#subbtn')")),
    ]


def solve_choose_list(env, utterance):
    wanted = re.match(r"Select (.*) from the list and click Submit\.", utterance).group(1)
    return [
        ClickAction(point=center(env, "() => document.querySelector('#options')")),
        TypeAction(text=wanted),
        PressAction(keys=["enter"]),
        ClickAction(point=center(env, "() => document.querySelector('#area button')")),
    ]


def solve_drag_box(env, utterance):
    small = center(env, "() => document.querySelector('#draggableSmall')")
    large = center(env, "() => document.querySelector('#draggableLarge')")
    middle = Point(x=(small.x + large.x) // 2, y=(small.y + large.y) // 2)
    return [
        DragAction(path=[small, middle, large]),
        ClickAction(point=center(env, "() => document.querySelector('#subbtn')")),
    ]


def solve_click_dialog(env, utterance):
    return [ClickAction(point=center(env, "() => document.querySelector('button.ui-button, .ui-dialog-titlebar-close')"))]


def solve_enter_text_2(env, utterance):
    match = re.search(r'Type "(.+)" in (all )?(lower|upper)', utterance, re.IGNORECASE) or re.search(r'"(.+)"', utterance)
    text = match.group(1)
    if "lower" in utterance.lower():
        text = text.lower()
    elif "upper" in utterance.lower():
        text = text.upper()
    return [
        ClickAction(point=center(env, "() => document.querySelector('#tt')")),
        TypeAction(text=text),
        ClickAction(point=center(env, "() => document.querySelector('#subbtn')")),
    ]


SOLVERS: dict[str, Callable[[gymnasium.Env, str], list[Any]]] = {
    "click-test": solve_click_test,
    "click-test-2": solve_click_test_2,
    "click-button": solve_click_button,
    "click-link": solve_click_link,
    "focus-text": solve_focus_text,
    "enter-text": solve_enter_text,
    "enter-text-2": solve_enter_text_2,
    "enter-password": solve_enter_password,
    "login-user": solve_login_user,
    "click-checkboxes": solve_click_checkboxes,
    "click-option": solve_click_option,
    "choose-list": solve_choose_list,
    "drag-box": solve_drag_box,
    "click-dialog": solve_click_dialog,
}


def test_taskset_has_all_130_tasks() -> None:
    taskset = hud_gym.load_taskset("miniwob")
    assert len(taskset) == 130 == len(miniwob_task_names())
    assert {"click-test-2", "book-flight", "use-slider", "terminal"} <= {t.id for t in taskset}
    assert all(t.gym == "hud-browser" and t.config["evaluate_every_step"] for t in taskset)
    assert len(hud_gym.load_taskset("miniwob-flight")) == 3


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_scripted_solver_reaches_reward_1(env: gymnasium.Env, name: str) -> None:
    for seed in (0, 1, 2):
        obs, info = env.reset(seed=seed, options={"task": f"miniwob/{name}"})
        assert obs["screenshot"].shape == (210, 160, 3)
        utterance = info["prompt"]
        assert utterance and utterance in obs["text"]
        reward, terminated, info = step_all(env, SOLVERS[name](env, utterance))
        assert terminated, f"{name} seed {seed}: episode did not end ({utterance!r})"
        assert reward == 1.0, f"{name} seed {seed}: reward {reward} for {utterance!r}: {info['grade']}"
        assert 0 < info["grade"].info["time_reward"] <= 1.0


def test_wrong_answer_gives_the_page_reward(env: gymnasium.Env) -> None:
    env.reset(seed=0, options={"task": "miniwob/click-test-2"})
    wrong = center(env, "() => document.querySelector('#subbtn2')")
    _, reward, terminated, _, info = env.step(ClickAction(point=wrong))
    assert terminated and reward == -1.0
    assert info["grade"].info["raw_reward"] == -1.0


def test_no_op_step_is_not_done(env: gymnasium.Env) -> None:
    env.reset(seed=0, options={"task": "miniwob/click-test-2"})
    _, reward, terminated, truncated, info = env.step(hud_gym.WaitAction(time=10))
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["grade"].content == "in progress"


def test_same_seed_same_instance_without_reload(env: gymnasium.Env) -> None:
    first, info = env.reset(seed=7, options={"task": "miniwob/click-button"})
    js(env, "() => { window.__hudNoReload = 42; }")
    again, info_again = env.reset(seed=7, options={"task": "miniwob/click-button"})
    other, info_other = env.reset(seed=8, options={"task": "miniwob/click-button"})
    assert js(env, "() => window.__hudNoReload") == 42, "reset reloaded the page"
    assert info["prompt"] == info_again["prompt"]
    np.testing.assert_array_equal(first["screenshot"], again["screenshot"])
    assert not np.array_equal(first["screenshot"], other["screenshot"])


def test_in_page_time_limit_is_disabled(env: gymnasium.Env) -> None:
    env.reset(seed=0, options={"task": "miniwob/click-test"})
    assert js(env, "() => core.EPISODE_MAX_TIME") >= 1e8
    assert js(env, "() => window.__hudOriginalMaxTime") == 10000


@pytest.mark.timeout(600)
def test_every_task_loads_and_resets(env: gymnasium.Env) -> None:
    failures = []
    for name in miniwob_task_names():
        try:
            obs, info = env.reset(seed=3, options={"task": f"miniwob/{name}"})
            assert obs["screenshot"].shape == (210, 160, 3)
            assert isinstance(info["prompt"], str)
            assert js(env, "() => WOB_TASK_READY === true && WOB_DONE_GLOBAL === false")
            obs, info = env.reset(seed=4, options={"task": f"miniwob/{name}"})
            assert js(env, "() => WOB_DONE_GLOBAL === false")
        except Exception as exc:  # noqa: BLE001  (collect every failing task, then report them all)
            failures.append(f"{name}: {type(exc).__name__}: {exc}")
    assert not failures, "\n".join(failures)


def test_make_by_task_reference() -> None:
    env = gymnasium.make("hud/Browser-v0", task="miniwob/click-test-2")
    try:
        obs, info = env.reset(seed=0)
        assert info["task_id"] == "click-test-2"
        assert "ONE" in info["prompt"]
        assert obs["screenshot"].shape == (720, 1280, 3)
    finally:
        env.close()
