"""TRL's ``environment_factory`` adapter, checked against the trainer's contract on hud/QA-v0
(no trl or transformers installed)."""

from __future__ import annotations

import inspect
import math
import typing
from typing import Any

import pytest

from hud_gym.wrappers.integrations.trl import trl_environment_factory

pytestmark = pytest.mark.timeout(60)

TOOLS = {"click", "type_text", "press", "scroll", "answer"}
ROW = {"prompt": [{"role": "user", "content": "What is 2+2?"}], "target": "4", "gym": "qa", "seed": 5}


@pytest.fixture
def env_cls():
    return trl_environment_factory("qa")


@pytest.fixture
def envs(env_cls):
    made: list[Any] = []

    def new() -> Any:
        made.append(env_cls())
        return made[-1]

    yield new
    for env in made:
        type(env).close_all()


def _public_methods(obj: Any) -> dict[str, Any]:
    # As TRL does: every public function of the class (properties and classmethods are not tools).
    return {
        n: getattr(obj, n)
        for n, _ in inspect.getmembers(type(obj), predicate=inspect.isfunction)
        if not n.startswith("_")
    }


def test_factory_class_follows_trls_tool_contract(envs) -> None:
    env = envs()
    methods = _public_methods(env)
    assert set(methods) == TOOLS | {"reset", "get_reward"}
    assert inspect.signature(type(env).__init__).parameters.keys() == {"self"}
    for name in TOOLS:
        method = methods[name]
        doc = inspect.getdoc(method)
        assert doc and "Args:" in doc, name
        hints = typing.get_type_hints(method)
        assert hints.get("return") == str | list[dict[str, Any]], name
        for param in inspect.signature(method).parameters:
            assert param in hints, (name, param)
            assert f"{param}:" in doc.split("Args:")[1], (name, param)
    assert typing.get_type_hints(methods["get_reward"])["return"] is float
    assert typing.get_type_hints(methods["reset"])["return"] == str | None


def test_construction_is_lazy(envs) -> None:
    env = envs()
    assert env.env is None
    assert "not been reset" in env.type_text("x")
    env.reset(task="qa-basic/capital-france")
    assert env.env is not None


@pytest.mark.parametrize("row", [{"task": "qa-basic/capital-france", "seed": 1}, ROW], ids=["reference", "fields"])
@pytest.mark.parametrize("right", [True, False])
def test_full_episode_reward(envs, row: dict[str, Any], right: bool) -> None:
    env = envs()
    instruction = env.reset(**row)
    correct = "Paris" if "task" in row else "4"
    # A row with its own prompt already shows the question (TRL would append it twice).
    assert instruction == ("What is the capital of France?" if "task" in row else None)
    out = env.type_text("draft")
    assert "Answer so far: draft" in out and "Status: ok" in out
    assert env.last_image is not None and env.last_image.size == (1280, 720)
    out = env.answer(correct if right else "Lyon")
    assert "The episode is over." in out
    assert env.get_reward() == (1.0 if right else 0.0)
    assert "episode is over" in env.type_text("more")
    # The env is reused for the next episode (TRL pools instances).
    first = env.env
    env.reset(**row)
    assert env.env is first and env.get_reward() == 0.0  # graded now, before any answer


def test_tools_report_status_and_errors(envs) -> None:
    env = envs()
    env.reset(task={"prompt": "Say hi", "target": "hi", "gym": "qa"})
    assert "Status: ok" in env.click(10, 20)
    assert "Status: ok" in env.scroll(0, 100)
    env.type_text("hx")
    assert "Answer so far: h" in env.press("backspace")
    out = env.press("notakey+q")
    assert "Status: action_error" in out and "Error:" in out
    assert "Answer so far: \n" in env.press("ctrl+a") + "\n"
    env.type_text("hi")
    assert env.get_reward() == 0.0  # graded now: typed text is not a final response
    env.answer("hi")
    assert env.get_reward() == 1.0


def test_instances_are_independent(envs) -> None:
    a, b = envs(), envs()
    a.reset(task="qa-basic/capital-france")
    b.reset(**ROW)
    a.type_text("Par")
    assert "Answer so far: 4" in b.type_text("4")
    assert a.env is not b.env
    a.answer("Paris")
    b.answer("5")
    assert (a.get_reward(), b.get_reward()) == (1.0, 0.0)


def test_an_absent_reward_is_nan_for_trl(envs) -> None:
    # An invalid task regex: grading fails, so the reward is absent (NaN, which TRL ignores), not 0.
    task = {"prompt": "Say hi", "gym": "qa", "evaluate": [["match_regex", "(unclosed"]]}
    env = envs()
    env.reset(task=task)
    out = env.answer("hi")
    assert "Status: eval_error" in out and "invalid regex" in out and math.isnan(env.get_reward())


def test_task_for_another_gym_is_refused(envs) -> None:
    env = envs()
    with pytest.raises(ValueError, match="gym"):
        env.reset(task={"prompt": "x", "gym": "hud-browser"})
    assert env.env is None
