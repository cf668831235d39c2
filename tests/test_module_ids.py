"""A process that never imported hud-gym finds the ids through the ``"hud_gym:hud/..."`` form.

Gymnasium 1.x reads no ``gymnasium.envs`` entry points, so ``gymnasium.make("hud/QA-v0")`` works
only in a process that ran ``import hud_gym``. Gymnasium's ``"module:id"`` form imports the module
first: it is the id to hand to anything that makes the env in another process (a Ray worker,
RLlib's env runners, a spawned ``AsyncVectorEnv``).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)


@pytest.mark.timeout(150)
def test_plain_id_needs_the_import() -> None:
    result = _run("""
        import gymnasium
        try:
            gymnasium.make("hud/QA-v0")
        except gymnasium.error.NamespaceNotFound as exc:
            print("refused:", exc)
    """)
    assert "refused:" in result.stdout, result.stderr


@pytest.mark.timeout(150)
def test_module_id_imports_hud_gym_first() -> None:
    result = _run("""
        import sys, gymnasium
        assert "hud_gym" not in sys.modules
        env = gymnasium.make("hud_gym:hud/QA-v0", taskset="qa-basic")
        obs, info = env.reset(seed=0)
        print("task", info["task_id"], "text", obs["text"][:20].replace(chr(10), " "))
        env.close()
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("task "), result.stdout


@pytest.mark.timeout(200)
def test_spawned_async_vector_env_with_module_id() -> None:
    result = _run("""
        import gymnasium
        from gymnasium.vector.utils import concatenate, create_empty_array
        from hud_gym import ActionSpaceConfig, ResponseAction, encode
        if __name__ == "__main__":
            envs = gymnasium.make_vec("hud_gym:hud/QA-v0", num_envs=2, vectorization_mode="async",
                                      vector_kwargs={"context": "spawn"}, task="qa-basic/capital-france")
            envs.reset(seed=0)
            space = envs.single_action_space
            action = encode(ResponseAction(text="Paris"), ActionSpaceConfig())
            _, rewards, terminated, _, _ = envs.step(concatenate(space, [action] * 2, create_empty_array(space, 2)))
            print("rewards", rewards.tolist(), terminated.tolist())
            envs.close()
    """)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "rewards [1.0, 1.0] [True, True]" in result.stdout, result.stdout
