"""Issue 28, item 10: an agent that crashes keeps its traceback: stored with the run (its
``error``: the one-line summary, then the traceback), shown by ``hud-gym jobs show`` and by the
UI's run data, printed by ``hud-gym run --debug``. Real runs of the real QA gym, through the CLI."""

from __future__ import annotations

import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hud_gym.cli.app import app
from hud_gym.jobs import load_job
from hud_gym.ui.data import StoreView

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def crashing_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("HUD_GYM_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    name = f"crashing_agents_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(
        textwrap.dedent("""
        from hud_gym.actions import TypeAction

        def read_note(memory):
            return memory["note"]

        class Forgetful:
            def act(self, observation, info):
                if info.get("step", 0) == 0:
                    return [TypeAction(text="x")]
                return read_note({})
        """)
    )
    yield f"{name}:Forgetful"
    sys.modules.pop(name, None)


def test_a_crash_keeps_its_traceback(crashing_agent: str, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(
        app, ["run", "qa-basic", "--agent", crashing_agent, "--task", "capital-france", "--envs", "1", "--debug"]
    )
    assert result.exit_code == 1, result.output  # every run failed
    job_id = next(line.split()[-1] for line in result.stdout.splitlines() if line.startswith("job id: "))
    # --debug prints the traceback: the agent's own frame and the exception
    assert "first error (policy_error, task capital-france): policy raised KeyError: 'note'" in result.stderr
    assert "Traceback (most recent call last):" in result.stderr
    assert 'return memory["note"]' in result.stderr and "in read_note" in result.stderr

    (run,) = load_job(job_id).load_trajectories()
    assert run.status == "policy_error" and run.reward is None
    assert run.error_summary == "policy raised KeyError: 'note'"
    assert run.traceback is not None and run.traceback.rstrip().endswith("KeyError: 'note'")
    assert "in read_note" in run.traceback

    shown = runner.invoke(app, ["jobs", "show", job_id])
    assert shown.exit_code == 0, shown.output
    assert "Traceback (most recent call last):" in shown.stdout and "in read_note" in shown.stdout
    assert "policy raised KeyError: 'note': 1 run(s)" in shown.stdout

    ui_run = StoreView(tmp_path / "home").run(run.trajectory_id)
    assert "in read_note" in ui_run["error"] and ui_run["status"] == "policy_error"

    # without --debug: the summary and where to find the traceback
    quiet = runner.invoke(app, ["run", "qa-basic", "--agent", crashing_agent, "--task", "capital-france"])
    assert "policy raised KeyError: 'note' (--debug or `hud-gym jobs show` for the traceback)" in quiet.stderr
    assert "Traceback" not in quiet.stderr
