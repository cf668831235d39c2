"""MiniWoB++ parity: hud/Browser-v0 vs the official ``miniwob`` env, task by task, seed by seed.

For each task (deterministic ones of the official registry, the flight sites left out: the
official env opens pages from ``file://``, where they do not run) and seed, both envs reset with
the same seed and are compared on:

- the instruction (``utterance`` vs ``info["prompt"]``) and the ``fields``;
- the number of DOM elements (``obs["dom_elements"]`` vs ``info["dom_elements"]``, both MiniWoB's
  ``core.getDOMInfo``; ``info["elements"]``, hud-gym's own element list, is counted too);
- the reward and ``done`` of the same element click (``CLICK_ELEMENT`` on the field ``target``'s
  element if there is one, else the first button, else the last leaf), raw rewards on both sides.

Not part of ``make test``: it needs Selenium and Debian's ``chromium-driver``
(``apt-get install chromium-driver``). Run: ``python -m benchmarks.miniwob_parity [N_TASKS]``
(default 48 tasks x 3 seeds).
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import Any

import gymnasium

import hud_gym
from hud_gym.controllers.browser.chromium import find_chromium
from hud_gym.suites.miniwob.tasks import FLIGHT_TASKS, NONDETERMINISTIC

SEEDS = (0, 1, 2)


def _official(task: str) -> gymnasium.Env:
    chromedriver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    if not os.path.exists(chromedriver):
        raise RuntimeError("the official MiniWoB++ env needs chromedriver: apt-get install chromium-driver")
    os.environ.setdefault("MINIWOB_CHROME_BINARY", str(find_chromium()))
    os.environ.setdefault("MINIWOB_CHROMEDRIVER", chromedriver)
    import miniwob  # noqa: F401  (registers the official ids)
    from miniwob.reward import get_raw_reward

    return gymnasium.make(f"miniwob/{task}-v1", reward_processor=get_raw_reward)


def _target(elements: list[dict[str, Any]], fields: list[tuple[str, str]]) -> tuple[str, str] | None:
    """``(tag, text)`` of the element both envs click."""
    target = dict(fields).get("target")
    leaves = [e for e in elements if e["text"]]
    for wanted in (
        lambda e: target is not None and e["text"] == target,
        lambda e: e["tag"] == "button",
        lambda e: True,
    ):
        found = [e for e in leaves if wanted(e)]
        if found:
            return found[0]["tag"], found[0]["text"]
    return None


def _ref(elements: list[dict[str, Any]], key: tuple[str, str]) -> int | None:
    return next((int(e["ref"]) for e in elements if (e["tag"], e["text"]) == key), None)


def compare(task: str, ours: gymnasium.Env) -> list[dict[str, Any]]:
    """The rows of ``task``, one per seed."""
    from miniwob.action import ActionTypes

    official = _official(task)
    rows = []
    try:
        for seed in SEEDS:
            obs, _ = official.reset(seed=seed)
            _, info = ours.reset(seed=seed, options={"task": f"miniwob/{task}"})
            official_fields = [tuple(f) for f in obs["fields"]]
            row: dict[str, Any] = {
                "task": task,
                "seed": seed,
                "utterance": obs["utterance"] == info["prompt"],
                "fields": official_fields == [tuple(f) for f in info["fields"]],
                "official_elements": len(obs["dom_elements"]),
                "our_dom_elements": len(info["dom_elements"]),
                "our_elements": len(info["elements"]),
            }
            key = _target(list(obs["dom_elements"]), official_fields)
            official_ref = _ref(list(obs["dom_elements"]), key) if key else None
            our_ref = _ref(info["dom_elements"], key) if key else None
            if official_ref is not None and our_ref is not None:
                action = official.unwrapped.create_action(ActionTypes.CLICK_ELEMENT, ref=official_ref)
                _, official_reward, official_done, _, _ = official.step(action)
                _, our_reward, our_done, _, _ = ours.step(
                    hud_gym.CustomAction(action="click_element", args={"ref": our_ref})
                )
                row["reward"] = (official_reward, bool(official_done)) == (our_reward, bool(our_done))
                row["rewards"] = (official_reward, our_reward)
            rows.append(row)
    finally:
        official.close()
    return rows


def main(n_tasks: int = 48) -> None:
    """Print one line per task/seed that differs, then the totals."""
    import miniwob  # noqa: F401

    names = sorted(
        name.removeprefix("miniwob/").removesuffix("-v1") for name in gymnasium.registry if name.startswith("miniwob/")
    )
    tasks = [n for n in names if n not in NONDETERMINISTIC and n not in FLIGHT_TASKS][:n_tasks]
    ours = gymnasium.make("hud/Browser-v0", task=f"miniwob/{tasks[0]}", elements=True, screen_size=(500, 320))
    rows: list[dict[str, Any]] = []
    try:
        for task in tasks:
            rows.extend(compare(task, ours))
    finally:
        ours.close()
    for row in rows:
        same_count = row["official_elements"] == row["our_dom_elements"]
        if not (row["utterance"] and row["fields"] and same_count and row.get("reward", True)):
            print("differs:", row)
    n = len(rows)
    clicked = [r for r in rows if "reward" in r]
    print(f"{len(tasks)} tasks x {len(SEEDS)} seeds = {n} instances")
    print(f"instruction equal:       {sum(r['utterance'] for r in rows)}/{n}")
    print(f"fields equal:            {sum(r['fields'] for r in rows)}/{n}")
    print(f"DOM element count equal: {sum(r['official_elements'] == r['our_dom_elements'] for r in rows)}/{n}")
    mean = sum(r["official_elements"] for r in rows) / n
    print(
        f"mean elements: official dom_elements {mean:.1f}, ours dom_elements "
        f"{sum(r['our_dom_elements'] for r in rows) / n:.1f}, ours elements {sum(r['our_elements'] for r in rows) / n:.1f}"
    )
    print(f"same click, same reward: {sum(r['reward'] for r in clicked)}/{len(clicked)}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 48)
