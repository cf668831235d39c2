"""``hud/QA-v0`` end to end, and the env core it shares with every gym (hud_gym.core.env)."""

from __future__ import annotations

import asyncio
import math
import warnings

import numpy as np
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env

import hud_gym
from hud_gym import (
    ClickAction,
    CustomAction,
    DragAction,
    FunctionContext,
    Grade,
    MoveAction,
    PositionFetch,
    PressAction,
    ResponseAction,
    ScreenshotFetch,
    SetupError,
    Task,
    TypeAction,
    UnknownFunctionError,
    WaitAction,
    encode,
    evaluate_function,
    setup_function,
)
from hud_gym.envs.qa import QAEnv
from hud_gym.evaluation import FunctionArgumentError

FRANCE = Task(id="france", prompt="What is the capital of France?", target="Paris", gym="qa")

LOCAL_ONLY_FUNCTIONS = pytest.mark.local_only(
    "uses setup/evaluate functions registered in the test process, which a controller server does not know"
)
LOCAL_ONLY_INTERNALS = pytest.mark.local_only("reads the in-process QAController's state")


@pytest.fixture(scope="module")
def controller_gym() -> str:
    """The subprocess server the parametrised tests share."""
    return "qa"


# ----------------------------------------------------------------------------- test functions in the registry
# Unique names so they cannot clash with the library's own functions.

SETUP_CALLS: list[str] = []


@setup_function("qa", name="test_record_setup")
def _record_setup(ctx: FunctionContext, label: str) -> None:
    SETUP_CALLS.append(label)


@setup_function("qa", name="test_failing_setup")
def _failing_setup(ctx: FunctionContext) -> None:
    raise RuntimeError("setup broke")


@evaluate_function("qa", name="test_answer_length")
def _answer_length(ctx: FunctionContext) -> float:
    """Reward = length of the answer typed so far / 10: changes on every step."""
    return len(ctx.controller.answer) / 10


@evaluate_function("qa", name="test_answer_is_bool")
def _answer_is_bool(ctx: FunctionContext, expected: str) -> bool:
    return ctx.controller.answer == expected


@evaluate_function("qa", name="test_answer_is")
def _answer_is(ctx: FunctionContext, expected: str) -> Grade:
    ok = ctx.controller.answer == expected
    return Grade(reward=float(ok), done=ok, content="typed" if ok else "not yet")


# ----------------------------------------------------------------------------- registration and make


def test_check_env_passes_with_no_skips(make_controller_env):
    env = make_controller_env(taskset="qa-basic")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # recommendations about Box ranges are fine
        check_env(env.unwrapped, skip_render_check=False, skip_close_check=False)
        check_env(make_controller_env(task=FRANCE), skip_render_check=False, skip_close_check=False)


def test_gymnasium_make_returns_the_env_itself(make_controller_env):
    env = make_controller_env(task=FRANCE)
    assert isinstance(env, QAEnv)  # no TimeLimit/OrderEnforcing/PassiveEnvChecker wrappers
    assert env.unwrapped is env
    assert env.spec.id == "hud/QA-v0"
    assert env.max_episode_steps == 20
    env.reset(seed=0)
    env.step(ResponseAction(text="Paris"))
    assert env.final_response == "Paris"
    assert env.evaluate().reward == 1.0


def test_make_with_a_task(make_controller_env):
    env = make_controller_env(task=FRANCE)
    obs, info = env.reset(seed=0)
    assert info["task_id"] == "france" and info["status"] == "ok" and info["step"] == 0
    assert info["prompt"] == FRANCE.prompt
    assert obs["text"].startswith(FRANCE.prompt)
    assert env.task == FRANCE
    # a task reference and a task dict work too
    assert make_controller_env(task="qa-basic/capital-japan").reset()[1]["task_id"] == "capital-japan"
    assert make_controller_env(task={"prompt": "2+2?", "target": "4"}).reset()[0]["text"].startswith("2+2?")


def test_taskset_draws_are_seeded(make_controller_env):
    env = make_controller_env(taskset="qa-basic")
    first = [env.reset(seed=seed)[1]["task_id"] for seed in range(25)]
    again = [env.reset(seed=seed)[1]["task_id"] for seed in range(25)]
    assert first == again
    assert len(set(first)) > 5  # different seeds draw different tasks
    other = make_controller_env(taskset="qa-basic")
    assert [other.reset(seed=seed)[1]["task_id"] for seed in range(25)] == first
    assert env.reset(options={"task_index": 0})[1]["task_id"] == "capital-france"


