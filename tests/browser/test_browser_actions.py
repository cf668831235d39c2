"""Every CLA action's exact semantics in a real Chromium, read back from the page (through the
env's public API: ``page_state``), with the controller in this process and in a controller server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gymnasium
import pytest
from browser_helpers import STATE_TASK, goto, page_state

from hud_gym.actions import (
    ClickAction,
    CustomAction,
    DragAction,
    KeyDownAction,
    KeyUpAction,
    MoveAction,
    PositionFetch,
    PressAction,
    ScreenshotFetch,
    ScrollAction,
    TypeAction,
    WaitAction,
)

pytestmark = pytest.mark.timeout(60)

CLICKER = (80, 40)
TEXT = (170, 92)
AREA = (170, 150)


@pytest.fixture(scope="module")
def env(controller: str, capture: str) -> Iterator[gymnasium.Env]:
    if controller == "subprocess" and capture == "headed":
        pytest.skip("headed frames through a controller server: test_browser_observation.py")
    env = gymnasium.make(
        "hud/Browser-v0", screen_size=(1024, 768), max_steps=10_000, controller=controller, capture=capture
    )
    env.reset(seed=0, options={"task": STATE_TASK})
    yield env
    env.close()


@pytest.fixture
def page(env: gymnasium.Env, site: str) -> gymnasium.Env:
    """The env with a fresh episode on the input fixture."""
    env.reset(seed=0, options={"task": STATE_TASK})
    goto(env, f"{site}/input.html")
    return env


def step(env: gymnasium.Env, action: Any) -> dict[str, Any]:
    _, _, _, _, info = env.step(action)
    assert info["status"] == "ok", info
    return info


def events(env: gymnasium.Env, *types: str) -> list[dict[str, Any]]:
    return [e for e in page_state(env)["events"] if not types or e["type"] in types]


def field(env: gymnasium.Env, name: str) -> dict[str, Any]:
    """``{"value", "selection"}`` of the page's input or textarea ``name``."""
    return page_state(env)["fields"][name]


def test_left_click_fires_one_click_at_the_point(page: gymnasium.Env) -> None:
    step(page, ClickAction(point=CLICKER))
    clicks = events(page, "click")
    assert [(e["target"], e["x"], e["y"], e["detail"]) for e in clicks] == [("clicker", 80, 40, 1)]
    assert [e["type"] for e in events(page, "mousedown", "mouseup", "click")] == ["mousedown", "mouseup", "click"]


@pytest.mark.parametrize(("button", "dom_button"), [("right", 2), ("middle", 1), ("back", 3), ("forward", 4)])
def test_other_buttons(page: gymnasium.Env, button: str, dom_button: int) -> None:
    step(page, ClickAction(point=CLICKER, button=button))
    downs = events(page, "mousedown")
    assert [(e["button"], e["target"]) for e in downs] == [(dom_button, "clicker")]
    assert [e["button"] for e in events(page, "mouseup")] == [dom_button]
    assert events(page, "click") == []  # only the primary button clicks
    if button == "right":
        assert len(events(page, "contextmenu")) == 1


def test_pattern_100_is_a_real_double_click(page: gymnasium.Env) -> None:
    step(page, ClickAction(point=CLICKER, pattern=[100]))
    assert [e["detail"] for e in events(page, "click")] == [1, 2]
    assert len(events(page, "dblclick")) == 1


def test_pattern_of_two_delays_is_a_triple_click_selecting_the_text(page: gymnasium.Env) -> None:
    step(page, ClickAction(point=AREA))
    step(page, TypeAction(text="one two three"))
    step(page, ClickAction(point=AREA, pattern=[50, 50]))
    assert [e["detail"] for e in events(page, "click")][-3:] == [1, 2, 3]
    area = field(page, "area")
    start, end = area["selection"]
    assert area["value"][start:end] == "one two three"


def test_hold_keys_are_down_during_the_click_only(page: gymnasium.Env) -> None:
    step(page, ClickAction(point=CLICKER, hold_keys=["ctrl", "shift"]))
    click = events(page, "click")[-1]
    assert (click["ctrl"], click["shift"], click["alt"]) == (True, True, False)
    keys = [(e["type"], e["key"]) for e in events(page, "keydown", "keyup")]
    assert keys == [("keydown", "Control"), ("keydown", "Shift"), ("keyup", "Shift"), ("keyup", "Control")]
    step(page, ClickAction(point=CLICKER))
    assert events(page, "click")[-1]["ctrl"] is False


