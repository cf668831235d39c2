"""Amplification (issue 23, item 11): every string an agent or a task controls is bounded before
it is read, stored or shown (:mod:`hud_gym.bounds`)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import gymnasium
import pytest

import hud_gym  # noqa: F401  (registers the gyms)
from hud_gym.actions import ResponseAction
from hud_gym.bounds import PROMPT_CHARS, TRUNCATED_KEY, bound, bound_info, clip, clip_bytes, sanitize
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


@pytest.mark.timeout(300)
def test_one_bad_task_is_a_failed_run_not_a_failed_job(tmp_path: Path) -> None:
    # A lone surrogate in one prompt aborted the whole job (PydanticSerializationError at 9 of 21).
    from hud_gym.jobs import run_job

    lines = [json.dumps({"id": f"t{i}", "prompt": "2+2?", "target": "4"}) for i in range(21)]
    lines[9] = '{"id": "t9", "prompt": "2+2? \\ud800", "target": "4", "metadata": {"k": "\\udc00"}}'
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("\n".join(lines) + "\n")

    def answer(observation: dict[str, Any], history: list[Any], task: Task) -> Any:
        return [ResponseAction(text="4 \ud83d")]  # an agent's reply with a lone surrogate too

    job = run_job(answer, str(tasks), "surrogates", max_concurrent=4, home=tmp_path / "home")
    assert job.status == "completed"
    runs = job.load_trajectories()
    assert len(runs) == 21 and all(run.reward == 1.0 for run in runs)
    bad = next(run for run in runs if run.task_id == "t9")
    assert bad.prompt == "2+2? \ufffd" and bad.final_response == "4 \ufffd"


@pytest.mark.timeout(300)
def test_huge_strings_are_bounded_in_the_store_and_the_ui(tmp_path: Path) -> None:
    from hud_gym.jobs import run_job
    from hud_gym.ui.data import StoreView

    def answer(observation: dict[str, Any], history: list[Any], task: Task) -> Any:
        return [ResponseAction(text="4" + "z" * 5_000_000)]

    task = Task(id="t" * 256, prompt="2+2?" + " p" * 400_000, target="4", metadata={"blob": "m" * 3_000_000})
    job = run_job(answer, [task], "huge", home=tmp_path / "home")
    (run,) = job.load_trajectories()
    assert run.final_response is not None and len(run.final_response) < 70_000
    assert run.final_response.endswith("characters]")
    assert run.task is not None and len(run.task.metadata["blob"]) < PROMPT_CHARS + 100
    shown = StoreView(tmp_path / "home").run(run.trajectory_id)
    assert len(json.dumps(shown)) < 200_000
    with pytest.raises(ValueError, match="at most 256 characters"):
        Task(id="i" * 257, prompt="p")
    with pytest.raises(ValueError, match="at most 1,048,576 characters"):
        Task(prompt="p" * (PROMPT_CHARS + 1))


@pytest.mark.timeout(120)
def test_yaml_aliases_have_a_size_budget(tmp_path: Path) -> None:
    # A 1 MB scalar aliased 300 times per task made a 905 MiB store in 7 s: the aliases' expanded
    # size is counted on the composed graph and refused with one error naming the file.
    from hud_gym.task import TaskFileError, TaskSet

    blob = "b" * 1_000_000
    aliases = ", ".join(["*blob"] * 300)
    path = tmp_path / "aliases.yaml"
    path.write_text(
        f"- id: t0\n  prompt: p\n  metadata: {{big: &blob {blob}}}\n- id: t1\n  prompt: p\n  metadata: {{x: [{aliases}]}}\n"
    )
    with pytest.raises(TaskFileError, match=r"aliases\.yaml, line \d+: aliases expand this value to more than"):
        TaskSet.load(path)
    fine = tmp_path / "fine.yaml"
    fine.write_text(f"- id: t0\n  prompt: &p {blob}\n- id: t1\n  prompt: *p\n")
    assert len(TaskSet.load(fine)) == 2
