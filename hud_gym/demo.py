"""``make demo``: run the bundled QA task set with a scripted agent and print per-task rewards.

The scripted agent knows the answers of ``qa-basic`` (a table below), types them through CLA
actions (``type`` + ``enter``, or a ``response``), and answers two tasks wrongly on purpose so the
rewards show both outcomes.

Run with ``python -m hud_gym.demo [taskset]``.
"""

from __future__ import annotations

import sys
import time

import gymnasium

import hud_gym  # noqa: F401  (registers the gym ids)
from hud_gym.actions import CLAAction, PressAction, ResponseAction, TypeAction
from hud_gym.task import Task
from hud_gym.tasksets import load_taskset

SCRIPTED_ANSWERS: dict[str, str] = {
    "capital-france": "The capital of France is Paris.",
    "capital-japan": "Tokyo",
    "largest-planet": "Jupiter",
    "primary-colors": "Red, green and blue",
    "iso-date": "1969-07-20",
    "hex-color": "#FFFFFF",
    "spell-necessary": "neccessary",
    "fruits": "banana, apple, strawberry",
    "pi-digits": "3.14",
    "sqrt-144": "12",
    "speed-of-light": "about 299,792 km/s",
    "boiling-point": "100 degrees",
    "mc-noble-gas": "B",
    "mc-triangle": "Three",
    "mc-ocean": "A",  # wrong on purpose
    "opposite-hot": "cold",
    "binary-ten": "1010",
    "shakespeare": "William Shakespeare",
    "h2o": "H2O",
    "days-in-leap-year": "365",  # wrong on purpose
    "passage-color": "green",
    "multi-check": "The blue whale, which lives in the ocean.",
    "unicode-greeting": "ありがとう",
}


def scripted_actions(task: Task, index: int) -> list[CLAAction]:
    """Type the known answer then press enter (even tasks), or send it as a response (odd)."""
    answer = SCRIPTED_ANSWERS.get(task.id or "", "I don't know")
    if index % 2 == 0:
        return [TypeAction(text=answer), PressAction(keys=["enter"])]
    return [ResponseAction(text=answer)]


def main(taskset_name: str = "qa-basic") -> int:
    """Run every task once and print a table of rewards."""
    taskset = load_taskset(taskset_name)
    env = gymnasium.make("hud/QA-v0")
    print(f"hud-gym demo: {len(taskset)} tasks from '{taskset_name}' in hud/QA-v0 with a scripted agent\n")
    print(f"{'task':<20} {'reward':>6}  {'steps':>5}  {'ms':>6}  answer / grade")
    total = 0.0
    started = time.perf_counter()
    for index, task in enumerate(taskset):
        t0 = time.perf_counter()
        env.reset(seed=index, options={"task": task})
        _, reward, terminated, truncated, info = env.step(scripted_actions(task, index))
        grade = info["grade"]
        total += reward
        detail = f"{env.unwrapped.final_response!r} -> {grade.content if grade else info['status']}"
        print(f"{task.id:<20} {reward:>6.2f}  {info['step']:>5}  {(time.perf_counter() - t0) * 1000:>6.1f}  {detail}")
    env.close()
    elapsed = time.perf_counter() - started
    print(f"\nmean reward {total / len(taskset):.3f} over {len(taskset)} tasks in {elapsed:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2]))
