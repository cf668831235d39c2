"""The web-app families through the task-family interface: deterministic generation, the train and
test seed ranges, ``load_taskset`` options, and each family's check on a real SQLite database."""

from __future__ import annotations

import sqlite3

import pytest

from hud_gym import load_taskset
from hud_gym.core.family import TEST_SEED_START, families, generate_task, get_family
from hud_gym.core.gym_type import import_path
from hud_gym.suites.webapps.families import CHECKS, FAMILIES
from hud_gym.suites.webapps.functions import APPS

pytestmark = pytest.mark.timeout(120)

NAMES = [f.name for f in FAMILIES]


def test_twelve_web_families_three_per_app_are_registered() -> None:
    assert len(FAMILIES) >= 12
    assert {f.name for f in families("webapps")} == set(NAMES)
    assert {name.split("-")[0] for name in NAMES} == {"mail", "shop", "cal", "admin"}
    assert set(CHECKS) == set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_generation_is_deterministic_and_difficulty_changes_the_plan(name: str) -> None:
    family = get_family(name)
    lengths = []
    for difficulty in family.difficulties:
        task = generate_task(name, 7, difficulty)
        assert task == generate_task(name, 7, difficulty)
        assert task.metadata is not None
        assert {k: task.metadata[k] for k in ("family", "seed", "difficulty", "benchmark")} == {
            "family": name, "seed": 7, "difficulty": difficulty, "benchmark": "webapps"
        }  # fmt: skip
        lengths.append(len(task.metadata["plan"]))
    assert lengths == sorted(lengths) and lengths[0] < lengths[-1], lengths
    assert generate_task(name, 7, 1).prompt != generate_task(name, 8, 1).prompt


@pytest.mark.parametrize("name", NAMES)
def test_a_fresh_database_fails_the_check_and_the_generator_owns_the_answer(name: str) -> None:
    """The check of a task on its untouched database is the task's failure (doing nothing scores 0)."""
    task = generate_task(name, 3, 2)
    setup, evaluate = task.setup[0], task.evaluate[0]  # type: ignore[index]
    db = sqlite3.connect(":memory:")
    import_path(APPS[setup.args[0]]).create(db, setup.args[1])
    done, why = import_path(CHECKS[name])(db, evaluate.args[1])
    assert done is False and why


def test_load_taskset_takes_split_n_and_difficulty() -> None:
    test = load_taskset("webapps", split="test", n=200)
    assert len(test) == 200 and len({t.id for t in test}) == 200
    assert all(t.metadata["seed"] >= TEST_SEED_START for t in test)  # type: ignore[index]
    train = load_taskset("webapps", n=24, difficulty=2)
    assert all(t.metadata["seed"] < TEST_SEED_START and t.metadata["difficulty"] == 2 for t in train)  # type: ignore[index]
    assert {t.metadata["family"] for t in train} == set(NAMES)  # type: ignore[index]
    assert [t.id for t in load_taskset("mail-reply", n=3, start=5)] == [
        f"mail-reply-{s}-d{d}" for s, d in ((5, 3), (6, 1), (7, 2))
    ]
    assert len(load_taskset("webapps")) == 100


def test_bad_options_get_one_clear_error() -> None:
    with pytest.raises(ValueError, match="has no option 'splt'; it takes split, n, difficulty, start"):
        load_taskset("webapps", splt="test")
    with pytest.raises(ValueError, match="split is 'train' or 'test'"):
        load_taskset("webapps", split="dev", n=1)
    with pytest.raises(ValueError, match="has difficulties"):
        load_taskset("mail-reply", n=1, difficulty=9)
    with pytest.raises(ValueError, match="options .* are for a registered task set"):
        load_taskset("no-such-set", n=3)