def test_taskset_as_a_list(make_controller_env):
    env = make_controller_env(taskset=[FRANCE, Task(id="two", prompt="1+1?", target="2")])
    ids = {env.reset(seed=seed)[1]["task_id"] for seed in range(20)}
    assert ids == {"france", "two"}


def test_no_task_then_task_in_reset_options(make_controller_env):
    env = make_controller_env()
    obs, info = env.reset(seed=0)
    assert info["task_id"] is None and env.task is None
    assert obs["text"] == "Answer so far: "
    obs, info = env.reset(options={"task": FRANCE})
    assert info["task_id"] == "france" and obs["text"].startswith(FRANCE.prompt)
    _, reward, terminated, _, _ = env.step(ResponseAction(text="Paris"))
    assert reward == 1.0 and terminated
    obs, info = env.reset(options={"task": "qa-basic/binary-ten"})
    assert info["task_id"] == "binary-ten"


def test_no_task_at_all_grades_zero(make_controller_env):
    env = make_controller_env()
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(ResponseAction(text="anything"))
    assert terminated and reward == 0.0 and info["grade"].content == "no task"


def test_hud_gym_make_picks_the_qa_gym():
    for source in (
        FRANCE,
        Task(prompt="no gym given", target="x"),
        "qa-basic/capital-france",
        {"prompt": "dict", "gym": "qa"},
    ):
        env = hud_gym.make(source)
        try:
            assert isinstance(env, QAEnv) and env.spec.id == "hud/QA-v0"
            assert env.reset(seed=0)[1]["prompt"] is not None
        finally:
            env.close()
    env = hud_gym.make("qa")
    try:
        assert isinstance(env, QAEnv) and env.reset(seed=0)[1]["task_id"] is None
    finally:
        env.close()


def test_hud_gym_make_unknown_gym_and_gym_routing():
    with pytest.raises(ValueError, match="unknown gym 'nope'"):
        hud_gym.make(Task(prompt="x", gym="nope"))
    from hud_gym.envs.browser import BrowserEnv
    from hud_gym.envs.ubuntu import UbuntuEnv

    env = hud_gym.make(Task(prompt="x", gym="hud-ubuntu"), max_episode_steps=3)
    try:
        # make() is lazy: no Xvfb runs until the first reset.
        assert isinstance(env, UbuntuEnv) and env.spec.id == "hud/Ubuntu-v0" and env.controller is None
        assert env.max_episode_steps == 3
    finally:
        env.close()

    env = hud_gym.make(Task(prompt="x", gym="hud-browser"), max_episode_steps=7)
    try:
        # make() is lazy: no browser runs until the first reset.
        assert isinstance(env, BrowserEnv) and env.controller is None
        assert env.max_episode_steps == 7
    finally:
        env.close()


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="render_mode"):
        QAEnv(render_mode="human")


# ----------------------------------------------------------------------------- step forms


def test_step_accepts_a_cla_model(make_controller_env):
    env = make_controller_env(task=FRANCE)
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(ResponseAction(text="Paris"))
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["status"] == "ok" and info["grade"].reward == 1.0
    assert env.final_response == "Paris"


def test_step_accepts_a_cla_dict(make_controller_env):
    env = make_controller_env(task=FRANCE)
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step({"type": "response", "text": "London"})
    assert terminated and reward == 0.0 and info["grade"] is not None


def test_step_accepts_a_list_typed_answer_submitted_with_enter(make_controller_env):
    env = make_controller_env(task="qa-basic/capital-france")
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(
        [TypeAction(text="Par"), TypeAction(text="is"), PressAction(keys=["enter"])]
    )
    assert env.final_response == "Paris"
    assert reward == 1.0 and terminated and not truncated
    assert info["status"] == "ok"


def test_step_accepts_a_list_of_dicts_and_enter_after(make_controller_env):
    env = make_controller_env(task=FRANCE)
    env.reset(seed=0)
    _, reward, terminated, _, _ = env.step([{"type": "type", "text": "Paris", "enter_after": True}])
    assert terminated and reward == 1.0 and env.final_response == "Paris"


