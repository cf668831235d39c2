"""MiniWoB++'s own env tests, adapted to MiniWoB tasks in ``hud/Browser-v0`` (real Chromium).

Source: the MiniWoB++ repository (Farama-Foundation/miniwob-plusplus), ``tests/test_environment.py``
and ``tests/test_api.py``. The assertions are MiniWoB's; the translation of its API is the same
in every test, so it is said once here:

- ``gymnasium.make("miniwob/<task>-v1", ...)`` -> ``gymnasium.make("hud/Browser-v0",
  task="miniwob/<task>", elements=True, ...)`` (``elements=True``: MiniWoB's DOM observation);
- ``obs["utterance"]`` -> ``info["prompt"]``; ``obs["dom_elements"]`` / ``obs["fields"]`` ->
  ``info["dom_elements"]`` / ``info["fields"]`` (our observation space stays pixels + text, so that
  every vectoriser and trainer takes it; the variable-length parts are in ``info``);
- ``create_action(CLICK_ELEMENT, ref=...)`` -> ``CustomAction("click_element", {"ref": ...})``;
  ``create_action(CLICK_COORDS, coords=...)`` -> ``ClickAction``; ``step(None)`` -> ``WaitAction(0)``;
- ``reward_processor=get_raw_reward`` (a function) -> ``reward_processor="raw"`` (a name: the
  env's arguments must travel to a controller server and through pickling).

Tests of MiniWoB that do not apply are listed, with the reason, in ``tests/peers/README.md``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import hud_gym
from hud_gym import ClickAction, CustomAction, Point, WaitAction

miniwob = pytest.importorskip("miniwob")
from miniwob.fields import field_lookup  # noqa: E402

pytestmark = pytest.mark.timeout(180)


def make(task: str, **kwargs: Any) -> gymnasium.Env:
    return gymnasium.make("hud/Browser-v0", task=f"miniwob/{task}", elements=True, screen_size=(500, 320), **kwargs)


@pytest.fixture(scope="module")
def env() -> Iterator[gymnasium.Env]:
    """One env for the tests that switch tasks with ``reset(options={"task": ...})``."""
    env = make("click-test")
    yield env
    env.close()


def reset(env: gymnasium.Env, task: str, **kwargs: Any) -> dict[str, Any]:
    return env.reset(options={"task": f"miniwob/{task}"}, **kwargs)[1]


def click_element(element: dict[str, Any]) -> CustomAction:
    return CustomAction(action="click_element", args={"ref": element["ref"]})


def click_button(info: dict[str, Any], button_text: str) -> CustomAction:
    """MiniWoBTester.create_click_button_action."""
    for element in info["dom_elements"]:
        if element["tag"] == "button" and element["text"] == button_text:
            return click_element(element)
    raise AssertionError(f"{button_text} button not found")


def fields(info: dict[str, Any]) -> list[tuple[str, str]]:
    return [(key, value) for key, value in info["fields"]]


# ----------------------------------------------------------------- TestMiniWoBEnvironment (click-test)


def test_do_nothing(env: gymnasium.Env) -> None:
    info = reset(env, "click-test")
    assert info["prompt"] == "Click the button."
    assert any(element["tag"] == "button" for element in info["dom_elements"])


def test_run(env: gymnasium.Env) -> None:
    info = reset(env, "click-test")
    assert info["prompt"] == "Click the button."
    obs, reward, terminated, truncated, info = env.step(WaitAction(time=0))
    assert info["prompt"] == "Click the button." if "prompt" in info else "Click the button." in obs["text"]
    assert reward == 0
    assert terminated is False
    assert truncated is False
    obs, reward, terminated, truncated, info = env.step(click_button(info, "Click Me!"))
    assert reward > 0
    assert terminated is True
    assert truncated is False
    info = reset(env, "click-test")
    assert info["prompt"] == "Click the button."
    obs, reward, terminated, truncated, info = env.step(click_button(info, "Click Me!"))
    assert reward > 0
    assert terminated is True
    assert truncated is False


def test_screenshot() -> None:
    """test_screenshot, with ``terminal_frame="black"`` (the official terminal frame; ours
    defaults to the page as it is) and the default observed region (the 160x210 task area)."""
    env = make("click-test", terminal_frame="black", screenshot_format="png")  # MiniWoB's frames are PNG
    try:
        obs, info = env.reset()
        assert obs["screenshot"].shape == (210, 160, 3)
        # Upper-left should be the instruction (yellow); lower-right the background (white).
        assert np.all(np.abs(obs["screenshot"][0, 0].astype(float) - [255.0, 255.0, 0.0]) < 5.0)
        assert np.all(np.abs(obs["screenshot"][-1, -1].astype(float) - [255.0, 255.0, 255.0]) < 5.0)
        obs, reward, terminated, truncated, info = env.step(click_button(info, "Click Me!"))
        assert terminated is True
        np.testing.assert_allclose(obs["screenshot"], 0.0)
    finally:
        env.close()


# ----------------------------------------------------------------- TestMiniWoBSeed (click-button)


def test_seed(env: gymnasium.Env) -> None:
    info_1 = reset(env, "click-button", seed=31416)
    info_2 = reset(env, "click-button", seed=227)
    info_3 = reset(env, "click-button", seed=227)
    info_4 = reset(env, "click-button", seed=31416)
    assert info_1["prompt"] == info_4["prompt"]
    assert info_2["prompt"] == info_3["prompt"]
    ref_to_text = [{x["ref"]: x["text"] for x in info["dom_elements"]} for info in (info_1, info_2, info_3, info_4)]
    assert ref_to_text[0] == ref_to_text[3]
    assert ref_to_text[1] == ref_to_text[2]
    assert ref_to_text[0] != ref_to_text[1]
    action = click_button(info_1, field_lookup(fields(info_1), "target"))
    _, reward, terminated, _, _ = env.step(action)
    assert reward > 0
    assert terminated is True


# ----------------------------------------------------------------- TestMiniWoBMode (click-test-transfer)


def test_mode() -> None:
    """test_mode: ``set_data_mode`` and the ``data_mode`` reset option, persistent across resets."""
    env = make("click-test-transfer")
    try:

        def episode(expected_utterance: str, button: str, options: dict[str, Any] | None = None) -> float:
            _, info = env.reset(options=options)
            assert info["prompt"] == expected_utterance
            return env.step(click_button(info, button))[1]

        assert episode("Click button ONE.", "ONE") > 0
        assert episode("Click button ONE.", "TWO") < 0
        env.unwrapped.suites["miniwob"].set_data_mode("test")  # the suite's part of the env
        assert episode("Click button TWO.", "ONE") < 0
        assert episode("Click button TWO.", "TWO") > 0  # mode is persistent
        assert episode("Click button ONE.", "ONE", {"data_mode": "train"}) > 0
        assert episode("Click button ONE.", "TWO") < 0  # persistent again
    finally:
        env.close()


# ----------------------------------------------------------------- TestMiniWoBFields (email-inbox-forward-nl)


def test_fields(env: gymnasium.Env) -> None:
    info = reset(env, "email-inbox-forward-nl")
    assert {"by", "to"} <= {x[0] for x in fields(info)}
    assert field_lookup(fields(info), "by") in info["prompt"]
    assert field_lookup(fields(info), "to") in info["prompt"]
    info = env.reset(options={"task": "miniwob/email-inbox-forward-nl", "data_mode": "test"})[1]
    assert not info["fields"]
    assert info["prompt"]
    info = env.reset(options={"task": "miniwob/email-inbox-forward-nl", "data_mode": "train"})[1]
    assert {"by", "to"} <= {x[0] for x in fields(info)}
    assert field_lookup(fields(info), "by") in info["prompt"]
    assert field_lookup(fields(info), "to") in info["prompt"]


# ----------------------------------------------------------------- RewardProcessorTester (ascending-numbers)


def click_number(info: dict[str, Any], number: int) -> ClickAction:
    """RewardProcessorTester._create_click_number: a coordinate click 5 px into the number."""
    for element in info["dom_elements"]:
        if element["tag"] == "text" and element["text"] == str(number):
            return ClickAction(point=Point(x=round(element["left"] + 5), y=round(element["top"] + 5)))
    raise AssertionError(f"Number {number} not found")


PROCESSOR_CASES = {
    # MiniWoB's TestGetOriginalReward: rewards decayed by the ~1 s the test waits (10 s limit).
    "original": [
        ([1, 2, 3, 4, 5], lambda r: 0.8 < r < 0.9),
        ([1, 2, 5], lambda r: 0.8 * 0.4 < r < 0.9 * 0.4),
        ([2], lambda r: r == -1),
    ],
    "raw": [([1, 2, 3, 4, 5], lambda r: r == 1), ([1, 2, 5], lambda r: r == 0.4), ([2], lambda r: r == -1)],
    "binary": [([1, 2, 3, 4, 5], lambda r: r == 1), ([1, 2, 5], lambda r: r == -1), ([2], lambda r: r == -1)],
    "thresholded": [
        ([1, 2, 3, 4, 5], lambda r: r == 1),
        ([1, 2, 3, 5], lambda r: r == 1),
        ([1, 2, 5], lambda r: r == -1),
        ([2], lambda r: r == -1),
    ],
}


@pytest.mark.parametrize("processor", sorted(PROCESSOR_CASES))
def test_reward_processor(processor: str) -> None:
    """TestGetOriginalReward / TestGetRawReward / TestGetBinaryReward / TestGetThresholdedReward
    (threshold 0.5, as MiniWoB's ``functools.partial(get_thresholded_reward, threshold=0.5)``)."""
    env = make("ascending-numbers", reward_processor=processor, reward_threshold=0.5)
    try:
        for numbers, check_reward in PROCESSOR_CASES[processor]:
            _, initial_info = env.reset()
            if processor == "original":
                time.sleep(1)
            for number in numbers[:-1]:
                _, reward, terminated, _, info = env.step(click_number(initial_info, number))
                assert terminated is False
                assert reward == 0
            _, reward, terminated, _, info = env.step(click_number(initial_info, numbers[-1]))
            assert terminated is True
            assert check_reward(reward), (processor, numbers, reward, info["grade"])
    finally:
        env.close()


# ----------------------------------------------------------------- test_api.py


def test_gym_api() -> None:
    """test_gym_api on one task (MiniWoB runs it on all 128 ids: each of our MiniWoB tasks is the
    same env class with another setup call, and tests/browser/test_miniwob.py resets all 130).
    Our observation space is pixels + text (see the module docstring), not MiniWoB's four keys."""
    env = make("click-test-2")
    try:
        check_env(env.unwrapped, skip_render_check=True)
        assert isinstance(env.observation_space, gymnasium.spaces.Dict)
        assert set(env.observation_space) == {"screenshot", "text"}
        assert env.observation_space["screenshot"].shape == (210, 160, 3)
    finally:
        env.close()


# ----------------------------------------------------------------- the registry (issue 17, item 13)


def test_official_taskset_is_the_official_registry() -> None:
    """``miniwob-official`` holds exactly the ids the ``miniwob`` package registers (128), and the
    full set marks the 5 pages it leaves out."""
    official = {
        name.removeprefix("miniwob/").removesuffix("-v1") for name in gymnasium.registry if name.startswith("miniwob/")
    }
    ours = hud_gym.load_taskset("miniwob-official")
    assert len(official) == 128 == len(ours)
    assert {task.id for task in ours} == official
    excluded = {task.id for task in hud_gym.load_taskset("miniwob") if task.metadata.get("excluded_upstream")}
    assert excluded == {"chase-circle", "moving-items", "simon-says", "button-delay", "hover-shape"}
    assert not excluded & official
    nondeterministic = {
        name.removeprefix("miniwob/").removesuffix("-v1")
        for name, spec in gymnasium.registry.items()
        if name.startswith("miniwob/") and spec.nondeterministic
    }
    assert nondeterministic == {task.id for task in ours if task.metadata["nondeterministic"]}


def test_unknown_reset_option_is_refused(env: gymnasium.Env) -> None:
    """Issue 17, item 12: an option the env does not know is an error naming it (it was ignored)."""
    with pytest.raises(ValueError, match="unknown reset option.*'datamode'.*data_mode"):
        env.reset(options={"datamode": "test"})
    with pytest.raises(ValueError, match="data_mode"):
        env.reset(options={"task": "miniwob/click-test", "data_mode": ""})


def test_type_field_types_the_field(env: gymnasium.Env) -> None:
    """Issue 17, item 10: ``type_field`` (MiniWoB's FOCUS_ELEMENT_AND_TYPE_FIELD with a ref) types
    the instance's field; a click_element on the submit button then earns the reward."""
    info = reset(env, "enter-text", seed=1)
    target = field_lookup(fields(info), "target")
    box = next(e for e in info["dom_elements"] if e["tag"] == "input_text")
    _, _, _, _, info = env.step(CustomAction(action="type_field", args={"ref": box["ref"], "field": 0}))
    assert info["status"] == "ok" and info["typed_field"] == target
    assert next(e for e in info["dom_elements"] if e["ref"] == box["ref"])["value"] == target
    _, reward, terminated, _, info = env.step(click_button(info, "Submit"))
    assert terminated and reward == 1.0
    _, _, _, _, info = env.step(CustomAction(action="click_element", args={"ref": 99999}))
    assert info["status"] == "episode_over"
    reset(env, "enter-text", seed=1)
    _, reward, _, _, info = env.step(CustomAction(action="click_element", args={"ref": 99999}))
    assert info["status"] == "action_error" and "no element with ref 99999" in info["action_error"]


def test_fields_and_element_actions_through_a_controller_server() -> None:
    """The fields a setup function reports, ``dom_elements`` and the element actions work with
    the controller in a controller server too (``controller="subprocess"``)."""
    env = make("click-button", controller="subprocess")
    try:
        _, info = env.reset(seed=227)
        target = field_lookup(fields(info), "target")
        assert target and target in info["prompt"]
        _, reward, terminated, _, _ = env.step(click_button(info, target))
        assert terminated and reward > 0
    finally:
        env.close()


def test_element_action_space(env: gymnasium.Env) -> None:
    """Issue 17, item 10: MiniWoB's element-level actions as a compact MultiDiscrete space
    (``[kind, ref, field]``), enough to solve a typing task without pixels."""
    from hud_gym.wrappers.integrations.element_actions import ElementActionWrapper

    wrapped = ElementActionWrapper(env, max_ref=63, max_fields=2)
    assert wrapped.action_space == gymnasium.spaces.MultiDiscrete([2, 64, 2])
    _, info = wrapped.reset(options={"task": "miniwob/enter-text"}, seed=4)
    box = next(e["ref"] for e in info["dom_elements"] if e["tag"] == "input_text")
    submit = next(e["ref"] for e in info["dom_elements"] if e["tag"] == "button")
    _, reward, terminated, _, info = wrapped.step(np.array([1, box, 0]))
    assert (reward, terminated, info["status"]) == (0.0, False, "ok")
    _, reward, terminated, _, info = wrapped.step(np.array([0, submit, 0]))
    assert terminated and reward == 1.0
