"""``make demo``: a MiniWoB++ job in a real headless Chromium, then (``qa``) the QA task set.

``python -m hud_gym.demo`` runs 12 MiniWoB++ tasks x 3 seeds in ``hud/Browser-v0`` with the
built-in element-aware scripted agent (it sees the instruction and ``info["elements"]`` and acts
with CLA clicks and typing), next to a random agent over the action space as a baseline, and
prints per-task rewards. Two tasks need skills the scripted agent lacks (a drag, a slider), so the
table shows failures too. ``python -m hud_gym.demo qa`` runs the bundled QA task set.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import gymnasium

import hud_gym  # noqa: F401  (registers the gym ids)
from hud_gym.actions import CLAAction, PressAction, ResponseAction, TypeAction
from hud_gym.agents import MiniWoBScriptedAgent, RandomAgent
from hud_gym.spaces import ActionSpaceConfig
from hud_gym.task import Task
from hud_gym.tasksets import load_taskset

MINIWOB_DEMO_TASKS = (
    "click-test", "click-test-2", "click-button", "click-link", "focus-text", "enter-text",
    "enter-password", "login-user", "click-checkboxes", "click-option", "drag-box", "use-slider",
)
SEEDS = (0, 1, 2)
MAX_STEPS = 5
# A compact action space for the random baseline: short texts, waits, patterns and drags.
DEMO_ACTION_SPACE = ActionSpaceConfig(max_text_length=16, max_keys=2, max_hold_keys=1, max_pattern=1,
                                      max_delay_ms=200, max_drag_points=4, max_wait_ms=200, max_args_length=64)


def run_episode(env: gymnasium.Env, agent: Any, task: str, seed: int) -> tuple[float, int]:
    """One episode; returns (final reward, steps)."""
    agent.reset()
    observation, info = env.reset(seed=seed, options={"task": f"miniwob/{task}"})
    for step in range(1, MAX_STEPS + 1):
        observation, reward, terminated, truncated, info = env.step(agent.act(observation, info))
        if terminated or truncated:
            return float(reward), step
    return 0.0, MAX_STEPS


def miniwob_demo() -> int:
    """Run the MiniWoB++ job and print the table."""
    from hud_gym.controllers.browser.miniwob import MINIWOB_TASK_AREA

    env = gymnasium.make("hud/Browser-v0", elements=True, observation_crop=MINIWOB_TASK_AREA,
                         screen_size=(500, 320), max_steps=MAX_STEPS, action_space_config=DEMO_ACTION_SPACE)
    scripted = MiniWoBScriptedAgent()
    random_agent = RandomAgent(env.action_space, env.unwrapped.action_space_config, seed=0)
    print(f"hud-gym demo: {len(MINIWOB_DEMO_TASKS)} MiniWoB++ tasks x {len(SEEDS)} seeds in hud/Browser-v0 "
          f"(headless Chromium, 160x210 observations)\n")
    print(f"{'task':<18} {'scripted':>8} {'random':>7} {'steps':>5} {'ms/episode':>10}")
    totals = {"scripted": 0.0, "random": 0.0}
    started = time.perf_counter()
    episodes = 0
    try:
        for task in MINIWOB_DEMO_TASKS:
            rewards = {"scripted": [], "random": []}
            steps = 0
            t0 = time.perf_counter()
            for seed in SEEDS:
                reward, n = run_episode(env, scripted, task, seed)
                rewards["scripted"].append(reward)
                steps += n
                rewards["random"].append(run_episode(env, random_agent, task, seed)[0])
                episodes += 2
            per_episode_ms = (time.perf_counter() - t0) * 1000 / (2 * len(SEEDS))
            means = {k: sum(v) / len(v) for k, v in rewards.items()}
            for k in totals:
                totals[k] += means[k]
            print(f"{task:<18} {means['scripted']:>8.2f} {means['random']:>7.2f} {steps / len(SEEDS):>5.1f} {per_episode_ms:>10.0f}")
    finally:
        env.close()
    n = len(MINIWOB_DEMO_TASKS)
    print(f"\nmean reward (MiniWoB raw, -1..1): scripted {totals['scripted'] / n:.3f}, random {totals['random'] / n:.3f}"
          f" — {episodes} episodes in {time.perf_counter() - started:.1f} s")
    return 0


QA_SCRIPTED_ANSWERS: dict[str, str] = {
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


def qa_actions(task: Task, index: int) -> list[CLAAction]:
    """Type the known answer then press enter (even tasks), or send it as a response (odd)."""
    answer = QA_SCRIPTED_ANSWERS.get(task.id or "", "I don't know")
    if index % 2 == 0:
        return [TypeAction(text=answer), PressAction(keys=["enter"])]
    return [ResponseAction(text=answer)]


def qa_demo(taskset_name: str = "qa-basic") -> int:
    """Run every QA task once with scripted answers and print a table of rewards."""
    taskset = load_taskset(taskset_name)
    env = gymnasium.make("hud/QA-v0")
    print(f"hud-gym demo: {len(taskset)} tasks from '{taskset_name}' in hud/QA-v0 with a scripted agent\n")
    print(f"{'task':<20} {'reward':>6}  {'ms':>6}  answer -> grade")
    total = 0.0
    for index, task in enumerate(taskset):
        t0 = time.perf_counter()
        env.reset(seed=index, options={"task": task})
        _, reward, _, _, info = env.step(qa_actions(task, index))
        grade = info["grade"]
        total += reward
        detail = f"{env.unwrapped.final_response!r} -> {grade.content if grade else info['status']}"
        print(f"{task.id:<20} {reward:>6.2f}  {(time.perf_counter() - t0) * 1000:>6.1f}  {detail}")
    env.close()
    print(f"\nmean reward {total / len(taskset):.3f} over {len(taskset)} tasks")
    return 0


def main(argv: list[str]) -> int:
    """``demo`` (MiniWoB++ in the browser) or ``demo qa [taskset]``."""
    if argv and argv[0] == "qa":
        return qa_demo(*argv[1:2])
    return miniwob_demo()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
