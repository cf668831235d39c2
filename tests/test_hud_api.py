"""HUD 0.6's Run / Trace / Grade on ``hud_gym.hud`` (issue 15): ``task.run(agent)`` and
``taskset.run(agent, group_size=, max_concurrent=)`` return a job whose ``runs`` have every member
the seed lists; the runs are the job's trajectories in the SQLite store (``hud-gym jobs show``,
the HTML report) and load back from it. QA gym, real store in a temporary HUD_GYM_HOME."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from hud_gym.cli.app import app
from hud_gym.cli.report import write_report
from hud_gym.hud import AgentStep, Grade, Job, ResponseAction, Run, Task, TaskSet, ToolStep, Trace, load_job
from hud_gym.trajectory import Trajectory, TrajectoryStep


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HUD_GYM_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


FRANCE = Task(id="france", prompt="Capital of France?", gym="qa", evaluate=("response_includes", "Paris"))
MARS = Task(id="mars", prompt="Red planet?", gym="qa", evaluate=("response_includes", "Mars"))


def answer(observation: Any, history: list[Any], task: Any) -> list[Any]:
    """One thought, then the answer: Paris (right for France, wrong for Mars)."""
    if not history:
        return [{"type": "type", "text": "thinking"}]
    return [ResponseAction(text="Paris")]


def test_task_run_gives_a_job_whose_run_has_every_member() -> None:
    job = asyncio.run(FRANCE.run(answer))
    assert isinstance(job, Job)
    [run] = job.runs
    assert isinstance(run, Run)
    assert run.prompt == "Capital of France?" and run.prompt_text == "Capital of France?"
    assert [(m.role, m.content) for m in run.prompt_messages] == [("user", "Capital of France?")]
    assert isinstance(run.grade, Grade) and (run.grade.reward, run.grade.done, run.grade.is_error) == (1.0, True, False)
    assert run.reward == 1.0 and run.evaluation["reward"] == 1.0 and run.evaluation["content"] == "all found"
    assert run.runtime == "local" and run.job_id == job.id and run.group_id is not None
    assert run.trace_id == run.trace.trace_id and run.trace_id in {t.id for t in job.stored.load_trajectories()}
    trace = run.trace
    assert isinstance(trace, Trace) and (trace.status, trace.content, trace.is_error) == ("completed", "Paris", False)
    assert [type(s) for s in trace.steps] == [AgentStep, ToolStep, AgentStep, ToolStep]
    first_turn, first_result = trace.steps[0], trace.steps[1]
    assert isinstance(first_turn, AgentStep) and first_turn.tool_calls[0]["text"] == "thinking"
    assert isinstance(first_result, ToolStep) and first_result.call == first_turn.tool_calls
    assert first_result.result["status"] == "ok" and first_result.result["reward"] == 0.0
    last_turn = trace.steps[2]
    assert isinstance(last_turn, AgentStep) and last_turn.done and last_turn.content == "Paris"


def test_taskset_run_groups_and_runs_load_back_from_the_store(home: Path) -> None:
    taskset = TaskSet(tasks=[FRANCE, MARS], id="capitals")
    job = asyncio.run(taskset.run(answer, group_size=2, max_concurrent=2))
    runs = job.runs
    assert len(runs) == 4
    by_task: dict[str | None, list[Run]] = {}
    for run in runs:
        by_task.setdefault(run.task_id, []).append(run)
    assert sorted(r.reward for r in by_task["france"]) == [1.0, 1.0]
    assert sorted(r.reward for r in by_task["mars"]) == [0.0, 0.0]  # graded 0: a real 0, with its grade
    assert all(not r.grade.is_error for r in runs)
    assert (
        len({r.group_id for r in by_task["france"]}) == 1
        and by_task["france"][0].group_id != by_task["mars"][0].group_id
    )
    again = asyncio.run(load_job(job.id)).runs  # a fresh read of the store
    assert sorted(r.model_dump_json() for r in again) == sorted(r.model_dump_json() for r in runs)
    shown = CliRunner().invoke(app, ["jobs", "show", job.id, "--trajectories", "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["analytics"]["trajectories"] == 4
    table = CliRunner().invoke(app, ["jobs", "show", job.id, "--trajectories"])
    assert table.exit_code == 0 and runs[0].trace_id is not None and runs[0].trace_id[:8] in table.stdout
    report = write_report(job.stored, home / "report.html").read_text()
    assert all(r.trace_id and r.trace_id[:8] in report for r in runs)


def test_a_run_without_a_grade_has_no_reward_and_an_error_grade() -> None:
    ungraded = Trajectory(
        prompt="p", status="ungraded", reward=None, error="the episode ended by close before any grade"
    )
    run = Run.from_trajectory(ungraded)
    assert run.reward is None and run.grade.is_error and "before any grade" in (run.grade.content or "")
    assert run.trace.status == "error" and run.trace.is_error
    interrupted = Run.from_trajectory(Trajectory(prompt="p", status="interrupted", reward=None))
    assert interrupted.trace.status == "cancelled" and not interrupted.trace.is_error


def test_trace_final_collect_and_error() -> None:
    steps = [
        TrajectoryStep(index=0, actions=[{"type": "type", "text": "a"}], status="action_error", error="bad key"),
        TrajectoryStep(index=1, actions=[{"type": "type", "text": "b"}]),
        TrajectoryStep(index=2, actions=[{"type": "response", "text": "42"}], terminated=True, reward=1.0),
    ]
    trace = Trace.from_trajectory(Trajectory(prompt="p", steps=steps, final_response="42", reward=1.0, grade={}))
    assert trace.final(lambda s: s.error) == "bad key" == trace.error
    assert trace.collect(lambda s: s.result.get("status") if isinstance(s, ToolStep) else None) == [
        "action_error",
        "ok",
        "ok",
    ]
    assert trace.final(lambda s: s.content if isinstance(s, AgentStep) else None) == "42"
    assert trace.collect(lambda s: None) == [] and trace.final(lambda s: None) is None
    assert Trace().status is None and Trace().steps == [] and Trace().content is None and Trace().trace_id is None


def test_grade_fields_from_a_wire_frame() -> None:
    frame = {"score": 0.75, "done": False, "isError": False, "content": "3 of 4", "info": {"found": 3}, "extra": 1}
    grade = Grade.model_validate(frame)
    assert (grade.reward, grade.done, grade.content, grade.info, grade.is_error) == (
        0.75,
        False,
        "3 of 4",
        {"found": 3},
        False,
    )
    assert grade.raw == frame and float(grade) == 0.75
    run = Run(grade=grade, reward=grade.reward)
    assert run.evaluation == frame  # the raw grade payload
