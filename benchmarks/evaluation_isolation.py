"""What running evaluate functions off the event loop costs (issue 11, item 8).

Sync setup/evaluate functions no longer run on the shared loop thread: isolated ones (the
response evaluators) run in a persistent worker process that a timeout can kill, the others on a
thread pool. This measures ``response_includes`` called three ways, interleaved call by call
(200 inline, 200 on threads, 200 in the worker, 200 inline, ...), medians per block of ``--calls`` calls per way:

- inline: called on the loop, as before (cannot be timed out);
- thread: on the task-function thread pool (``run_in_executor``);
- worker: in the evaluation worker process (one socket round trip, two pickles).

CPU is the CPU time of this process and of the worker processes together, per call. Then whole
``hud/QA-v0`` episodes (reset + one ``ResponseAction`` step, graded) with the task's evaluator run
each way (inline: an ``async def`` twin of the evaluator), the ratio to inline within the run.

Run: ``python -m benchmarks.evaluation_isolation [--calls N] [--episodes N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

import psutil

import hud_gym
from hud_gym import ResponseAction, Task
from hud_gym.evaluation import FunctionContext, evaluate_function
from hud_gym.evaluation import calls as calls_module
from hud_gym.evaluation.calls import call_function
from hud_gym.evaluation.response import response_includes
from hud_gym.evaluation.worker_pool import get_worker_pool

WAYS = ("inline", "thread", "worker")


@evaluate_function(name="bench_response_includes_on_the_loop")
async def _on_the_loop(ctx: FunctionContext, texts: str) -> Any:
    """``response_includes`` run on the event loop (what every sync evaluator did before)."""
    return response_includes(ctx, texts)


def _cpu() -> float:
    me = psutil.Process()
    total = sum(me.cpu_times()[:2])
    for child in me.children(recursive=True):
        try:
            total += sum(child.cpu_times()[:2])
        except psutil.Error:
            pass
    return total


async def _one_call(way: str, ctx: FunctionContext) -> Any:
    if way == "inline":
        return response_includes(ctx, "Paris")
    return await call_function(response_includes, ctx, ("Paris",), isolated=way == "worker")


async def _calls(n: int) -> dict[str, tuple[float, float]]:
    ctx = FunctionContext(
        gym="qa", task=Task(prompt="Capital of France?", target="Paris"), final_response="It is Paris."
    )
    assert get_worker_pool().wait_ready(60)  # the worker's start-up is not measured
    for way in WAYS:  # warm up
        for _ in range(20):
            await _one_call(way, ctx)
    walls: dict[str, list[float]] = {w: [] for w in WAYS}
    cpus: dict[str, list[float]] = {w: [] for w in WAYS}
    for _ in range(n // 200):
        for way in WAYS:
            cpu, started = _cpu(), time.perf_counter()
            for _ in range(200):
                await _one_call(way, ctx)
            walls[way].append((time.perf_counter() - started) / 200)
            cpus[way].append((_cpu() - cpu) / 200)
    return {w: (statistics.median(walls[w]), statistics.median(cpus[w])) for w in WAYS}


def _episodes(n: int) -> dict[str, float]:
    tasks = {
        "inline": Task(
            id="inline", prompt="Capital of France?", evaluate=("bench_response_includes_on_the_loop", "Paris")
        ),
        "thread": Task(id="thread", prompt="Capital of France?", evaluate=("response_includes", "Paris")),
        "worker": Task(id="worker", prompt="Capital of France?", evaluate=("response_includes", "Paris")),
    }
    env = hud_gym.make("hud/QA-v0", observation_size=(320, 180))
    workers = calls_module.MAX_WORKERS

    def episode(way: str) -> None:
        calls_module.MAX_WORKERS = workers if way == "worker" else 0  # 0: isolated functions on threads
        env.reset(seed=0, options={"task": tasks[way]})
        _, reward, _, _, info = env.step(ResponseAction(text="Paris"))
        assert reward == 1.0, info

    try:
        for way in WAYS:
            episode(way)
        times: dict[str, list[float]] = {w: [] for w in WAYS}
        for _ in range(n):
            for way in WAYS:
                started = time.perf_counter()
                episode(way)
                times[way].append(time.perf_counter() - started)
    finally:
        calls_module.MAX_WORKERS = workers
        env.close()
    return {w: statistics.median(times[w]) for w in WAYS}


def main(argv: list[str] | None = None) -> None:
    """Print the per-call and per-episode tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=6000)
    parser.add_argument("--episodes", type=int, default=150)
    args = parser.parse_args(argv)
    results = asyncio.run(_calls(args.calls))
    print("| way | wall us/call | CPU us/call (all processes) |\n|---|---:|---:|")
    for way, (wall, cpu) in results.items():
        print(f"| {way} | {wall * 1e6:.0f} | {cpu * 1e6:.0f} |")
    episodes = _episodes(args.episodes)
    print("\n| evaluator runs | QA episode ms | / inline |\n|---|---:|---:|")
    for way, seconds in episodes.items():
        print(f"| {way} | {seconds * 1e3:.2f} | {seconds / episodes['inline']:.2f} |")
    print(f"\nworker processes started: {get_worker_pool().started}")


if __name__ == "__main__":
    main()
