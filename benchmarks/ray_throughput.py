"""Ray-backed envs on hud/QA-v0 (1280x720 screenshots), against the in-process baselines.

1. 4 sub-envs: ``RayVectorEnv`` (an actor each) vs ``HudVectorEnv`` (one process): batched steps/s.
2. ``RayVectorEnv.send``/``recv(min_batch=N-1)`` with one env made 10x slower vs without it.
3. ``rollout_group`` G=4 from a warm ``RayEnvPool`` vs from a warm ``EnvPool``: wall time.

Starts a local cluster (``ray.init(num_cpus=2)``) unless Ray is already initialised.
Run: ``python -m benchmarks.ray_throughput``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import hud_gym
from hud_gym import ResponseAction, Task, TypeAction, WaitAction
from hud_gym.wrappers.rollout.grpo import rollout_group
from hud_gym.wrappers.rollout.pool import EnvPool
from hud_gym.wrappers.vector import qa_vector_env

N = 4
STEPS = 30
TASK = Task(id="france", prompt="Capital of France?", target="Paris", gym="qa")
STEP = TypeAction(text="a")


def _steps_per_second(envs: Any) -> float:
    envs.reset(seed=0)
    envs.step([STEP] * N)  # warm up
    started = time.perf_counter()
    for _ in range(STEPS):
        envs.step([STEP] * N)
    return N * STEPS / (time.perf_counter() - started)


def batched_steps() -> None:
    """Throughput of batched steps, Ray actors vs one process."""
    from hud_gym.wrappers.integrations.ray_vector import RayVectorEnv

    ours = RayVectorEnv("hud/QA-v0", num_envs=N, task=TASK, max_episode_steps=10_000)
    try:
        ray_rate = _steps_per_second(ours)
    finally:
        ours.close()
    local = qa_vector_env(num_envs=N, task=TASK, max_episode_steps=10_000)
    try:
        local_rate = _steps_per_second(local)
    finally:
        local.close()
    print(f"{N} QA envs, {STEPS} batched steps of 1280x720 observations")
    print(f"RayVectorEnv (an actor each) {ray_rate:8.1f} steps/s")
    print(f"HudVectorEnv (one process)   {local_rate:8.1f} steps/s")
    print(f"ratio {ray_rate / local_rate:.2f}x (Ray's cost: a task, a process hop and the object store per step)")


def _recv_rate(slow: bool, duration: float = 4.0) -> float:
    from hud_gym.wrappers.integrations.ray_vector import RayVectorEnv

    envs = RayVectorEnv("hud/QA-v0", num_envs=N, task=TASK, max_episode_steps=10_000)
    try:
        envs.reset(seed=0)
        envs.step([STEP] * N)  # warm up

        # A normal step here is ~20 ms: the slow env waits 10x that on each of its steps.
        def act(i: int) -> Any:
            return [WaitAction(time=200), STEP] if slow and i == 0 else STEP

        envs.send([act(i) for i in range(N)])
        done = 0
        started = time.perf_counter()
        while time.perf_counter() - started < duration:
            *_, infos = envs.recv(min_batch=N - 1)
            ids = infos["env_id"].tolist()
            done += len(ids)
            envs.send([act(i) for i in ids], env_ids=ids)
        elapsed = time.perf_counter() - started
        envs.recv()
        return done / elapsed
    finally:
        envs.close()


def slow_env_recv() -> None:
    """Throughput of recv(min_batch=N-1) with and without one 10x slower env."""
    fast = _recv_rate(slow=False)
    slow = _recv_rate(slow=True)
    print(
        f"\nRay send/recv(min_batch={N - 1}): {fast:.1f} env-steps/s without a slow env, {slow:.1f} with one "
        f"10x slower -> {slow / fast:.2f}x"
    )


def pooled_groups() -> None:
    """rollout_group G=N from a warm RayEnvPool vs a warm EnvPool."""
    from hud_gym.wrappers.integrations.ray_pool import RayEnvPool

    def policy(observation: dict, history: list, task: Task) -> Any:
        return TypeAction(text="Paris") if len(history) < 3 else ResponseAction(text="Paris")

    async def timed(pool: EnvPool) -> float:
        async with pool:
            await rollout_group(TASK, policy, N, seed=0, pool=pool)  # warm the envs
            started = time.perf_counter()
            for seed in range(1, 4):
                await rollout_group(TASK, policy, N, seed=seed, pool=pool)
            return (time.perf_counter() - started) / 3

    ray_s = asyncio.run(timed(RayEnvPool(size=N)))
    local_s = asyncio.run(timed(EnvPool(size=N)))
    print(
        f"\nrollout_group G={N}, 4 steps each, warm pool: RayEnvPool {ray_s * 1000:.0f} ms vs EnvPool "
        f"{local_s * 1000:.0f} ms -> {ray_s / local_s:.2f}x"
    )


def main() -> None:
    """Run the three measurements on a local cluster."""
    import ray

    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        hud_gym.register_envs()
        batched_steps()
        slow_env_recv()
        pooled_groups()
    finally:
        if started:
            ray.shutdown()


if __name__ == "__main__":
    main()
