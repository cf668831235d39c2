"""The random floor: :class:`~hud_gym.agents.RandomAgent`'s success rate per bundled task set.

A task's floor is the share of its episodes the random agent solves (reward >= 1); a task set's
is the mean over its tasks. Episodes are capped at :data:`MAX_STEPS` steps. Each episode ``e`` of task ``i`` runs with seed ``SEED + 1000 * e + i``
and the agent's seed ``SEED``, so the table is reproducible. Runs are stored in a temporary store.

Run: ``python -m benchmarks.random_floor [EPISODES] [TASKSET ...]`` (default 8 episodes, the
MiniWoB++ sample, qa-basic and desktop-basic).
"""

from __future__ import annotations

import sys
import tempfile
from collections import defaultdict

from hud_gym.agents import RandomAgent
from hud_gym.jobs import run_job
from hud_gym.task import TaskSet
from hud_gym.tasksets import load_taskset

SEED = 0
MAX_STEPS = 10
"""Steps per episode (the env's own limit is 50 for the browser and the desktop, 20 for QA)."""
MINIWOB_SAMPLE = (
    "click-test",
    "click-test-2",
    "click-button",
    "click-link",
    "click-dialog",
    "click-tab",
    "focus-text",
    "enter-text",
)
"""The MiniWoB++ tasks measured (the whole set takes hours on a shared machine)."""

TASKSETS: dict[str, tuple[str, ...] | None] = {"miniwob": MINIWOB_SAMPLE, "qa-basic": None, "desktop-basic": None}


def floor(name: str, episodes: int, task_ids: tuple[str, ...] | None = None) -> dict[str, float]:
    """Success rate per task of ``name`` (the ``task_ids`` only, when given) over ``episodes``."""
    taskset = load_taskset(name)
    tasks = [t for t in taskset if task_ids is None or t.id in task_ids]
    solved: dict[str, int] = defaultdict(int)
    with tempfile.TemporaryDirectory() as home:
        for episode in range(episodes):
            job = run_job(
                RandomAgent(seed=SEED),
                TaskSet(tasks=tasks, id=name),
                f"random floor {name} #{episode}",
                max_concurrent=2,
                seed=SEED + 1000 * episode,
                max_steps=MAX_STEPS,
                home=home,
            )
            for trajectory in job.load_trajectories():
                solved[str(trajectory.task_id)] += int((trajectory.reward or 0.0) >= 1.0)
    return {str(t.id): solved[str(t.id)] / episodes for t in tasks}


def main(argv: list[str]) -> None:
    episodes = int(argv[0]) if argv else 8
    names = argv[1:] or list(TASKSETS)
    print(f"random floor: {episodes} episodes per task, at most {MAX_STEPS} steps each, seed {SEED}")
    print("| task set | tasks | floor (mean success) | best task |")
    print("|---|---:|---:|---|")
    for name in names:
        rates = floor(name, episodes, TASKSETS.get(name))
        best = max(rates, key=lambda k: rates[k])
        mean = sum(rates.values()) / len(rates)
        print(f"| {name} | {len(rates)} | {mean:.1%} | {best} {rates[best]:.0%} |", flush=True)
        for task_id, rate in rates.items():
            print(f"    {task_id}: {rate:.0%}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
