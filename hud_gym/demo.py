"""``make demo``: a MiniWoB++ job in batched Chromium envs, its analytics and an HTML report.

``python -m hud_gym.demo`` runs a demo subset of the bundled MiniWoB++ task set (ten tasks the
built-in scripted agent solves and two it cannot: a drag and a slider) three times each, as GRPO
groups of 3 sharing a seed, with up to 8 envs at once on one Chromium (:func:`hud_gym.run_job`). The
envs take the headed capture path where Xvfb is installed (Chromium on a private display, frames
grabbed through MIT-SHM: about a third of the CPU per step), else CDP screenshots. The
job is stored (``$HUD_GYM_HOME``, by default the per-user data dir); the demo prints its analytics,
writes the HTML report (:mod:`hud_gym.cli.report`) and prints the report's path. It is what
``hud-gym run miniwob --agent scripted --task ... --group-size 3 --seed 0 --report`` does.

``python -m hud_gym.demo qa [taskset]`` runs the bundled QA task set with scripted answers.
"""

from __future__ import annotations

import sys
import time

import gymnasium

import hud_gym  # noqa: F401  (registers the gym ids)
from hud_gym.actions import CLAAction, PressAction, ResponseAction, TypeAction
from hud_gym.rewards import graded_reward
from hud_gym.task import Task
from hud_gym.tasksets import load_taskset

MINIWOB_DEMO_TASKS = (
    "click-test",
    "click-test-2",
    "click-button",
    "click-link",
    "focus-text",
    "enter-text",
    "enter-password",
    "login-user",
    "click-checkboxes",
    "click-option",
    "drag-box",
    "use-slider",
)
GROUP_SIZE = 3
MAX_CONCURRENT = 8
MAX_STEPS = 3
SEED = 0
JOB_NAME = "demo: scripted agent on MiniWoB++"


def miniwob_demo() -> int:
    """Run the MiniWoB++ demo job, print its analytics, write its report; returns the exit code."""
    from hud_gym.cli.errors import CLIError
    from hud_gym.cli.report import write_report
    from hud_gym.cli.running import execute_run, plan_run
    from hud_gym.cli.tables import make_console, print_analytics
    from hud_gym.controllers.browser.chromium import (
        ChromiumNotFoundError,
        find_chromium,
    )
    from hud_gym.controllers.browser.headed import xvfb_available

    console = make_console()
    try:
        chromium = find_chromium()
        capture = "headed" if xvfb_available() else "cdp"  # the default is "cdp" (one shared browser)
        plan = plan_run("miniwob", "scripted", tasks=MINIWOB_DEMO_TASKS, env_kwargs={"capture": capture})
    except (ChromiumNotFoundError, CLIError) as exc:
        print(f"hud-gym demo: {exc}\n(run 'hud-gym doctor' to see what to install)", file=sys.stderr)
        return 1
    console.print(
        f"[bold]hud-gym demo[/]: {len(plan.taskset)} MiniWoB++ tasks x {GROUP_SIZE} runs (GRPO groups, "
        f"seed {SEED}+i) with the built-in scripted agent, {MAX_CONCURRENT} envs at once in hud/Browser-v0 "
        f"({chromium.name}, {capture} capture, 160x210 observations)"
    )
    started = time.perf_counter()
    job = execute_run(plan, name=JOB_NAME, envs=MAX_CONCURRENT, group_size=GROUP_SIZE, max_steps=MAX_STEPS, seed=SEED)
    elapsed = time.perf_counter() - started
    print_analytics(console, job.get_analytics(), job)
    report = write_report(job)
    console.print(f"{len(plan.taskset) * GROUP_SIZE} runs in {elapsed:.1f} s; job stored in {job.home}", markup=False)
    console.print(
        f"explore it: hud-gym jobs show {job.id[:8]} | hud-gym jobs export {job.id[:8]} --format video", markup=False
    )
    console.print(f"HTML report: {report}", markup=False)
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
    rewards: list[float] = []
    for index, task in enumerate(taskset):
        t0 = time.perf_counter()
        env.reset(seed=index, options={"task": task})
        _, reward, _, _, info = env.step(qa_actions(task, index))
        grade = info["grade"]
        graded = graded_reward(reward)  # None: not graded (info's status says why)
        shown = "—" if graded is None else f"{graded:.2f}"
        if graded is not None:
            rewards.append(graded)
        detail = f"{getattr(env.unwrapped, 'final_response', None)!r} -> {grade.content if grade else info['status']}"
        print(f"{task.id:<20} {shown:>6}  {(time.perf_counter() - t0) * 1000:>6.1f}  {detail}")
    env.close()
    failed = len(taskset) - len(rewards)
    mean = f"{sum(rewards) / len(rewards):.3f}" if rewards else "—"
    print(f"\nmean reward {mean} over {len(rewards)} graded tasks" + (f"; {failed} not graded" if failed else ""))
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    """``demo`` (MiniWoB++ in the browser) or ``demo qa [taskset]``."""
    if argv and argv[0] == "qa":
        return qa_demo(*argv[1:2])
    return miniwob_demo()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
