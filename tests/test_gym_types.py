"""GymType descriptors: hud-gym's own gyms and a gym defined outside it (``counter_gym``), which
registers through its descriptor alone and then works everywhere a built-in gym does."""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path
from typing import Any

import counter_gym
import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import hud_gym
from hud_gym import ClickAction, PressAction, ResponseAction, Task, TypeAction
from hud_gym.core.gym_type import gym_of_env
from hud_gym.evaluation import REGISTRY, UnknownFunctionError
from hud_gym.gyms import BUILTIN_GYMS, UnknownGymError, all_gyms, get_gym, register_gym
from hud_gym.registration import GYM_IDS, gym_id_for

COUNT_TO_4 = Task(id="to-4", prompt="Count to 4.", setup=[("start_at", 1)], evaluate=("count_is", 4), gym="counter")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HUD_GYM_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_the_builtin_gyms_keep_their_ids_and_names() -> None:
    assert [gym.name for gym in BUILTIN_GYMS] == ["qa", "browser", "ubuntu"]
    assert dict(GYM_IDS) == {
        "qa": "hud/QA-v0",
        "browser": "hud/Browser-v0",
        "ubuntu": "hud/Ubuntu-v0",
        "counter": "test/Counter-v0",
    }
    for name, gym in {
        "qa": "qa",
        None: "qa",
        "question-answer": "qa",
        "hud-browser": "browser",
        "Browser": "browser",
        "hud-ubuntu": "ubuntu",
        "desktop": "ubuntu",
        "hud/Ubuntu-v0": "ubuntu",
    }.items():
        assert get_gym(name).name == gym
        assert gym_id_for(name) == get_gym(gym).id
    qa = get_gym("qa")
    assert isinstance(qa.controller, str) and qa.controller_factory().__name__ == "QAController"  # imported lazily
    with pytest.raises(UnknownGymError, match="unknown gym 'chess'.*hud-browser") as raised:
        get_gym("chess")
    assert isinstance(raised.value, ValueError) and isinstance(raised.value, hud_gym.HudGymError)


def test_builtin_gyms_are_registered_with_gymnasium_from_their_descriptors() -> None:
    for gym in BUILTIN_GYMS:
        spec = gymnasium.spec(gym.id)
        assert spec.entry_point == gym.entry_point == f"{gym.env.__module__}:{gym.env.__name__}"
        assert spec.vector_entry_point == f"hud_gym.wrappers.vector.entry_points:{gym.name}"
        assert spec.nondeterministic is (not gym.deterministic)
        assert not spec.order_enforce and spec.disable_env_checker
    assert gymnasium.make("hud/QA-v0").unwrapped.max_episode_steps == 20
    assert REGISTRY.get("setup", "browser", "chrome.goto").name == "goto"  # the browser's prefixes


def test_a_gym_registers_through_its_descriptor_alone() -> None:
    assert get_gym("tally") is get_gym("test/Counter-v0") is counter_gym.GYM
    assert counter_gym.GYM in all_gyms()
    spec = gymnasium.spec("test/Counter-v0")
    assert spec.entry_point == "counter_gym:CounterEnv" and not spec.nondeterministic
    assert REGISTRY.get("evaluate", "counter", "counter.count_is").name == "count_is"
    with pytest.raises(UnknownFunctionError, match="count_is"):
        REGISTRY.get("evaluate", "counter", "count_was")
    assert register_gym(counter_gym.GYM) is counter_gym.GYM  # again: nothing happens
    with pytest.raises(ValueError, match="tally"):
        register_gym(dataclasses.replace(counter_gym.GYM, name="abacus", id="test/Abacus-v0"))
    with pytest.raises(ValueError, match="env class CounterEnv is gym 'counter''s"):  # it would take over the class
        register_gym(dataclasses.replace(counter_gym.GYM, name="abacus", id="test/Abacus-v0", aliases=()))
    assert gym_of_env(counter_gym.CounterEnv) is counter_gym.GYM
    with pytest.raises(UnknownGymError):
        get_gym("abacus")
    with pytest.raises(ValueError, match="lower case"):
        hud_gym.GymType(
            name="Abacus", id="test/Abacus-v0", env=counter_gym.CounterEnv, controller=counter_gym.CounterController
        )


def test_the_env_takes_its_name_limit_and_controller_from_the_descriptor() -> None:
    env = hud_gym.make(COUNT_TO_4)
    try:
        assert isinstance(env, counter_gym.CounterEnv) and env.gym == "counter" and env.descriptor is counter_gym.GYM
        assert env.max_episode_steps == 10 and env.placement == "local"
        obs, info = env.reset(seed=0)
        assert obs["text"].endswith("Count: 1") and isinstance(env.controller, counter_gym.CounterController)
        rewards = [env.step(ClickAction(point=(1, 1)))[1] for _ in range(2)]
        _, reward, terminated, _, info = env.step(ResponseAction(text="done"))
        assert rewards == [0.0, 0.0] and terminated and reward == 0.0 and info["grade"].reward == 0.0
        env.reset(seed=0)
        for _ in range(3):
            _, reward, _, _, info = env.step(ClickAction(point=(1, 1)))
        _, _, _, _, info = env.step(TypeAction(text="x"))
        assert info["status"] == "action_error" and "counter" in info["action_error"]
        assert env.step(ResponseAction(text="done"))[1] == 1.0
        with pytest.raises(ValueError, match="step_size"):
            hud_gym.make(COUNT_TO_4, step_size=0)
    finally:
        env.close()