def test_press_hotkey_down_in_order_up_in_reverse(page: gymnasium.Env) -> None:
    step(page, ClickAction(point=TEXT))
    step(page, TypeAction(text="select me"))
    step(page, PressAction(keys=["ctrl", "a"]))
    keys = [(e["type"], e["key"]) for e in events(page, "keydown", "keyup") if e["key"] in ("Control", "a")]
    assert keys == [("keydown", "Control"), ("keydown", "a"), ("keyup", "a"), ("keyup", "Control")]
    assert field(page, "text")["selection"] == [0, 9]
    step(page, PressAction(keys=["backspace"]))
    assert field(page, "text")["value"] == ""


def test_shift_tab_moves_focus_backwards(page: gymnasium.Env) -> None:
    step(page, ClickAction(point=AREA))
    step(page, PressAction(keys=["shift", "tab"]))
    assert page_state(page)["active"] == "text"


def test_keydown_then_keyup_holds_a_modifier_across_steps(page: gymnasium.Env) -> None:
    step(page, KeyDownAction(keys=["shift"]))
    step(page, ClickAction(point=CLICKER))
    step(page, KeyUpAction(keys=["shift"]))
    step(page, ClickAction(point=CLICKER))
    shifts = [e["shift"] for e in events(page, "click")]
    assert shifts == [True, False]
    assert [(e["type"], e["key"]) for e in events(page, "keydown", "keyup")] == [
        ("keydown", "Shift"),
        ("keyup", "Shift"),
    ]


def test_type_non_ascii_lands_in_the_input_and_fires_input_events(page: gymnasium.Env) -> None:
    step(page, ClickAction(point=TEXT))
    text = "héllo ü 日本"
    step(page, TypeAction(text=text))
    assert field(page, "text")["value"] == text
    inputs = events(page, "input")
    assert len(inputs) == len(text)
    assert all(e["target"] == "text" for e in inputs)


def test_type_enter_after_presses_enter(page: gymnasium.Env) -> None:
    step(page, ClickAction(point=AREA))
    step(page, TypeAction(text="line", enter_after=True))
    step(page, TypeAction(text="next"))
    assert field(page, "area")["value"] == "line\nnext"
    assert events(page, "keydown")[-5]["key"] == "Enter"


def test_scroll_by_pixels_on_both_axes(page: gymnasium.Env) -> None:
    step(page, ScrollAction(point=(500, 400), scroll=(0, 300)))
    assert page_state(page)["scroll"] == [0, 300]
    step(page, ScrollAction(point=(500, 400), scroll=(200, -100)))
    assert page_state(page)["scroll"] == [200, 200]


def test_move_to_a_point_and_by_an_offset(page: gymnasium.Env) -> None:
    step(page, MoveAction(point=(300, 250)))
    assert page_state(page)["moves"][-1] == [300, 250]
    step(page, MoveAction(offset=(-100, 50)))
    assert page_state(page)["moves"][-1] == [200, 300]
    assert step(page, PositionFetch())["position"] == (200, 300)


def test_position_follows_clicks_and_clamps_to_the_screen(page: gymnasium.Env) -> None:
    step(page, ClickAction(point=CLICKER))
    assert step(page, PositionFetch())["position"] == CLICKER
    step(page, MoveAction(point=(5000, -20)))
    assert step(page, PositionFetch())["position"] == (1023, 0)


def test_wait_waits_the_given_milliseconds(page: gymnasium.Env) -> None:
    info = step(page, WaitAction(time=300))
    assert info["timings"]["action"] >= 0.3


def test_screenshot_action_is_a_noop_with_a_fresh_frame(page: gymnasium.Env) -> None:
    obs, _, _, _, info = page.step(ScreenshotFetch())
    assert info["status"] == "ok"
    assert obs["screenshot"].shape == (768, 1024, 3)
    assert events(page) == []


def test_drag_moves_a_mouse_driven_draggable(env: gymnasium.Env, site: str) -> None:
    env.reset(seed=0, options={"task": STATE_TASK})
    goto(env, f"{site}/drag.html")
    step(env, DragAction(path=[(90, 90), (200, 150), (400, 300)], hold_keys=["shift"]))
    state = page_state(env)
    assert state["rects"]["box"][:2] == [360, 260]  # grabbed 40 px inside the box, released at (400, 300)
    log = state["dragLog"]
    assert log[0] == "start" and log[-1] == "stop" and log.count("move") >= 3
    assert all(state["keysDuringDrag"])


