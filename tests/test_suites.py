"""Suites (:mod:`hud_gym.core.suite`): hud-gym's own (MiniWoB++, qa-basic, desktop-basic) and one
defined outside it (``counter_suite``), which extends the counter gym through its descriptor alone
and then has its task set, functions, env option, reset option and hooks in every env of the gym."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import counter_suite
import pytest

import hud_gym
from hud_gym import ClickAction, PressAction, ResponseAction
from hud_gym.controllers.browser import BrowserController
from hud_gym.controllers.browser.capture import page_state_expression
from hud_gym.controllers.browser.custom import CUSTOM_ACTIONS
from hud_gym.core.options import UnknownEnvOptionError
from hud_gym.core.suite import all_suites, get_suite, register_suite, suites_of
from hud_gym.evaluation import REGISTRY
from hud_gym.jobs.env_defaults import taskset_env_defaults
from hud_gym.suites import BUILTIN_SUITES
from hud_gym.suites.miniwob import MINIWOB_TASK_AREA
from hud_gym.tasksets import available_tasksets, load_taskset

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parent.parent


def test_the_builtin_suites_extend_their_gyms() -> None:
    assert [(suite.name, suite.gym) for suite in BUILTIN_SUITES] == [
        ("qa-basic", "qa"),
        ("miniwob", "browser"),
        ("desktop-basic", "ubuntu"),
        ("osworld", "ubuntu"),
        ("webapps", "browser"),
        ("files", "ubuntu"),
        ("office", "ubuntu"),
    ]
    assert "OSWorld-Ubuntu" in available_tasksets()
    assert REGISTRY.get("evaluate", "ubuntu", "osworld_evaluate").name == "osworld_evaluate"
    assert all(suite in all_suites() for suite in BUILTIN_SUITES) and get_suite("miniwob") in suites_of("browser")
    assert {"qa-basic", "desktop-basic", "miniwob", "miniwob-official", "miniwob-flight"} <= set(available_tasksets())
    assert load_taskset("qa-basic").id == "qa-basic" and len(load_taskset("desktop-basic")) == 14
    assert REGISTRY.get("setup", "browser", "miniwob_start").name == "miniwob_start"  # the suite's functions
    assert taskset_env_defaults(load_taskset("miniwob")) == {
        "observation_crop": MINIWOB_TASK_AREA,
        "screen_size": (500, 320),
    }
    assert taskset_env_defaults(load_taskset("qa-basic")) == {}
    with pytest.raises(KeyError, match="unknown suite 'nope'.*miniwob"):
        get_suite("nope")


def test_the_generic_browser_gym_names_no_suite() -> None:
    """The controller and the env are generic: MiniWoB++ lives in hud_gym/suites/miniwob only."""
    generic = [*(ROOT / "controllers" / "browser").glob("*.py"), *(ROOT / "hud_gym" / "envs").glob("*.py")]
    named = [path.name for path in generic if "miniwob" in path.read_text().lower()]
    assert generic and named == []
    assert "click_element" not in CUSTOM_ACTIONS and "dom_elements" not in page_state_expression(True, 10)


def test_a_browser_controller_has_its_suites_actions_and_probes() -> None:
    controller = BrowserController((320, 240))  # not started: no browser
    assert set(controller.state.extension.custom_actions) == {"click_element", "type_field"}
    assert [probe.key for probe in controller.state.extension.page_probes] == ["dom_elements"]
    expression = page_state_expression(True, 10, controller.state.extension.probe_expressions)
    assert '"dom_elements": (' in expression and "core.getDOMInfo" in expression


def test_the_browser_env_takes_the_suite_options_and_refuses_a_misspelt_one() -> None:
    env = hud_gym.make("hud/Browser-v0", reward_processor="binary", terminal_frame="black")
    try:
        assert env.suites["miniwob"].options["reward_processor"] == "binary"  # type: ignore[attr-defined]
        assert "data_mode" in env.reset_options  # type: ignore[attr-defined]
    finally:
        env.close()
    with pytest.raises(UnknownEnvOptionError, match="no option 'reward_procesor'.*did you mean 'reward_processor'"):
        hud_gym.make("hud/Browser-v0", reward_procesor="binary")
    with pytest.raises(ValueError, match="reward_processor must be one of"):
        hud_gym.make("hud/Browser-v0", reward_processor="bogus")
    with pytest.raises(UnknownEnvOptionError, match="no option 'reward_processor'"):
        hud_gym.make("hud/QA-v0", reward_processor="binary")  # another gym's suite option


def test_a_suite_registers_through_its_descriptor_alone() -> None:
    suite = counter_suite.SUITE
    assert suite.gym == "tally" and get_suite("countdown") == dataclasses.replace(suite, gym="counter")  # normalised
    assert register_suite(suite) is get_suite("countdown")  # again: nothing happens
    with pytest.raises(ValueError, match="already registered"):
        register_suite(dataclasses.replace(suite, description="another"))
    with pytest.raises(ValueError, match="'countup': reward_scale, start already belong to suite 'countdown'"):
        register_suite(dataclasses.replace(suite, name="countup"))
    with pytest.raises(ValueError, match="unknown gym 'chess'"):
        register_suite(dataclasses.replace(suite, name="chess-suite", gym="chess"))
    env = hud_gym.make("countdown/below-2", reward_scale=2.0)
    try:
        assert env.observation_crop == (0, 0, 32, 32)  # the suite's region: its tasks only
        obs, info = env.reset(seed=0)
        assert obs["text"].endswith("Count: 3")
        _, reward, _, _, info = env.step(PressAction(keys=["down"]))
        assert info["countdown"] is True  # the frame hook
        _, reward, terminated, _, info = env.step(PressAction(keys=["down"]))
        _, reward, terminated, _, info = env.step(ResponseAction(text="done"))
        assert terminated and info["grade"].reward == 1.0 and reward == 2.0  # the step hook scaled it
        obs, _ = env.reset(options={"start": 0})  # the suite's reset option
        assert obs["text"].endswith("Count: 0")
        with pytest.raises(ValueError, match="unknown reset option.*'begin'.*start"):
            env.reset(options={"begin": 0})
    finally:
        env.close()
    with pytest.raises(ValueError, match="reward_scale must be a positive number"):
        hud_gym.make("countdown/below-2", reward_scale=0)
    plain = hud_gym.make("countdown/below-1", observation_size=(64, 32))
    try:
        assert plain.observation_crop is None  # a size given: no suite region
        plain.reset(seed=0)
        assert plain.step(ClickAction(point=(1, 1)))[4].get("countdown") is True
    finally:
        plain.close()
