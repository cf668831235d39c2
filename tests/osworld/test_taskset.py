"""``OSWorld-Ubuntu`` from a checkout (``HUD_GYM_OSWORLD`` or a path), its per-domain report, and
``hud-gym tasksets show OSWorld-Ubuntu``; the sample of real OSWorld task files in
``tests/data/osworld`` stands in for a checkout (see its README for the source and licence)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hud_gym.cli.app import app
from hud_gym.suites.osworld.taskset import domain_report, load_osworld
from hud_gym.tasksets import load_taskset

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "osworld"


def test_osworld_ubuntu_loads_from_the_variable_and_from_a_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HUD_GYM_OSWORLD", raising=False)
    with pytest.raises(ValueError, match="HUD_GYM_OSWORLD=<checkout path>"):
        load_taskset("OSWorld-Ubuntu")
    monkeypatch.setenv("HUD_GYM_OSWORLD", str(SAMPLE))
    from hud_gym.tasksets import _load_named

    _load_named.cache_clear()
    taskset = load_taskset("OSWorld-Ubuntu")
    assert taskset.id == "OSWorld-Ubuntu" and len(taskset) == len(load_osworld(SAMPLE)) > 0
    for task in taskset:
        assert task.metadata["benchmark"] == "osworld"
        assert [c.function for c in task.setup] == ["osworld_config"]
        assert [c.function for c in task.evaluate] == ["osworld_evaluate"]
    _load_named.cache_clear()


def test_the_report_counts_every_task_file_and_says_why(tmp_path: Path) -> None:
    reports = {r.domain: r for r in domain_report(SAMPLE)}
    files = {d.name: len(list(d.glob("*.json"))) for d in (SAMPLE / "evaluation_examples" / "examples").iterdir()}
    assert {d: r.total for d, r in reports.items()} == files
    for report in reports.values():
        assert report.runs_here <= report.loads <= report.total
        assert sum(report.why_not.values()) >= report.total - report.runs_here
    assert reports["libreoffice_impress"].runs_here == reports["libreoffice_impress"].total == 3
    assert reports["vlc"].why_not.get("getter vlc_playing_info: VLC's HTTP interface: not yet", 0) >= 1
    # A malformed file is counted and named, never fatal to the rest.
    examples = tmp_path / "evaluation_examples" / "examples" / "os"
    examples.mkdir(parents=True)
    (examples / "bad.json").write_text(json.dumps({"id": "b", "instruction": "i", "evaluator": {"func": ""}}))
    (bad,) = domain_report(tmp_path)
    assert (bad.total, bad.loads, bad.runs_here) == (1, 0, 0)
    assert list(bad.why_not) == ["malformed: evaluator.func: 'func' must be a metric name or a list of them"]


def test_tasksets_show_prints_the_domains() -> None:
    result = CliRunner().invoke(app, ["tasksets", "show", "OSWorld-Ubuntu", "--osworld", str(SAMPLE), "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["domain"]: r for r in json.loads(result.output)}
    assert rows == {r.domain: r.model_dump() for r in domain_report(SAMPLE)}
    missing = CliRunner().invoke(app, ["tasksets", "show", "OSWorld-Ubuntu", "--osworld", "/nonexistent"])
    assert missing.exit_code == 2 and "not an OSWorld checkout" in missing.output


def test_a_repeated_id_is_reported_and_the_task_itself_wins_over_its_win_variant(tmp_path: Path) -> None:
    calc = tmp_path / "evaluation_examples" / "examples" / "libreoffice_calc"
    calc.mkdir(parents=True)
    example = {"id": "t1", "instruction": "i", "evaluator": {"func": "infeasible"}}
    (calc / "t1-win.json").write_text(json.dumps({**example, "instruction": "windows"}))
    (calc / "t1.json").write_text(json.dumps(example))
    (report,) = domain_report(tmp_path)
    assert (report.total, report.loads, report.runs_here) == (2, 1, 1)
    assert report.why_not == {"duplicate id (the task of libreoffice_calc/t1.json)": 1}
    (task,) = load_osworld(tmp_path)
    assert task.prompt == "i"
