"""hud-gym rollouts as real ``verifiers.v1.Trace`` records (verifiers 0.4), scored by verifiers' own
rules: a failed run is an errored trace (its error in verifiers' ``Error`` shape, left out of the
reward mean by verifiers' ``format_mean``), never a reward of 0 or None.

verifiers 0.4 pins ``openai<3`` while the agents extra needs openai 3, so it lives in an overlay
venv (``.venv-verifiers``, made by ``make install`` with scripts/overlay-venv.sh). Run from the main
venv, this module runs itself under the overlay's python (one pytest subprocess).
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
HAS_VERIFIERS = (
    importlib.util.find_spec("verifiers") is not None and importlib.util.find_spec("verifiers.v1") is not None
)


def _overlay_python() -> Path | None:
    venv = Path(sys.prefix)
    for candidate in (venv.parent / f"{venv.name}-verifiers", ROOT / ".venv-verifiers"):
        if (candidate / "bin" / "python").exists():
            return candidate / "bin" / "python"
    return None


@pytest.mark.skipif(HAS_VERIFIERS, reason="verifiers is installed here: the tests below run directly")
@pytest.mark.timeout(300)
def test_in_the_verifiers_overlay_venv() -> None:
    python = _overlay_python()
    if python is None:
        pytest.skip("no .venv-verifiers (make install creates it)")
    env = {**os.environ, "PYTHONPATH": ""}
    result = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", str(Path(__file__)), "-k", "not overlay"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=280,
        env=env,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert result.stdout.splitlines()[-1].startswith("2 passed, 1 deselected"), result.stdout[-2000:]


needs_verifiers = pytest.mark.skipif(not HAS_VERIFIERS, reason="runs in the verifiers overlay venv")


@needs_verifiers
@pytest.mark.timeout(90)
def test_a_group_as_traces_scored_by_verifiers_rules() -> None:
    import verifiers.v1 as vf
    from verifiers.v1.utils.format import format_mean

    from hud_gym import ResponseAction, TypeAction
    from hud_gym.wrappers.integrations.verifiers_v1 import verifiers_group_traces

    runs = 0  # max_concurrent=1: the group runs one rollout after another

    def policy(observation: dict, history: list, task: Any) -> Any:
        nonlocal runs
        if not history:
            runs += 1
            if runs == 3:
                raise RuntimeError("model server down")
            return TypeAction(text="draft")
        return ResponseAction(text="Paris" if runs == 1 else "Lyon")

    traces = asyncio.run(verifiers_group_traces("qa-basic/capital-france", policy, 3, seed=7, max_concurrent=1))
    assert [t.ok for t in traces] == [True, True, False]
    assert [t.rewards["hud"].score for t in traces[:2]] == [1.0, 0.0]
    assert traces[2].rewards == {}  # no score for a failed run
    # verifiers' own mean: over the non-errored traces (the raw mean, errors as 0, in parens).
    assert format_mean(traces, lambda t: t.reward) == "0.50 (0.33)"
    failed = traces[2]
    assert failed.stop_condition == "provider_error" and not failed.is_timeout
    [error] = failed.errors
    assert isinstance(error, vf.Error) and error.type == "ProviderError" and "model server down" in error.message
    for trace in traces[:2]:
        assert trace.stop_condition == "agent_completed" and trace.is_completed and trace.errors == []
        assert [m.role for m in trace.messages] == ["user", "assistant", "user", "assistant", "user"]
        assert trace.num_turns == 2 and trace.metrics["steps"] == 2
        assert trace.timing.agent.duration > 0 and trace.timing.scoring.end >= trace.timing.scoring.start
    assert '"Paris"' in traces[0].messages[3].content
    # The records survive verifiers' own wire format (what a trainer loads).
    for trace in traces:
        back = vf.WireTrace.model_validate(trace.to_record())
        assert (back.ok, back.stop_condition, back.rewards) == (trace.ok, trace.stop_condition, trace.rewards)


@needs_verifiers
@pytest.mark.timeout(90)
def test_eval_errors_and_timeouts_are_errored_traces() -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    import failing_functions  # noqa: F401  (registers failing_raises)

    from hud_gym import ResponseAction, Task
    from hud_gym.wrappers.integrations.verifiers_v1 import to_trace, verifiers_group_traces

    task = Task(id="broken", prompt="Capital of France?", gym="qa", evaluate="failing_raises")
    [broken] = asyncio.run(verifiers_group_traces(task, lambda o, h, t: ResponseAction(text="Paris"), 1))
    assert (broken.ok, broken.stop_condition, broken.rewards) == (False, "task_error", {})
    assert broken.errors[0].type == "TaskError" and "evaluator bug" in broken.errors[0].message

    async def slow(observation: dict, history: list, task: Any) -> Any:
        await asyncio.sleep(5)
        return ResponseAction(text="Paris")

    [late] = asyncio.run(verifiers_group_traces("qa-basic/capital-france", slow, 1, timeout_s=0.5))
    assert (late.ok, late.is_timeout, late.stop_condition) == (False, True, "rollout_timeout")
    assert late.errors[0].type == "SandboxError" and late.rewards == {}

    from hud_gym.trajectory import Trajectory

    with pytest.raises(ValueError, match="no reward"):
        to_trace(Trajectory(status="ok", reward=None))