def test_actions_after_a_response_in_a_list_are_ignored(make_controller_env):
    env = make_controller_env(task=FRANCE)
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step([ResponseAction(text="Paris"), TypeAction(text="x"), WaitAction(time=1)])
    assert terminated and reward == 1.0 and info["ignored_actions"] == 2


def test_step_accepts_an_encoded_action(make_controller_env):
    env = make_controller_env(task=FRANCE)
    env.reset(seed=0)
    encoded = encode(ResponseAction(text="Paris"), env.unwrapped.action_space_config)
    assert env.action_space.contains(encoded)
    _, reward, terminated, _, _ = env.step(encoded)
    assert terminated and reward == 1.0 and env.final_response == "Paris"


def test_step_accepts_action_space_samples(make_controller_env):
    env = make_controller_env(task=FRANCE, screen_size=(320, 200))
    env.action_space.seed(3)
    env.reset(seed=0)
    for _ in range(30):
        sample = env.action_space.sample()
        if sample["action_type"] == list(hud_gym.ActionType).index(hud_gym.ActionType.WAIT):
            sample["time"][:] = 0  # keep the test fast
        obs, _, terminated, truncated, info = env.step(sample)
        assert info["status"] in ("ok", "action_error")
        assert env.observation_space.contains(obs)
        if terminated or truncated:
            env.reset()


# ----------------------------------------------------------------------------- errors never raise from step


def test_bad_action_reports_and_the_episode_goes_on(make_controller_env):
    env = make_controller_env(task=FRANCE)
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step({"type": "press", "keys": ["nokey"]})
    assert info["status"] == "action_error"
    assert "nokey" in info["action_error"]
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert env.observation_space.contains(obs)
    for bad in (
        {"type": "clik"},
        {"type": ["click"]},
        "click",
        5,
        None,
        [TypeAction(text="a"), {"type": "wait"}],
        {"action_type": 999},
        CustomAction(action="teleport"),
    ):
        _, _, terminated, _, info = env.step(bad)
        assert info["status"] == "action_error", bad
        assert info["action_error"]
        assert not terminated
    _, reward, terminated, _, info = env.step(ResponseAction(text="Paris"))
    assert info["status"] == "ok" and terminated and reward == 1.0


def test_a_bad_list_executes_nothing(make_controller_env):
    env = make_controller_env(task=FRANCE)
    env.reset(seed=0)
    obs, _, _, _, info = env.step([TypeAction(text="abc"), {"type": "press", "keys": ["nokey"]}])
    assert info["status"] == "action_error" and info["action_error"].startswith("action 1:")
    assert obs["text"].endswith("Answer so far: ")


