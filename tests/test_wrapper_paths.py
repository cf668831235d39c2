"""The flat ``hud_gym.wrappers.*`` module paths of earlier versions still import the same objects
as the grouped modules (``vector/``, ``rollout/``, ``integrations/``) they moved to."""

from __future__ import annotations

import importlib

import gymnasium
import pytest

import hud_gym  # noqa: F401  (registers the gym ids)

pytestmark = pytest.mark.timeout(120)

# old module -> (its new module, the old module's __all__, its other public names)
MOVED: dict[str, tuple[str, list[str], list[str]]] = {
    "grpo": (
        "rollout.grpo",
        ["Policy", "PolicyOutput", "group_advantages", "rollout", "rollout_group", "rollout_groups"],
        [],
    ),
    "pool": ("rollout.pool", ["EnvPool"], []),
    "placement": ("rollout.placement", ["controller_kwargs", "spreads_controllers"], []),
    "vector_batching": (
        "vector.batching",
        ["StepResult", "batch_rows", "reset_indices", "reset_seeds", "send_ids", "unbatch_actions"],
        [],
    ),
    "sb3_actions": ("integrations.sb3_actions", ["ActionMapper", "SB3ActionWrapper"], ["DEFAULT_KEYS", "Mode"]),
    "sb3_observations": ("integrations.sb3_observations", ["ObservationMapper", "SB3ObservationWrapper"], ["TextMode"]),
    "sb3_vec_env": ("integrations.sb3_vec_env", ["HudSB3VecEnv", "to_sb3_vec_env", "unbatch_infos"], ["logger"]),
    # The actor helpers of the old ray_vector are in integrations.ray_actors now (tested below).
    "ray_vector": ("integrations.ray_vector", ["RayVectorEnv"], []),
    "ray_pool": ("integrations.ray_pool", ["RayEnvPool", "RayEnvProxy"], []),
    "trl": ("integrations.trl", ["trl_environment_factory"], []),
    "verifiers": ("integrations.verifiers", ["to_rollout_output", "verifiers_group_rollout"], []),
}
RAY_ACTORS_ALL = ["DEFAULT_ACTOR_OPTIONS", "EnvWorker", "GymEnvMaker", "ensure_ray", "import_ray", "writable"]
RAY_ACTORS_OTHERS = ["CLOSE_TIMEOUT_S", "RAY_INSTALL_HINT", "close_actors", "failure_message", "remote_worker"]


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_module_path_imports_the_same_objects(old: str) -> None:
    new, exported, others = MOVED[old]
    old_module = importlib.import_module(f"hud_gym.wrappers.{old}")
    new_module = importlib.import_module(f"hud_gym.wrappers.{new}")
    assert f"hud_gym.wrappers.{new}" in old_module.__doc__.splitlines()[0]
    for name in exported + others:
        assert getattr(old_module, name) is getattr(new_module, name), name
    # A star import gives what it gave before.
    extra = RAY_ACTORS_ALL if old == "ray_vector" else []
    assert sorted(old_module.__all__) == sorted(exported + extra)


def test_the_old_ray_vector_path_still_has_the_actor_helpers() -> None:
    old = importlib.import_module("hud_gym.wrappers.ray_vector")
    actors = importlib.import_module("hud_gym.wrappers.integrations.ray_actors")
    for name in RAY_ACTORS_ALL + RAY_ACTORS_OTHERS:
        assert getattr(old, name) is getattr(actors, name), name


def test_the_vector_package_is_the_old_vector_module() -> None:
    from hud_gym.wrappers.vector import (
        HudVectorEnv,
        browser_vector_env,
        entry_points,
        local,
        qa_vector_env,
        ubuntu_vector_env,
    )

    assert HudVectorEnv is local.HudVectorEnv
    assert (qa_vector_env, browser_vector_env, ubuntu_vector_env) == (
        entry_points.qa,
        entry_points.browser,
        entry_points.ubuntu,
    )
    # The gym ids' vector entry points name this path, and load the same creators.
    for gym_id, creator in (
        ("hud/QA-v0", qa_vector_env),
        ("hud/Browser-v0", browser_vector_env),
        ("hud/Ubuntu-v0", ubuntu_vector_env),
    ):
        entry_point = gymnasium.spec(gym_id).vector_entry_point
        assert entry_point.startswith("hud_gym.wrappers.vector.entry_points:")
        module, name = entry_point.split(":")
        assert getattr(importlib.import_module(module), name) is creator


def test_the_group_packages_export_their_main_names() -> None:
    from hud_gym.wrappers import rollout
    from hud_gym.wrappers.rollout import grpo, pool

    assert rollout.rollout_group is grpo.rollout_group and rollout.EnvPool is pool.EnvPool
    assert rollout.group_advantages([1.0, 0.0]).tolist() == pytest.approx([1.0, -1.0], abs=1e-5)
