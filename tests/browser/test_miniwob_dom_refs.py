"""Issue 28, item 6: MiniWoB++'s DOM refs stay the episode's own when one env solves episode
after episode of ``click-checkboxes`` (its page kept across resets): no ref shared by two
elements, every parent a real element, the same table as a fresh env's for the same seed. Before
the fix, resets 2, 3, 5, 7, 9 and 13 of this run gave a ``div`` the ref of a checkbox kept from
the previous episode. Real Chromium."""

from __future__ import annotations

import collections
from typing import Any

import gymnasium
import pytest

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym.agents.miniwob_scripted import MiniWoBScriptedAgent

pytest.importorskip("miniwob")
pytestmark = pytest.mark.timeout(900)


def _table(info: dict[str, Any]) -> dict[int, tuple[str, int, str]]:
    return {e["ref"]: (e["tag"], e["parent"], e["text"]) for e in info["dom_elements"]}


def _make() -> gymnasium.Env:
    return gymnasium.make("hud/Browser-v0", task="miniwob/click-checkboxes", elements=True, reset_timeout=240.0)


def test_refs_stay_unique_across_solved_episodes() -> None:
    agent = MiniWoBScriptedAgent()
    env = _make()
    seen: dict[int, dict[int, tuple[str, int, str]]] = {}
    try:
        for i in range(14):
            obs, info = env.reset(seed=100 + i)
            refs = [e["ref"] for e in info["dom_elements"]]
            shared = sorted(ref for ref, n in collections.Counter(refs).items() if n > 1)
            assert not shared, f"reset {i}: refs {shared} name two elements each"
            assert {e["parent"] for e in info["dom_elements"]} <= {0, *refs}, f"reset {i}: a parent that is not shown"
            seen[i] = _table(info)
            _, reward, terminated, _, _ = env.step(agent.act(obs, info))
            assert terminated and reward == 1.0, f"episode {i} not solved"
    finally:
        env.close()
    fresh = _make()
    try:
        for i in (2, 13):
            _, info = fresh.reset(seed=100 + i)
            assert _table(info) == seen[i], f"reset {i}'s refs are not a fresh page's"
    finally:
        fresh.close()
