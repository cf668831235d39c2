"""Gymnasium's own env and registration tests, adapted to hud-gym's envs.

Source: the Gymnasium repository (the suite of the installed 1.4.0): ``tests/envs/test_envs.py``
(``test_pickle_env``), ``tests/envs/registration/test_make.py`` (``test_max_episode_steps``) and
``tests/wrappers/test_time_aware_observation.py``. Assertions are Gymnasium's; what changes says
why in a comment. The step-limit tests use the counter test gym (``tests/counter_gym.py``): a
task graded only on its final step, so a step limit that loses the grade shows as a wrong reward.
"""

from __future__ import annotations

import pickle

import counter_gym  # noqa: F401  (registers test/Counter-v0)
import gymnasium
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.wrappers import TimeAwareObservation, TimeLimit

import hud_gym
from hud_gym import ClickAction, Point, Task

pytestmark = pytest.mark.timeout(120)

COUNT_TO_3 = Task(id="count-3", prompt="count to 3", gym="counter", setup=[("start_at", 0)], evaluate=[("count_is", 3)])
CLICK = ClickAction(point=Point(x=1, y=1))


def _without_timings(result: tuple) -> tuple:
    """A reset/step result without ``info["timings"]`` (wall-clock seconds differ between runs)."""
    *head, info = result
    return (*head, {k: v for k, v in info.items() if k != "timings"})


# ----------------------------------------------------------------- test_envs.py::test_pickle_env


@pytest.mark.parametrize("env_id", ["hud/QA-v0", "test/Counter-v0"])
def test_pickle_env(env_id: str) -> None:
    """test_pickle_env: a pickled env resets and steps as the original (its controller, loop and
    episode do not travel: the copy is made from the same arguments). Timings are left out of the
    comparison: they are wall-clock measurements."""
    kwargs = {"taskset": "qa-basic"} if env_id == "hud/QA-v0" else {"task": COUNT_TO_3}
    # the sampled action fits in the env's step_timeout (its action space follows it)
    env = gymnasium.make(env_id, **kwargs, step_timeout=4.0)
    action = env.action_space.sample()

    env_reset = env.reset(seed=123)
    env_step = env.step(action)

    pickled_env = pickle.loads(pickle.dumps(env))
    pickle_reset = pickled_env.reset(seed=123)
    pickle_step = pickled_env.step(action)

    assert data_equivalence(_without_timings(env_reset), _without_timings(pickle_reset))
    assert data_equivalence(_without_timings(env_step)[:4], _without_timings(pickle_step)[:4])
    env.close()
    pickled_env.close()


@pytest.mark.timeout(180)
def test_pickle_browser_env() -> None:
    """test_pickle_env on hud/Browser-v0 (real Chromium, a MiniWoB task): the browser is
    nondeterministic (Gymnasium compares only deterministic envs' observations), so the copy is
    checked for the same arguments, spec and seeded instance."""
    pytest.importorskip("miniwob")
    env = gymnasium.make("hud/Browser-v0", task="miniwob/click-button", max_episode_steps=7)
    _, info = env.reset(seed=5)
    pickled_env = pickle.loads(pickle.dumps(env))
    try:
        assert pickled_env.unwrapped.controller is None  # made anew, started at its first reset
        assert pickled_env.spec.max_episode_steps == env.spec.max_episode_steps == 7
        _, pickled_info = pickled_env.reset(seed=5)
        assert pickled_info["prompt"] == info["prompt"] and pickled_info["fields"] == info["fields"]
    finally:
        env.close()
        pickled_env.close()


# ----------------------------------------------------------------- test_make.py::test_max_episode_steps


def test_max_episode_steps() -> None:
    """test_max_episode_steps: ``make(max_episode_steps=N)`` sets the spec's limit and truncates at
    N. Our ids are registered without a limit (a registered one would make every env a
    TimeLimit that cannot grade), so the env's own spec states its limit; ``TimeLimit`` is there
    only when asked for, as Gymnasium's test expects."""
    env = gymnasium.make("test/Counter-v0")
    assert env.spec is not None and env.spec.max_episode_steps == 10  # the gym's limit (GymType)
    assert not isinstance(env, TimeLimit)
    env.close()

    env = gymnasium.make("test/Counter-v0", max_episode_steps=5)
    assert env.spec is not None and env.spec.max_episode_steps == 5
    assert isinstance(env, TimeLimit) and env.unwrapped.max_episode_steps == 5
    env.close()

    env = gymnasium.make("test/Counter-v0", max_episode_steps=-1)
    assert not isinstance(env, TimeLimit) and env.spec.max_episode_steps == 10
    env.close()


@pytest.mark.parametrize("how", ["gymnasium.make max_episode_steps", "max_steps", "make_vec"])
def test_time_limit_grades_the_final_step(how: str) -> None:
    """Issue 17, item 1: a task solved on the limit's last step scores 1, whichever way the limit
    is given (Gymnasium's TimeLimit alone would end the episode ungraded: a silent 0)."""
    if how == "make_vec":
        envs = gymnasium.make_vec("test/Counter-v0", num_envs=1, task=COUNT_TO_3, max_episode_steps=3)
        envs.reset(seed=0)
        for _ in range(2):
            assert envs.step([CLICK])[1][0] == 0.0
        _, rewards, terminations, truncations, _ = envs.step([CLICK])
        assert truncations[0] and not terminations[0] and rewards[0] == 1.0
        envs.close()
        return
    kwargs = {"max_episode_steps": 3} if how.startswith("gymnasium") else {"max_steps": 3}
    env = gymnasium.make("test/Counter-v0", task=COUNT_TO_3, **kwargs)
    env.reset(seed=0)
    for _ in range(2):
        _, reward, terminated, truncated, info = env.step(CLICK)
        assert (reward, terminated, truncated) == (0.0, False, False)
    _, reward, terminated, truncated, info = env.step(CLICK)
    assert truncated and not terminated
    assert reward == 1.0 and info["grade"].reward == 1.0
    env.close()


def test_lower_limit_wins() -> None:
    """``max_steps`` and ``max_episode_steps`` together: the lower one ends (and grades) the episode."""
    env = gymnasium.make("test/Counter-v0", task=COUNT_TO_3, max_steps=8, max_episode_steps=3)
    assert env.unwrapped.max_episode_steps == 3
    env.close()
    env = gymnasium.make("test/Counter-v0", task=COUNT_TO_3, max_steps=2, max_episode_steps=3)
    assert env.unwrapped.max_episode_steps == 2 and env.spec.max_episode_steps == 3  # the TimeLimit's own spec
    env.close()


# ----------------------------------------------------------------- TimeAwareObservation


def test_time_aware_observation_reads_the_spec() -> None:
    """Gymnasium's TimeAwareObservation needs ``env.spec.max_episode_steps`` (it refused our envs
    when the spec said ``None``)."""
    env = TimeAwareObservation(gymnasium.make("hud/QA-v0", taskset="qa-basic"), flatten=False)
    assert env.max_timesteps == 20
    obs, _ = env.reset(seed=0)
    assert obs["time"] == 0
    obs, *_ = env.step({"type": "type", "text": "x"})
    assert obs["time"] == 1
    env.close()


def test_hud_make_keeps_returning_the_env() -> None:
    """``hud_gym.make(..., max_episode_steps=N)`` still returns the env itself (``env.evaluate()``)."""
    env = hud_gym.make(COUNT_TO_3, max_episode_steps=4)
    assert not isinstance(env, gymnasium.Wrapper) and env.max_episode_steps == 4
    env.close()
