"""The step's statuses and their one table (:mod:`hud_gym.core.step_status`), against real QA envs:
every status a step reports is a :class:`StepStatus` whose reward, ``terminated``, ``truncated``
and controller restart are the ones :data:`STATUS_RULES` gives, and ``info["status"]`` stays the
plain string it always was."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import pytest

from hud_gym import ResponseAction, Task
from hud_gym.core.step_status import STATUS_RULES, StepOutcome, StepStatus
from hud_gym.envs.qa import QAEnv
from hud_gym.rewards import graded_reward
from hud_gym.trajectory import FAILED

sys.path.insert(0, str(Path(__file__).parent))
import failing_functions  # noqa: F401  (registers the failing evaluators)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HUD_GYM_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_statuses_are_the_strings_they_always_were() -> None:
    assert [s.value for s in StepStatus] == ["ok", "action_error", "episode_over", "eval_error", "env_error", "timeout"]
    assert StepStatus.TIMEOUT == "timeout" and StepStatus.EVAL_ERROR == "eval_error"
    assert StepStatus("env_error") is StepStatus.ENV_ERROR
    assert (str(StepStatus.OK), f"{StepStatus.ACTION_ERROR}") == ("ok", "action_error")
    assert {StepStatus.OK: 1}["ok"] == 1  # hashes as its string


def test_the_table_covers_every_status_and_its_failures_are_the_failed_statuses() -> None:
    assert set(STATUS_RULES) == set(StepStatus)
    absent = {status for status, rule in STATUS_RULES.items() if not rule.keeps_reward}
    # A step without a reward failed, or came after the episode's end (outside any episode: no grade).
    assert absent - {StepStatus.EPISODE_OVER} == {status for status in StepStatus if status in FAILED}
    assert absent == {StepStatus.EVAL_ERROR, StepStatus.ENV_ERROR, StepStatus.TIMEOUT, StepStatus.EPISODE_OVER}
    # Only a failure of the controller (or a step that outlived its deadline) restarts it.
    assert {status for status, rule in STATUS_RULES.items() if rule.restarts} == {
        StepStatus.ENV_ERROR,
        StepStatus.TIMEOUT,
    }


def test_a_later_phase_replaces_the_status_and_keeps_the_ends() -> None:
    outcome = StepOutcome()
    outcome.set(StepStatus.ACTION_ERROR, "no such key")
    assert (outcome.reward, outcome.info["action_error"], outcome.info["error"]) == (0.0, "no such key", None)
    outcome.set(StepStatus.TIMEOUT, "too slow")
    assert (outcome.status, outcome.info["status"], outcome.reward) == (StepStatus.TIMEOUT, "timeout", None)
    assert (outcome.truncated, outcome.restart_controller, outcome.info["error"]) == (True, True, "too slow")
    outcome.set(StepStatus.ENV_ERROR, "gone")
    assert (outcome.terminated, outcome.truncated) == (True, True)  # ends are never taken back


def step_once(evaluate: Any, action: Any, **env_kwargs: Any) -> tuple[QAEnv, Any, bool, bool, dict[str, Any]]:
    env = QAEnv(task=Task(id="t", prompt="Capital of France?", gym="qa", evaluate=evaluate), **env_kwargs)
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(action)
    return env, reward, terminated, truncated, info


@pytest.mark.parametrize(
    ("evaluate", "action", "env_kwargs", "status"),
    [
        (("response_includes", "Paris"), ResponseAction(text="Paris"), {}, "ok"),
        (("response_includes", "Paris"), {"type": "no-such-action"}, {}, "action_error"),
        (("failing_raises",), ResponseAction(text="Paris"), {}, "eval_error"),
        (("failing_returns", math.nan), ResponseAction(text="Paris"), {}, "eval_error"),
        (("failing_sleeps", 3600.0), ResponseAction(text="Paris"), {"step_timeout": 1.0}, "timeout"),
    ],
)
def test_each_status_does_what_the_table_says(
    evaluate: Any, action: Any, env_kwargs: dict[str, Any], status: str
) -> None:
    env, reward, terminated, truncated, info = step_once(evaluate, action, **env_kwargs)
    try:
        assert type(info["status"]) is str and info["status"] == status  # stored and shown as before
        rule = STATUS_RULES[StepStatus(status)]
        assert (graded_reward(reward) is not None) == rule.keeps_reward
        assert env.episode.state.restart_controller == rule.restarts
        if rule.truncated:
            assert truncated
        if status == "ok":
            assert (reward, terminated, info["grade"].reward) == (1.0, True, 1.0)
        if status == "action_error":  # not a failure: the episode goes on, ungraded
            assert (reward, terminated, truncated, info["grade"]) == (0.0, False, False, None)
            assert info["action_error"] and info["error"] is None
        if status in ("eval_error", "timeout"):
            assert info["error"] and info["grade"].is_error
        if terminated or truncated:
            with pytest.warns(UserWarning, match="episode ended"):
                _, reward, terminated, truncated, info = env.step(ResponseAction(text="again"))
            assert math.isnan(reward) and (terminated, truncated, info["status"]) == (True, False, "episode_over")
    finally:
        env.close()
