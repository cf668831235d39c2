"""The ``files`` task families (hud_gym/suites/files): deterministic generation, the task sets,
and, on a live desktop, each family's oracle scoring 1 (two seeds, the easiest and the hardest
level) and doing nothing scoring 0, in one env."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import hud_gym
from hud_gym.core.family import families, generate_task

pytestmark = pytest.mark.timeout(600)

FAMILIES = [family.name for family in families("files")]


def test_six_files_families_are_registered() -> None:
    assert len(FAMILIES) >= 6 and all(name.startswith("files-") for name in FAMILIES)
    taskset = hud_gym.load_taskset("files", split="test", n=12)
    assert sorted({task.metadata["family"] for task in taskset.tasks}) == sorted(FAMILIES)
    assert all(task.metadata["benchmark"] == "files" and task.metadata["seed"] >= 10**9 for task in taskset.tasks)


@pytest.mark.parametrize("name", FAMILIES)
def test_generation_is_deterministic_and_seeded(name: str) -> None:
    for difficulty in (1, 2, 3):
        first = generate_task(name, 123, difficulty)
        assert first == generate_task(name, 123, difficulty)
        assert first.to_dict() != generate_task(name, 124, difficulty).to_dict()
        assert first.metadata == {"benchmark": "files", "family": name, "seed": 123, "difficulty": difficulty}
    # A harder level asks for more work: its oracle plays more actions.
    steps = [len(generate_oracle_actions(name, 5, d)) for d in (1, 3)]
    assert steps[0] <= steps[1], steps


def generate_oracle_actions(name: str, seed: int, difficulty: int) -> list[Any]:
    from hud_gym.core.family import make_oracle

    oracle = make_oracle(generate_task(name, seed, difficulty))
    return list(oracle.actions)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", FAMILIES)
def test_oracle_solves_and_doing_nothing_fails(desktop: Any, play: Callable[..., Any], name: str) -> None:
    for seed, difficulty in ((1, 1), (2, 3)):
        played = play(desktop, generate_task(name, seed, difficulty))
        assert played.reward == 1.0 and set(played.statuses) == {"ok"}, (seed, difficulty, played)
    nothing = play(desktop, generate_task(name, 3, 2), oracle=False)
    assert nothing.reward == 0.0 and nothing.statuses == ["ok"], nothing


@pytest.mark.parametrize("name", ["files-pipeline", "files-permissions"])
def test_the_check_command_proves_a_files_family(desktop: Any, name: str) -> None:
    from hud_gym.agents.family_check import check_family
    from hud_gym.core.family import get_family

    report = check_family(get_family(name), seeds=2, env=desktop)
    assert report.passed, report
    assert report.oracle == 1.0 and report.nothing == 0.0 and report.attacks_played >= 6
