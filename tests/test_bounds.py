"""Amplification (issue 23, item 11): every string an agent or a task controls is bounded before
it is read, stored or shown (:mod:`hud_gym.bounds`)."""

from __future__ import annotations

import textwrap

import gymnasium
import pytest

import hud_gym  # noqa: F401  (registers the gyms)
from hud_gym.actions import ResponseAction
from hud_gym.bounds import TRUNCATED_KEY, bound, bound_info, clip, clip_bytes, sanitize
from hud_gym.task import Task


def test_clip_and_bound() -> None:
    assert clip("abc", 3) == clip("abc", 3) and not clip("abc", 3).truncated
    cut = clip("x" * 10_000, 100)
    assert cut.truncated and cut.length == 10_000 and cut.text.startswith("x" * 100) and len(cut.text) < 140
    assert sanitize("a\ud800b") == "a\ufffdb"
    assert clip_bytes(b"\xff" + b"y" * 20, 10).truncated
    info = bound_info({"windows": ["t" * 5_000_000] * 3, "n": 1, "deep": [[[[1]]]]}, max_string=1024)
    assert all(len(title) < 1100 for title in info["windows"]) and info["n"] == 1
    assert info[TRUNCATED_KEY] == ["windows[0]", "windows[1]", "windows[2]"]
    many, cut_paths = bound(list(range(5000)), max_items=10)
    assert many == list(range(10)) and cut_paths == ["[10:5000]"]
    total, _ = bound(["y" * 1000] * 1000, max_total=10_000)
    assert sum(len(s) for s in total) < 20_000


@pytest.mark.timeout(120)
def test_a_long_prompt_is_rendered_in_linear_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # The QA page wrapped the whole prompt (and answer) with textwrap, quadratic in a long word:
    # a 24 MB prompt took 116 s. Only what can show on the page is wrapped now.
    wrapped: list[int] = []
    real_wrap = textwrap.wrap

    def counting_wrap(text: str, *args: object, **kwargs: object) -> list[str]:
        wrapped.append(len(text))
        return real_wrap(text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(textwrap, "wrap", counting_wrap)
    env = gymnasium.make("hud/QA-v0", task=Task(prompt="x" * 1_000_000, target="4"))
    try:
        observation, _ = env.reset()
        assert observation["text"].startswith("xxx")
        env.step({"type": "type", "text": "y" * 500_000})
        _, reward, *_ = env.step(ResponseAction(text="4"))
        assert reward == 1.0
    finally:
        env.close()
    assert wrapped and sum(wrapped) < 64 * 1024, f"wrapped {sum(wrapped):,} characters"