def test_check_env_passes_with_the_determinism_checks() -> None:
    env = gymnasium.make("test/Counter-v0", task=COUNT_TO_4)
    try:
        check_env(env.unwrapped, skip_render_check=False, skip_close_check=False)
    finally:
        env.close()


def test_make_vec_uses_the_descriptor_vector_entry_point() -> None:
    envs = gymnasium.make_vec("test/Counter-v0", num_envs=2, task=COUNT_TO_4, step_size=2)
    try:
        assert type(envs).__name__ == "HudVectorEnv" and envs.num_envs == 2
        obs, _ = envs.reset(seed=0)
        assert list(obs["text"]) == ["Count to 4.\nCount: 1"] * 2
        obs, rewards, terminated, _, infos = envs.step([ClickAction(point=(0, 0)), PressAction(keys=["down"])])
        assert list(infos["count"]) == [3, -1] and rewards.tolist() == [0.0, 0.0]
        assert obs["screenshot"].shape == (2, 32, 64, 3) and int(obs["screenshot"][0].max()) == 255
    finally:
        envs.close()


def test_a_job_runs_the_gym_and_stores_its_runs(home: Path) -> None:
    def policy(observation: dict[str, Any], history: list[Any], task: Task) -> Any:
        return ClickAction(point=(0, 0)) if len(history) < 3 else ResponseAction(text="done")

    job = hud_gym.run_job(policy, [COUNT_TO_4], "counter", group_size=2, seed=0)
    trajectories = job.load_trajectories()
    assert [t.reward for t in trajectories] == [1.0, 1.0] and {t.status for t in trajectories} == {"ok"}
    assert all(t.metadata["gym"] == "counter" and len(t.steps) == 4 for t in trajectories)
    assert job.get_analytics().success_rate == 1.0


def test_tasks_of_the_gym_are_validated_against_its_functions(tmp_path: Path) -> None:
    from hud_gym.cli.errors import CLIError
    from hud_gym.cli.running import plan_run
    from hud_gym.formats.common import check_task_calls

    check_task_calls(tmp_path / "t.json", Task(prompt="p", gym="tally", evaluate=("count_is", 2)), index=0)
    with pytest.raises(hud_gym.TaskFileError, match="count_was.*count_is"):
        check_task_calls(tmp_path / "t.json", Task(prompt="p", gym="tally", evaluate=("count_was", 2)), index=0)
    with pytest.raises(hud_gym.TaskFileError, match="field 'gym'.*unknown gym 'abacus'"):
        check_task_calls(tmp_path / "t.json", Task(prompt="p", gym="abacus"), index=0)
    with pytest.raises(CLIError, match="field 'gym'.*unknown gym 'abacus'"):
        plan_run(hud_gym.TaskSet(tasks=[Task(prompt="p", gym="abacus")]), "random")
    env = hud_gym.make(Task(prompt="p", gym="counter", evaluate=("count_was", 2)))
    with pytest.raises(UnknownFunctionError, match="count_is"):
        env.reset(seed=0)
    env.close()


def test_a_bad_placement_is_refused_at_make_time() -> None:
    with pytest.raises(ValueError, match="controller must be"):
        hud_gym.make(COUNT_TO_4, controller="elsewhere")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = hud_gym.make(COUNT_TO_4, controller="subprocess")  # nothing starts before reset
    assert env.placement == "subprocess" and env.controller is None
    env.close()


@pytest.mark.timeout(120)
def test_a_controller_server_serves_the_gym_its_import_registers(monkeypatch: pytest.MonkeyPatch) -> None:
    # The server (a subprocess) learns the gym from the module HUD_GYM_SERVER_IMPORTS names, then
    # builds its controller and runs its functions from the descriptor, as for a built-in gym.
    monkeypatch.setenv("PYTHONPATH", str(Path(counter_gym.__file__).parent))
    monkeypatch.setenv("HUD_GYM_SERVER_IMPORTS", "counter_gym")
    env = hud_gym.make(COUNT_TO_4, controller="subprocess", step_size=3)
    try:
        observation, _ = env.reset(seed=0)
        assert observation["text"].endswith("Count: 1")
        _, _, _, _, info = env.step(ClickAction(button="left"))
        assert info["count"] == 4
        _, reward, terminated, _, _ = env.step(ResponseAction(text="done"))
        assert (reward, terminated) == (1.0, True)
    finally:
        env.close()