def test_drag_sets_a_range_slider(env: gymnasium.Env, site: str) -> None:
    env.reset(seed=0, options={"task": STATE_TASK})
    goto(env, f"{site}/drag.html")
    rect = page_state(env)["rects"]["range"]
    y = round(rect[1] + rect[3] / 2)
    step(env, DragAction(path=[(round(rect[0]) + 2, y), (round(rect[0] + rect[2] * 0.75), y)], pattern=[20]))
    value = int(field(env, "range")["value"])
    assert 70 <= value <= 80


def test_custom_navigation_back_forward_reload(env: gymnasium.Env, site: str) -> None:
    env.reset(seed=0, options={"task": STATE_TASK})
    goto(env, f"{site}/input.html")
    _, info = goto(env, f"{site}/page2.html")
    assert info["title"] == "Page two"
    info = step(env, CustomAction(action="back"))
    assert info["url"] == f"{site}/input.html" and info["title"] == "Input fixture"
    info = step(env, CustomAction(action="forward"))
    assert info["url"] == f"{site}/page2.html"
    step(env, ClickAction(point=(60, 40)))  # on the heading
    assert page_state(env)["clicks"] == ["two"]
    step(env, CustomAction(action="reload"))
    assert page_state(env)["clicks"] == []  # a new document


def test_custom_tabs_new_switch_close(env: gymnasium.Env, site: str) -> None:
    env.reset(seed=0)
    goto(env, f"{site}/input.html")
    info = step(env, CustomAction(action="new_tab", args={"url": f"{site}/page2.html"}))
    assert [(t["index"], t["title"], t["active"]) for t in info["tabs"]] == [
        (0, "Input fixture", False),
        (1, "Page two", True),
    ]
    info = step(env, CustomAction(action="switch_tab", args={"index": 0}))
    assert info["url"] == f"{site}/input.html"
    assert [t["active"] for t in info["tabs"]] == [True, False]
    info = step(env, CustomAction(action="close_tab", args={"index": 0}))
    assert [(t["url"], t["active"]) for t in info["tabs"]] == [(f"{site}/page2.html", True)]
    info = step(env, CustomAction(action="new_tab"))
    assert [t["url"] for t in info["tabs"]] == [f"{site}/page2.html", "about:blank"]
    info = step(env, CustomAction(action="close_tab"))
    assert [(t["url"], t["active"]) for t in info["tabs"]] == [(f"{site}/page2.html", True)]
    info = step(env, CustomAction(action="close_tab"))  # the last tab: a blank one replaces it
    assert [(t["url"], t["active"]) for t in info["tabs"]] == [("about:blank", True)]


def test_bad_custom_actions_are_action_errors(env: gymnasium.Env) -> None:
    env.reset(seed=0)
    _, _, _, _, info = env.step(CustomAction(action="teleport"))
    assert info["status"] == "action_error"
    assert "goto" in info["action_error"] and "close_tab" in info["action_error"]
    _, _, _, _, info = env.step(CustomAction(action="switch_tab", args={"index": 7}))
    assert info["status"] == "action_error" and "no tab 7" in info["action_error"]
    _, _, _, _, info = env.step(CustomAction(action="goto", args={}))
    assert info["status"] == "action_error" and "url" in info["action_error"]
    _, _, _, _, info = env.step(PressAction(keys=["f20"]))
    assert info["status"] == "action_error" and "f20" in info["action_error"]
    _, _, _, _, info = env.step(ClickAction(point=(5, 5), hold_keys=["f20"]))
    assert info["status"] == "action_error" and "f20" in info["action_error"]


def test_back_mouse_button_goes_back_in_history(env: gymnasium.Env, site: str) -> None:
    env.reset(seed=0)
    goto(env, f"{site}/page2.html")
    goto(env, f"{site}/tabs.html")
    info = step(env, ClickAction(point=(600, 600), button="back"))
    assert info["url"] == f"{site}/page2.html" and info["title"] == "Page two"
    info = step(env, ClickAction(point=(600, 600), button="forward"))
    assert info["url"] == f"{site}/tabs.html"
