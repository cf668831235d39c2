"""The example family of docs/task-families.md, proven end to end: a family of arithmetic questions
in the QA gym, registered, loaded as a task set with train and test seeds, and checked by the same
code as ``hud-gym tasksets check`` (its oracle scores 1, doing nothing and random actions 0)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from hud_gym import ResponseAction, Task, load_taskset
from hud_gym.agents.family_check import check_family
from hud_gym.core.family import TEST_SEED_START, Family, generate_task, get_family, make_oracle, register_family

pytestmark = pytest.mark.timeout(300)


def sum_task(seed: int, difficulty: int) -> Task:
    """Add ``difficulty + 1`` numbers drawn from the seed."""
    numbers = [random.Random(seed * 10 + i).randint(10, 99) for i in range(difficulty + 1)]
    return Task(
        prompt=f"What is {' + '.join(map(str, numbers))}? Answer with the number only.",
        gym="qa",
        evaluate=[("response_matches", rf"^\s*{sum(numbers)}\s*$")],  # type: ignore[list-item]
        metadata={
            "family": "example-sum",
            "seed": seed,
            "difficulty": difficulty,
            "benchmark": "examples",
            "numbers": numbers,
        },  # fmt: skip
    )


class SumOracle:
    """Adds the task's numbers (its parameters) and answers: one CLA action, then done."""

    def __init__(self, task: Task) -> None:
        self.answer: str | None = str(sum((task.metadata or {})["numbers"]))

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> ResponseAction | None:
        answer, self.answer = self.answer, None
        return None if answer is None else ResponseAction(text=answer)


EXAMPLE = Family(
    name="example-sum",
    gym="qa",
    kind="examples",
    generate=f"{__name__}:sum_task",
    oracle=f"{__name__}:SumOracle",
    description="add numbers (difficulty: how many)",
)


def test_the_example_family_registers_loads_and_passes_the_check() -> None:
    register_family(EXAMPLE)
    register_family(EXAMPLE)  # the same descriptor again: nothing
    assert get_family("example-sum") is EXAMPLE
    train, test = load_taskset("examples", n=6), load_taskset("example-sum", split="test", n=6)
    assert [t.metadata["difficulty"] for t in train] == [1, 2, 3, 1, 2, 3]  # type: ignore[index]
    assert all(t.metadata["seed"] >= TEST_SEED_START for t in test)  # type: ignore[index]
    assert generate_task("example-sum", 5, 2) == generate_task("example-sum", 5, 2)
    assert make_oracle(train[0]).act({}, {}) is not None
    report = check_family(EXAMPLE, seeds=9)
    assert report.passed, report.problems
    assert (report.oracle, report.nothing, report.random, report.steps) == (1.0, 0.0, 0.0, {1: 1.0, 2: 1.0, 3: 1.0})


def test_a_bad_family_is_refused_with_a_clear_error() -> None:
    with pytest.raises(ValueError, match="import path"):
        Family(name="x", gym="qa", kind="examples", generate="no-colon", oracle="a:b")
    with pytest.raises(ValueError, match="is the name of a kind"):
        register_family(Family(name="webapps", gym="qa", kind="examples", generate="a:b", oracle="a:b"))
    with pytest.raises(KeyError, match="unknown task family"):
        get_family("no-such-family")


def wrong_task(seed: int, difficulty: int) -> Task:
    """The example's task, as a task of the family whose oracle is wrong."""
    task = sum_task(seed, difficulty)
    return task.model_copy(update={"metadata": {**(task.metadata or {}), "family": "example-wrong"}})


class WrongOracle(SumOracle):
    """Answers one more than the sum: a family whose oracle fails, which the check must refuse."""

    def __init__(self, task: Task) -> None:
        super().__init__(task)
        self.answer = str(int(self.answer or 0) + 1)


def test_the_check_command_prints_the_table_and_fails_a_failing_family() -> None:
    from typer.testing import CliRunner

    from hud_gym.cli.app import app

    register_family(EXAMPLE)
    result = CliRunner().invoke(app, ["tasksets", "check", "example-sum", "--seeds", "3"])
    assert result.exit_code == 0, result.output
    for column in ("oracle", "do-nothing", "random", "hacking", "pass", "100%", "d3: 1.0"):
        assert column in result.stdout, result.stdout
    broken = Family(name="example-wrong", gym="qa", kind="broken-examples", generate=f"{__name__}:wrong_task",
                    oracle=f"{__name__}:WrongOracle")  # fmt: skip
    register_family(broken)
    failing = CliRunner().invoke(app, ["tasksets", "check", "broken-examples", "--seeds", "2"])
    assert failing.exit_code == 1 and "FAIL" in failing.stdout, failing.output