def test_step_before_reset_and_after_the_end(make_controller_env):
    env = make_controller_env(task=FRANCE)
    with pytest.raises(ResetNeeded):
        env.step(ResponseAction(text="x"))
    env.reset(seed=0)
    env.step(ResponseAction(text="Paris"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        obs, reward, terminated, truncated, info = env.step(ResponseAction(text="again"))
    assert info["status"] == "episode_over" and terminated and math.isnan(reward)  # no grade: absent, not 0
    assert env.final_response == "Paris"


def test_step_timeout_truncates(make_controller_env):
    env = make_controller_env(task=FRANCE, step_timeout=0.05)
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(WaitAction(time=2000))
    assert info["status"] == "timeout" and truncated and not terminated
    assert "0.05" in info["error"]
    assert env.observation_space.contains(obs)
    # the next reset restarts the controller and works
    _, info = env.reset(seed=0)
    assert info["status"] == "ok"
    assert env.step(ResponseAction(text="Paris"))[1] == 1.0


@LOCAL_ONLY_FUNCTIONS
def test_unknown_evaluate_function_fails_reset_before_setup(make_env):
    SETUP_CALLS.clear()
    task = Task(prompt="q", setup=[("test_record_setup", "ran")], evaluate=[("respons_includes", "x")])
    env = make_env(task=task)
    with pytest.raises(UnknownFunctionError) as info:
        env.reset(seed=0)
    assert "respons_includes" in str(info.value) and "response_includes" in str(info.value)
    assert SETUP_CALLS == []
    with pytest.raises(FunctionArgumentError, match="numeric_match"):
        env.reset(
            options={
                "task": Task(prompt="q", setup=[("test_record_setup", "ran")], evaluate=[("numeric_match", "abc")])
            }
        )
    assert SETUP_CALLS == []
    with pytest.raises(UnknownFunctionError, match="no_such_setup"):
        env.reset(options={"task": Task(prompt="q", setup=["no_such_setup"], target="x")})
    # the env is still usable
    env.reset(options={"task": Task(prompt="q", setup=[("test_record_setup", "ran")], target="x")})
    assert SETUP_CALLS == ["ran"]


@LOCAL_ONLY_FUNCTIONS
def test_failing_setup_raises_setup_error(make_env):
    env = make_env(task=Task(prompt="q", setup=["test_failing_setup"], target="x"))
    with pytest.raises(SetupError, match="setup broke"):
        env.reset(seed=0)


def test_setup_show_passage(make_controller_env):
    env = make_controller_env(task="qa-basic/passage-color")
    obs, _ = env.reset(seed=0)
    assert "The house at the end of the lane has a green door" in obs["text"]
    assert obs["text"].startswith("According to the passage")
    _, reward, _, _, _ = env.step(ResponseAction(text="green"))
    assert reward == 1.0


def test_setup_set_question_and_prefill(make_controller_env):
    env = make_controller_env(
        task=Task(prompt="p", target="Paris", setup=[("set_question", "Where?"), ("prefill_answer", "Par")])
    )
    obs, _ = env.reset(seed=0)
    assert obs["text"].endswith("Answer so far: Par")
    _, reward, terminated, _, _ = env.step([TypeAction(text="is"), PressAction(keys=["Enter"])])
    assert terminated and reward == 1.0


# ----------------------------------------------------------------------------- rewards and truncation


@LOCAL_ONLY_FUNCTIONS
def test_truncation_at_max_episode_steps_runs_the_evaluator():
    env = QAEnv(task=Task(prompt="q", evaluate=["test_answer_length"]), max_steps=3)
    try:
        assert env.max_episode_steps == 3
        env.reset(seed=0)
        for step in (1, 2):
            _, reward, terminated, truncated, info = env.step(TypeAction(text="ab"))
            assert not terminated and not truncated and reward == 0.0 and info["grade"] is None
            assert info["step"] == step
        _, reward, terminated, truncated, info = env.step(TypeAction(text="ab"))
        assert truncated and not terminated
        assert info["grade"] is not None and reward == pytest.approx(0.6)
    finally:
        env.close()


def test_registered_step_limit_truncates_with_a_grade(make_controller_env):
    env = make_controller_env(task=FRANCE)
    env.reset(seed=0)
    for _ in range(19):
        assert env.step(TypeAction(text="x"))[3] is False
    _, reward, terminated, truncated, info = env.step(TypeAction(text="x"))
    assert truncated and not terminated and info["step"] == 20
    assert info["grade"].content == "no response" and reward == 0.0


@LOCAL_ONLY_FUNCTIONS
def test_evaluate_every_step(make_env):
    env = make_env(task=Task(prompt="q", evaluate=["test_answer_length"]), evaluate_every_step=True)
    env.reset(seed=0)
    rewards = []
    for _ in range(3):
        _, reward, terminated, _, info = env.step(TypeAction(text="a"))
        assert info["grade"] is not None and not terminated
        rewards.append(reward)
    assert rewards == pytest.approx([0.1, 0.2, 0.3])


def test_evaluate_every_step_with_a_response_evaluator(make_controller_env):
    env = make_controller_env(task=FRANCE, evaluate_every_step=True)
    env.reset(seed=0)
    for _ in range(3):
        _, reward, terminated, _, info = env.step(TypeAction(text="x"))
        assert info["grade"].content == "no response" and reward == 0.0
        assert not terminated  # "no response" does not end the episode
    _, reward, terminated, _, _ = env.step(ResponseAction(text="Paris"))
    assert terminated and reward == 1.0


@LOCAL_ONLY_FUNCTIONS
def test_evaluate_every_step_done_ends_the_episode(make_env):
    env = make_env(task=Task(prompt="q", evaluate=[("test_answer_is", "ok")]), evaluate_every_step=True)
    env.reset(seed=0)
    _, reward, terminated, _, _ = env.step(TypeAction(text="o"))
    assert not terminated and reward == 0.0
    _, reward, terminated, _, info = env.step(TypeAction(text="k"))
    assert terminated and reward == 1.0 and info["grade"].content == "typed"


@LOCAL_ONLY_FUNCTIONS
def test_evaluate_every_step_with_a_bool_evaluator(make_env):
    env = make_env(task=Task(prompt="q", evaluate=[("test_answer_is_bool", "ok")]), evaluate_every_step=True)
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(TypeAction(text="o"))
    assert not terminated and reward == 0.0 and info["grade"] is not None  # False does not end the episode
    _, reward, terminated, _, _ = env.step(TypeAction(text="k"))
    assert terminated and reward == 1.0  # True does


def test_evaluate_combine_from_task_config(make_controller_env):
    evaluate = [("response_includes", "whale"), ("response_includes", "ocean")]
    mean_env = make_controller_env(task=Task(prompt="q", evaluate=evaluate))
    min_env = make_controller_env(task=Task(prompt="q", evaluate=evaluate, config={"evaluate_combine": "min"}))
    max_env = make_controller_env(task=Task(prompt="q", evaluate=evaluate), evaluate_combine="max")
    rewards = []
    for env in (mean_env, min_env, max_env):
        env.reset(seed=0)
        rewards.append(env.step(ResponseAction(text="a whale"))[1])
    assert rewards == [0.5, 0.0, 1.0]


def test_evaluate_and_final_response(make_controller_env):
    env = make_controller_env(task=FRANCE)
    assert env.final_response is None
    assert env.evaluate().is_error  # nothing to evaluate before reset
    env.reset(seed=0)
    assert env.final_response is None
    assert env.evaluate().content == "no response"
    env.step(TypeAction(text="Paris"))
    assert env.final_response is None
    env.step(PressAction(keys=["enter"]))
    assert env.final_response == "Paris"
    grade = env.evaluate()
    assert isinstance(grade, Grade) and grade.reward == 1.0
    env.reset(seed=0)
    assert env.final_response is None  # a new episode forgets the answer


def test_custom_submit_and_clear(make_controller_env):
    env = make_controller_env(task=FRANCE)
    env.reset(seed=0)
    env.step([TypeAction(text="Lyon"), CustomAction(action="clear"), TypeAction(text="Paris")])
    _, reward, terminated, _, _ = env.step(CustomAction(action="submit"))
    assert terminated and reward == 1.0 and env.final_response == "Paris"


def test_answer_editing_keys(make_controller_env):
    env = make_controller_env(task=FRANCE)
    env.reset(seed=0)
    obs, *_ = env.step([TypeAction(text="Parix"), PressAction(keys=["backspace"]), PressAction(keys=["s"])])
    assert obs["text"].endswith("Answer so far: Paris")
    obs, *_ = env.step([PressAction(keys=["space"]), PressAction(keys=["ctrl", "a"])])
    assert obs["text"].endswith("Answer so far: ")
    obs, *_ = env.step(
        [{"type": "keydown", "keys": ["ctrl"]}, PressAction(keys=["u"]), {"type": "keyup", "keys": ["ctrl"]}]
    )
    assert obs["text"].endswith("Answer so far: ")
    obs, *_ = env.step(PressAction(keys=["x"]))  # ctrl is no longer held: the key types
    assert obs["text"].endswith("Answer so far: x")


# ----------------------------------------------------------------------------- observations


def _assert_obs(env, obs):
    assert env.observation_space.contains(obs), obs["text"]


def test_observations_are_in_the_space(make_controller_env):
    env = make_controller_env(taskset="qa-basic", max_text_length=200)
    obs, _ = env.reset(seed=0)
    _assert_obs(env, obs)
    for action in (
        TypeAction(text="emoji 😀 and\r\ncarriage\rreturn \x00 \x1b"),
        ClickAction(point=(5, 5)),
        MoveAction(offset=(3, -2)),
        DragAction(path=[(0, 0), (10, 10)]),
        ScreenshotFetch(),
        PositionFetch(),
        WaitAction(time=1),
        {"type": "press", "keys": ["nokey"]},
        TypeAction(text="x" * 500),
    ):
        obs, _, _, _, _ = env.step(action)
        _assert_obs(env, obs)
    assert len(obs["text"]) <= 200
    obs, _, terminated, _, _ = env.step(ResponseAction(text="done 😀"))
    _assert_obs(env, obs)
    for seed in range(5):
        _assert_obs(env, env.reset(seed=seed)[0])


def test_typed_text_is_sanitised_in_the_observation(make_controller_env):
    env = make_controller_env(task=FRANCE)
    env.reset(seed=0)
    obs, *_ = env.step(TypeAction(text="a😀\r\nb"))
    assert obs["text"].endswith("Answer so far: a\ufffd\nb")
    env.step(CustomAction(action="submit"))
    assert env.final_response == "a😀\r\nb"  # the controller keeps the real text


def test_observations_are_fresh_objects(make_controller_env):
    env = make_controller_env(task=FRANCE)
    obs0, _ = env.reset(seed=0)
    obs1, *_ = env.step(ScreenshotFetch())
    obs2, *_ = env.step(ScreenshotFetch())
    assert obs1["screenshot"] is not obs2["screenshot"]
    assert obs0["screenshot"] is not obs1["screenshot"]
    assert np.shares_memory(obs1["screenshot"], obs2["screenshot"]) is False
    assert np.array_equal(obs1["screenshot"], obs2["screenshot"])
    # mutating an observation changes nothing in the env
    obs1["screenshot"][:] = 0
    obs3, *_ = env.step(ScreenshotFetch())
    assert np.array_equal(obs3["screenshot"], obs2["screenshot"])
    assert obs3["screenshot"].flags.writeable


def test_render_returns_a_copy_of_the_last_screenshot(make_controller_env):
    """Issue 28, items 4 and 5: no render mode by default, as Gymnasium's envs; ``render()``
    before ``reset()`` is Gymnasium's ``ResetNeeded``, not a ``None`` a frame-tiler chokes on."""
    assert make_controller_env(task=FRANCE).unwrapped.render_mode is None
    env = make_controller_env(task=FRANCE, render_mode="rgb_array")
    with pytest.raises(ResetNeeded, match="before calling `env.reset\\(\\)`"):
        env.render()  # nothing rendered yet
    obs, _ = env.reset(seed=0)
    frame = env.render()
    assert frame is not obs["screenshot"] and np.array_equal(frame, obs["screenshot"])
    obs, *_ = env.step(TypeAction(text="Paris"))
    frame = env.render()
    assert np.array_equal(frame, obs["screenshot"])
    frame[:] = 0
    assert np.array_equal(env.render(), obs["screenshot"])
    no_render = make_controller_env(task=FRANCE)
    no_render.reset(seed=0)
    assert no_render.render() is None


def test_screenshot_changes_after_typing_and_is_deterministic(make_controller_env):
    env = make_controller_env(task=FRANCE, screen_size=(640, 360))
    start, _ = env.reset(seed=0)
    assert start["screenshot"].shape == (360, 640, 3) and start["screenshot"].dtype == np.uint8
    typed, *_ = env.step(TypeAction(text="Paris"))
    assert not np.array_equal(start["screenshot"], typed["screenshot"])
    assert (start["screenshot"] != typed["screenshot"]).any(axis=2).sum() > 50
    # the same state gives the same pixels: after deleting the text, and in another env
    erased, *_ = env.step(PressAction(keys=["ctrl", "a"]))
    assert np.array_equal(erased["screenshot"], start["screenshot"])
    other = make_controller_env(task=FRANCE, screen_size=(640, 360))
    again, _ = other.reset(seed=123)
    assert np.array_equal(again["screenshot"], start["screenshot"])
    again_typed, *_ = other.step([TypeAction(text="Pa"), TypeAction(text="ris")])
    assert np.array_equal(again_typed["screenshot"], typed["screenshot"])
    # a different question renders differently
    different, _ = other.reset(options={"task": Task(prompt="Another question?", target="x")})
    assert not np.array_equal(different["screenshot"], start["screenshot"])


def test_observation_size_scales_actions(make_controller_env):
    env = make_controller_env(task=FRANCE, screen_size=(400, 200), observation_size=(200, 100))
    obs, _ = env.reset(seed=0)
    assert obs["screenshot"].shape == (100, 200, 3)
    assert env.action_space["point"].high.tolist() == [199, 99]
    # Actions are in observation pixels; the controller works in screen pixels; positions are
    # reported back in observation pixels.
    # (test_position_is_reported_in_observation_pixels checks the controller's own pointer.)
    _, _, _, _, info = env.step([ClickAction(point=(100, 50)), PositionFetch()])
    assert info["position"] == (100, 50)
    _, _, _, _, info = env.step([MoveAction(offset=(-10, 5)), PositionFetch()])
    assert info["position"] == (90, 55)


def test_info_contents(make_controller_env):
    env = make_controller_env(task=FRANCE)
    _, info = env.reset(seed=7)
    assert info["seed"] == 7 and set(info["timings"]) >= {"setup", "total"}
    _, _, _, _, info = env.step(PositionFetch())
    assert info["position"] == (0, 0)
    assert info["step"] == 1 and info["task_id"] == "france"
    assert info["action_error"] is None and info["error"] is None and info["grade"] is None
    assert set(info["timings"]) >= {"action", "observe", "total"}
    assert all(v >= 0 for v in info["timings"].values())


# ----------------------------------------------------------------------------- lifecycle and async


def test_close_twice_and_reset_after_close(make_controller_env, controller):
    env = make_controller_env(task=FRANCE)
    env.reset(seed=0)
    env.close()
    env.close()
    with pytest.raises(ResetNeeded):
        env.step(ResponseAction(text="Paris"))
    env.reset(seed=0)  # a closed env can be reset again
    assert env.step(ResponseAction(text="Paris"))[1] == 1.0
    env.close()
    never_reset = QAEnv(task=FRANCE, controller=controller)
    never_reset.close()
    never_reset.close()


def test_async_api(controller):
    async def main():
        env = QAEnv(task=FRANCE, controller=controller)
        obs, info = await env.areset(seed=0)
        assert info["task_id"] == "france" and env.observation_space.contains(obs)
        obs, reward, terminated, _, _ = await env.astep(TypeAction(text="Paris"))
        assert not terminated and reward == 0.0
        _, reward, terminated, _, _ = await env.astep(PressAction(keys=["enter"]))
        assert terminated and reward == 1.0
        assert (await env.aevaluate()).reward == 1.0
        await env.aclose()
        await env.aclose()
        return env.final_response

    assert asyncio.run(main()) == "Paris"


def test_async_envs_run_concurrently(controller):
    async def episode(answer: str) -> float:
        env = QAEnv(task=FRANCE, controller=controller)
        try:
            await env.areset(seed=0)
            await env.astep(WaitAction(time=200))
            return (await env.astep(ResponseAction(text=answer)))[1]
        finally:
            await env.aclose()

    async def main():
        return await asyncio.gather(episode("Paris"), episode("Rome"), episode("paris"))

    assert asyncio.run(main()) == [1.0, 0.0, 1.0]


def test_sync_calls_inside_a_running_event_loop(controller):
    async def main():
        env = QAEnv(task=FRANCE, controller=controller)
        try:
            obs, info = env.reset(seed=0)
            assert info["task_id"] == "france"
            _, reward, terminated, _, _ = env.step(ResponseAction(text="Paris"))
            assert env.evaluate().reward == 1.0
            return reward, terminated
        finally:
            env.close()

    assert asyncio.run(main()) == (1.0, True)


def test_repr():
    env = QAEnv(task=FRANCE)
    assert repr(env) == "<QAEnv gym='qa' task='france'>"
    env.close()


@LOCAL_ONLY_INTERNALS
def test_position_is_reported_in_observation_pixels():
    env = QAEnv(task=FRANCE, screen_size=(1280, 720), observation_size=(640, 360))
    try:
        env.reset(seed=0)
        _, _, _, _, info = env.step([MoveAction(point=(100, 50)), PositionFetch()])
        assert info["position"] == (100, 50)
        assert env.controller.pointer == (200, 100)  # the controller works in screen pixels
        _, _, _, _, info = env.step([MoveAction(offset=(-10, 5)), PositionFetch()])
        assert info["position"] == (90, 55)
        assert env.controller.pointer == (180, 110)
    finally:
        env.close()
