"""The opt-in element keys of ``hud/Browser-v0``: ``obs["axtree"]`` (the pruned accessibility
tree), ``obs["som"]`` with ``info["som"]`` (set-of-marks), ``click_element`` / ``type_field``
with ``{"node": id}``, and the textless clickables of ``info["elements"]``; with real Chromium
(the controller in this process: the tests read the page back with ``js``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import gymnasium
import numpy as np
import pytest
from browser_helpers import goto, js

from hud_gym.actions import CustomAction
from hud_gym.controllers.browser.accessibility import NODE_CHARS
from hud_gym.envs.browser_nodes import AXTREE_CHARS

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

RECT_JS = """(id) => { const r = document.getElementById(id).getBoundingClientRect();
  return [r.left, r.top, r.width, r.height]; }"""


@pytest.fixture(scope="module")
def env() -> Iterator[gymnasium.Env]:
    env = gymnasium.make(
        "hud/Browser-v0", screen_size=(800, 600), axtree=True, som=True, elements=True, max_nodes=50, max_steps=1000
    )
    env.reset(seed=0)
    yield env
    env.close()


def custom(env: gymnasium.Env, action: str, **args: Any) -> tuple[dict[str, Any], float, dict[str, Any]]:
    obs, reward, _, _, info = env.step(CustomAction(action=action, args=args))
    return obs, reward, info


def by_name(obs: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {node["name"]: node for node in json.loads(obs["axtree"])}


def test_axtree_has_the_roles_names_states_and_real_boxes(env: gymnasium.Env, site: str) -> None:
    env.reset(seed=0)
    obs, info = goto(env, f"{site}/a11y.html")
    assert env.observation_space.contains(obs)
    nodes = by_name(obs)
    assert nodes["Welcome"]["role"] == "heading"
    assert nodes["Save changes"]["role"] == "button"
    assert nodes["Full name"]["role"] == "textbox" and nodes["Full name"]["value"] == "Ada"
    assert nodes["I agree"]["role"] == "checkbox" and nodes["I agree"]["checked"] is True
    assert nodes["Read more"]["role"] == "link"
    assert "Hidden button" not in nodes
    for name, element_id in [("Welcome", "heading"), ("Save changes", "save"), ("Full name", "name")]:
        real = js(env, RECT_JS, element_id)
        assert nodes[name]["bbox"] == pytest.approx(real, abs=0.1), name
    assert "axtree_roles" not in info  # the accessibility engine's roles, not the scan's


def test_axtree_boxes_are_in_observation_pixels(site: str) -> None:
    env = gymnasium.make("hud/Browser-v0", screen_size=(800, 600), observation_size=(400, 300), axtree=True, som=True)
    try:
        env.reset(seed=0)
        obs, info = goto(env, f"{site}/a11y.html")
        real = js(env, RECT_JS, "save")
        assert by_name(obs)["Save changes"]["bbox"] == pytest.approx([v / 2 for v in real], abs=0.1)
        save = next(mark for mark in info["som"] if mark["text"] == "Save changes")
        assert save["bbox"] == pytest.approx([v / 2 for v in real], abs=0.1)
        assert obs["som"].shape == (300, 400, 3)
    finally:
        env.close()


def test_som_marks_the_clickables_and_click_element_hits_them(env: gymnasium.Env, site: str) -> None:
    env.reset(seed=0)
    obs, info = goto(env, f"{site}/a11y.html")
    marks = {mark["text"] or mark["tag"]: mark for mark in info["som"]}
    assert {"Save changes", "Full name", "I agree", "Read more", "div"} <= set(marks)
    swatch = marks["div"]  # the textless red box with a click listener
    assert swatch["bbox"] == pytest.approx(js(env, RECT_JS, "swatch"), abs=0.1)
    x, y, w, h = (int(v) for v in swatch["bbox"])
    assert not np.array_equal(obs["som"][y, x : x + w], obs["screenshot"][y, x : x + w])  # its box is drawn
    for name in ("div", "Save changes"):
        _, _, step_info = custom(env, "click_element", node=marks[name]["id"])
        assert step_info["status"] == "ok", step_info
    assert js(env, "() => window.clicks") == ["swatch", "save"]


def test_a_node_that_is_not_on_the_page_is_an_action_error(env: gymnasium.Env, site: str) -> None:
    env.reset(seed=0)
    goto(env, f"{site}/a11y.html")
    for node in (10**9, -1, "7", True):
        _, reward, info = custom(env, "click_element", node=node)
        assert info["status"] == "action_error", info


def _bounded(obs: dict[str, Any], info: dict[str, Any], limit: int) -> list[dict[str, Any]]:
    assert info["status"] == "ok", info
    nodes = json.loads(obs["axtree"])
    assert len(obs["axtree"]) <= AXTREE_CHARS and len(nodes) <= limit
    assert len(info["som"]) <= limit
    for entry in [*nodes, *info["som"]]:
        for key, value in entry.items():
            assert not isinstance(value, str) or len(value) <= NODE_CHARS, key
    return nodes


def test_a_page_of_100k_elements_and_megabyte_names_stays_bounded(site: str) -> None:
    # The page alone takes seconds to load and to scan on a loaded machine: generous limits.
    env = gymnasium.make(
        "hud/Browser-v0",
        screen_size=(800, 600),
        axtree=True,
        som=True,
        max_nodes=50,
        step_timeout=150,
        navigation_timeout=60,
    )
    try:
        env.reset(seed=0)
        obs, _, info = custom(env, "goto", url=f"{site}/a11y_huge.html")
        nodes = _bounded(obs, info, 50)
        assert nodes and info["axtree_roles"] == "scan"  # the engine is not asked for a tree of 100k nodes
        assert any(node["role"] == "button" for node in nodes)
    finally:
        env.close()


def test_a_page_that_undoes_its_own_clipping_stays_bounded(env: gymnasium.Env, site: str) -> None:
    env.reset(seed=0)
    obs, _, info = custom(env, "goto", url=f"{site}/a11y_liar.html")
    nodes = _bounded(obs, info, 50)
    assert "axtree_roles" not in info
    named = [node for node in nodes if node["role"] == "button" and node["name"].startswith("yyy")]
    assert len(named) == 5 and all(len(node["name"]) == NODE_CHARS for node in named)
    # info["elements"] too: the page's String.prototype.slice no longer cuts anything.
    assert len(info["elements"]) <= 500
    assert all(len(e["text"]) <= 8192 + 100 for e in info["elements"])
    assert any(e["text"].startswith("yyy") for e in info["elements"])


def test_som_id_solves_a_miniwob_task() -> None:
    env = gymnasium.make("hud/Browser-v0", task="miniwob/click-test", som=True)
    try:
        _, info = env.reset(seed=0)
        button = next(mark for mark in info["som"] if mark["tag"] == "button")
        _, reward, info = custom(env, "click_element", node=button["id"])
        assert info["status"] == "ok" and reward == 1.0, info
    finally:
        env.close()


def test_type_field_by_node_solves_enter_text() -> None:
    env = gymnasium.make("hud/Browser-v0", task="miniwob/enter-text", som=True)
    try:
        _, info = env.reset(seed=0)
        field = next(mark for mark in info["som"] if mark["tag"] == "input")
        submit = next(mark for mark in info["som"] if mark["tag"] == "button")
        _, reward, info = custom(env, "type_field", field=0, node=field["id"])
        assert info["status"] == "ok" and info["typed_field"], info
        _, reward, info = custom(env, "click_element", node=submit["id"])
        assert info["status"] == "ok" and reward == 1.0, info
    finally:
        env.close()


def test_click_color_lists_its_textless_colour_boxes() -> None:
    env = gymnasium.make("hud/Browser-v0", task="miniwob/click-color", elements=True)
    try:
        for seed in range(3):
            _, info = env.reset(seed=seed)
            elements = info["elements"]
            assert len(elements) >= 7, elements  # the official DOM observation has 7
            boxes = [e for e in elements if e["tag"] == "div" and not e["text"] and e["bbox"][2] == e["bbox"][3] > 10]
            assert len(boxes) >= 4, elements  # the four colour boxes to click
    finally:
        env.close()
