"""MiniWoB++ in hud/Browser-v0: the bundled task set, seeded resets, the page reward, and scripted
solvers that reach reward 1 through CLA actions alone.

The solvers find where things are in the observation's element list (``info["elements"]`` of an
env made with ``elements=True``: ids, tags, texts and boxes in observation pixels, standing in for
a vision model); every interaction is a CLA action through ``env.step``. They run with the
controller in this process and in a controller server; the tests that read MiniWoB's own globals
through the in-process page are ``local_only``.
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
from hud_gym.suites.miniwob import MINIWOB_TASK_AREA
from hud_gym.suites.miniwob.tasks import miniwob_task_names

pytest.importorskip("miniwob")
pytestmark = pytest.mark.timeout(180)


SHARES = 3
"""The tests the load-every-task check is dealt into."""


def make_miniwob_env(controller: str, **kwargs: Any) -> gymnasium.Env:
    return gymnasium.make(
        "hud/Browser-v0",
        task="miniwob/click-test-2",
        observation_crop=MINIWOB_TASK_AREA,
        screen_size=(500, 320),
        elements=True,
        controller=controller,
        **kwargs,
    )


@pytest.fixture(scope="module")
def env(controller: str) -> Iterator[gymnasium.Env]:
    env = make_miniwob_env(controller)
    yield env
    env.close()


@pytest.fixture(scope="module")
def local_env() -> Iterator[gymnasium.Env]:
    """An env whose page the ``local_only`` tests read in this process."""
    env = make_miniwob_env("local")
    yield env
    env.close()


def js(env: gymnasium.Env, expression: str, arg: Any = None) -> Any:
    """Evaluate JS in a local env's page (the test's oracle, not an action)."""
    inner = env.unwrapped
    return inner._runner.run(inner.controller.state.page.evaluate(expression, arg))


Elements = list[dict[str, Any]]


def center(elements: Elements, *, id: str | None = None, tag: str | None = None, text: str | None = None) -> Point:
    """Center, in observation pixels, of the first element with that id, tag and text."""
    for element in elements:
        if (
            (id is None or element.get("id") == id)
            and (tag is None or element["tag"] == tag)
            and (text is None or (element.get("text") or "").strip() == text)
        ):
            x, y, w, h = element["bbox"]
            return Point(x=round(x + w / 2), y=round(y + h / 2))
    raise AssertionError(f"no element with id={id!r} tag={tag!r} text={text!r} in {elements}")


def step_all(env: gymnasium.Env, actions: list[Any]) -> tuple[float, bool, dict]:
    reward, terminated, info = 0.0, False, {}
    for action in actions:
        _, reward, terminated, truncated, info = env.step(action)
        assert info["status"] == "ok", info
        if terminated or truncated:
            break
    return reward, terminated, info


def solve_click_test(elements, utterance):
    return [ClickAction(point=center(elements, id="subbtn"))]


def solve_click_test_2(elements, utterance):
    return [ClickAction(point=center(elements, id="subbtn"))]


def solve_click_button(elements, utterance):
    label = re.search(r'"(.+)"', utterance).group(1)
    return [ClickAction(point=center(elements, tag="button", text=label))]


def solve_click_link(elements, utterance):
    label = re.search(r'"(.+)"', utterance).group(1)
    return [ClickAction(point=center(elements, tag="span", text=label))]


def solve_focus_text(elements, utterance):
    return [ClickAction(point=center(elements, id="tt"))]


def solve_enter_text(elements, utterance):
    text = re.search(r'"(.+)"', utterance).group(1)
    return [
        ClickAction(point=center(elements, id="tt")),
        TypeAction(text=text),
        ClickAction(point=center(elements, id="subbtn")),
    ]


def solve_enter_password(elements, utterance):
    password = re.search(r'"(.+)"', utterance).group(1)
    return [
        ClickAction(point=center(elements, id="password")),
        TypeAction(text=password),
        PressAction(keys=["tab"]),
        TypeAction(text=password),
        ClickAction(point=center(elements, id="subbtn")),
    ]


def solve_login_user(elements, utterance):
    user, password = re.findall(r'"([^"]+)"', utterance)
    return [
        ClickAction(point=center(elements, id="username")),
        TypeAction(text=user),
        ClickAction(point=center(elements, id="password")),
        TypeAction(text=password, enter_after=False),
        ClickAction(point=center(elements, id="subbtn")),
    ]


def solve_click_checkboxes(elements, utterance):
    wanted = re.match(r"Select (.*) and click Submit\.", utterance).group(1)
    names = [] if wanted == "nothing" else [n.strip() for n in wanted.split(",")]
    # A click on a label toggles the box it holds.
    actions: list[Any] = [ClickAction(point=center(elements, tag="label", text=name)) for name in names]
    actions.append(ClickAction(point=center(elements, id="subbtn")))
    return actions


def solve_click_option(elements, utterance):
    wanted = re.match(r"Select (.*) and click Submit\.", utterance).group(1)
    return [
        ClickAction(point=center(elements, tag="label", text=wanted)),
        ClickAction(point=center(elements, id="subbtn")),
    ]


def solve_choose_list(elements, utterance):
    wanted = re.match(r"Select (.*) from the list and click Submit\.", utterance).group(1)
    return [
        ClickAction(point=center(elements, id="options")),
        TypeAction(text=wanted),
        PressAction(keys=["enter"]),
        ClickAction(point=center(elements, tag="button", text="Submit")),
    ]


def solve_drag_box(elements, utterance):
    small = center(elements, id="draggableSmall")
    large = center(elements, id="draggableLarge")
    middle = Point(x=(small.x + large.x) // 2, y=(small.y + large.y) // 2)
    return [
        DragAction(path=[small, middle, large]),
        ClickAction(point=center(elements, id="subbtn")),
    ]


def solve_click_dialog(elements, utterance):
    return [ClickAction(point=center(elements, tag="button", text="Close"))]


def solve_enter_text_2(elements, utterance):
    match = re.search(r'Type "(.+)" in (all )?(lower|upper)', utterance, re.IGNORECASE) or re.search(
        r'"(.+)"', utterance
    )
    text = match.group(1)
    if "lower" in utterance.lower():
        text = text.lower()
    elif "upper" in utterance.lower():
        text = text.upper()
    return [
        ClickAction(point=center(elements, id="tt")),
        TypeAction(text=text),
        ClickAction(point=center(elements, id="subbtn")),
    ]


SOLVERS: dict[str, Callable[[Elements, str], list[Any]]] = {
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
        reward, terminated, info = step_all(env, SOLVERS[name](info["elements"], utterance))
        assert terminated, f"{name} seed {seed}: episode did not end ({utterance!r})"
        assert reward == 1.0, f"{name} seed {seed}: reward {reward} for {utterance!r}: {info['grade']}"
        assert 0 < info["grade"].info["time_reward"] <= 1.0


def test_wrong_answer_gives_the_page_reward(env: gymnasium.Env) -> None:
    _, info = env.reset(seed=0, options={"task": "miniwob/click-test-2"})
    wrong = center(info["elements"], id="subbtn2")
    _, reward, terminated, _, info = env.step(ClickAction(point=wrong))
    assert terminated and reward == -1.0
    assert info["grade"].info["raw_reward"] == -1.0


def test_no_op_step_is_not_done(env: gymnasium.Env) -> None:
    env.reset(seed=0, options={"task": "miniwob/click-test-2"})
    _, reward, terminated, truncated, info = env.step(hud_gym.WaitAction(time=10))
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["grade"].content == "in progress"


@pytest.mark.local_only("marks and reads the in-process page")
def test_same_seed_same_instance_without_reload(local_env: gymnasium.Env) -> None:
    env = local_env
    first, info = env.reset(seed=7, options={"task": "miniwob/click-button"})
    js(env, "() => { window.__hudNoReload = 42; }")
    again, info_again = env.reset(seed=7, options={"task": "miniwob/click-button"})
    other, info_other = env.reset(seed=8, options={"task": "miniwob/click-button"})
    assert js(env, "() => window.__hudNoReload") == 42, "reset reloaded the page"
    assert info["prompt"] == info_again["prompt"]
    np.testing.assert_array_equal(first["screenshot"], again["screenshot"])
    assert not np.array_equal(first["screenshot"], other["screenshot"])


@pytest.mark.local_only("reads MiniWoB's globals in the in-process page")
def test_in_page_time_limit_is_disabled(local_env: gymnasium.Env) -> None:
    env = local_env
    env.reset(seed=0, options={"task": "miniwob/click-test"})
    assert js(env, "() => core.EPISODE_MAX_TIME") >= 1e8
    assert js(env, "() => window.__hudOriginalMaxTime") == 10000


@pytest.mark.local_only("reads MiniWoB's globals in the in-process page")
@pytest.mark.timeout(600)
@pytest.mark.parametrize("share", range(SHARES))
def test_every_task_loads_and_resets(local_env: gymnasium.Env, share: int) -> None:
    # Every fourth task through the warm pages (each a miss: loaded in a recycled parked context),
    # the others loaded in the tab of an env without them (3x cheaper per switch). The tasks are
    # dealt into SHARES tests, so that parallel workers split the minutes this takes.
    cold = make_miniwob_env("local", warm_pages=0)
    failures = []
    try:
        for index, name in enumerate(miniwob_task_names()[share::SHARES]):
            env = local_env if index % 4 == 0 else cold
            try:
                obs, info = env.reset(seed=3, options={"task": f"miniwob/{name}"})
                assert obs["screenshot"].shape == (210, 160, 3)
                assert isinstance(info["prompt"], str)
                assert js(env, "() => WOB_TASK_READY === true && WOB_DONE_GLOBAL === false")
                obs, info = env.reset(seed=4, options={"task": f"miniwob/{name}"})
                assert js(env, "() => WOB_DONE_GLOBAL === false")
            except Exception as exc:
                failures.append(f"{name}: {type(exc).__name__}: {exc}")
    finally:
        cold.close()
    assert not failures, "\n".join(failures)


def test_make_by_task_reference(controller: str) -> None:
    env = gymnasium.make("hud/Browser-v0", task="miniwob/click-test-2", controller=controller)
    try:
        obs, info = env.reset(seed=0)
        assert info["task_id"] == "click-test-2"
        assert "ONE" in info["prompt"]
        # A MiniWoB task observes its task area by default, as the official env (issue 17).
        assert obs["screenshot"].shape == (210, 160, 3)
    finally:
        env.close()
