"""RLlib's PPO (new API stack, the real ``ray.rllib``) on hud-gym with no glue: the ``"hud_gym:hud/..."``
id (a fresh env-runner process imports hud-gym through it), ``gym_env_vectorize_mode=
"vector_entry_point"`` and the flat form chosen in ``env_config`` (image observations as floats,
a discrete click/type vocabulary). Two iterations each: QA in the local env runner, MiniWoB's
click-test in real Chromium in one remote env runner.

RLlib 2.60 runs here with gymnasium 1.4 (``ray[rllib]`` pins gymnasium 1.2.x; the train extra
installs RLlib's own dependencies without that pin).
"""

from __future__ import annotations

import math
from typing import Any

import pytest

pytest.importorskip("ray.rllib")
pytest.importorskip("torch")

FLAT = {"observation": "image", "normalize": True, "observation_size": (42, 42), "action_mode": "discrete"}


@pytest.fixture(scope="module")
def ray_session() -> Any:
    import ray
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the local learner: one thread is 2-3x faster on 2 shared cores
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()
    torch.set_num_threads(threads)


def train_ppo(env_config: dict[str, Any], *, remote_runners: int, iterations: int = 2) -> list[dict[str, Any]]:
    from ray.rllib.algorithms.ppo import PPOConfig

    config = (
        PPOConfig()
        .environment(
            "hud_gym:hud/QA-v0" if "taskset" in env_config else "hud_gym:hud/Browser-v0", env_config=env_config
        )
        .env_runners(
            num_env_runners=remote_runners,
            num_envs_per_env_runner=2,
            gym_env_vectorize_mode="vector_entry_point",
            rollout_fragment_length=16,
        )
        .training(train_batch_size_per_learner=32, minibatch_size=16, num_epochs=1)
        .debugging(seed=0)
    )
    algo = config.build_algo()
    try:
        return [algo.train() for _ in range(iterations)]
    finally:
        algo.stop()


def check(results: list[dict[str, Any]], rewards: set[float]) -> None:
    assert len(results) == 2
    sampled = [r["env_runners"]["num_env_steps_sampled_lifetime"] for r in results]
    assert sampled[0] >= 32 and sampled[1] >= sampled[0] + 32
    learner = results[-1]["learners"]["default_policy"]
    assert math.isfinite(learner["total_loss"])
    returns = [r["env_runners"].get("episode_return_mean") for r in results]
    assert any(value is not None for value in returns)
    for value in returns:
        assert value is None or (min(rewards) <= value <= max(rewards)), returns


# The local env runner is run by tests/test_trainer_examples.py (examples/rllib_ppo.py --runners 0).


@pytest.mark.timeout(300)
def test_ppo_on_miniwob_in_a_remote_env_runner(ray_session: Any) -> None:
    pytest.importorskip("miniwob")
    from hud_gym.controllers.browser.chromium import ChromiumNotFoundError, find_chromium

    try:
        find_chromium()
    except ChromiumNotFoundError as exc:
        pytest.skip(str(exc))
    config = {
        **FLAT,
        "task": "miniwob/click-test",
        "screen_size": (500, 320),
        "observation_crop": (0, 50, 160, 160),
        "grid": (5, 5),
        "keys": (),
        "texts": (),
        "max_steps": 1,
    }
    # The remote runner is a fresh process: it finds hud/Browser-v0 only through "hud_gym:".
    check(train_ppo(config, remote_runners=1), {0.0, 1.0})
