"""``osworld_evaluate``: an OSWorld task's ``evaluator``, graded as OSWorld's ``DesktopEnv.evaluate``
grades it (``desktop_env/desktop_env.py``):

1. the ``postconfig`` steps run (:func:`~.steps.run_step`: the save keystrokes, sleeps, ...);
2. ``infeasible``: 1 when the agent's final answer is ``FAIL`` (OSWorld's ``FAIL`` action), else 0;
   any other task whose agent answered ``FAIL`` scores 0;
3. each metric gets its ``result`` (and ``expected``) state from the getters (:mod:`.getters`)
   and its ``options``; a result file that is missing (``FileNotFoundError``) ends an ``and``
   evaluation with 0; with ``conj="and"`` the first 0 ends it with 0, else the score is the
   *mean* of the metrics (as OSWorld's); with ``"or"`` the first 1 ends it with 1, else the max.

A metric that raises on the desktop's files (a file the agent broke) scores 0 with the error in
the grade's ``content``, never an evaluator error; a metric or getter that does not run here is
an evaluator error naming it (such tasks are not in ``OSWorld-Ubuntu``'s runnable set).
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from hud_gym.evaluation.grade import Grade
from hud_gym.evaluation.registry import FunctionContext, evaluate_function
from hud_gym.suites.osworld.getters import Getters
from hud_gym.suites.osworld.steps import run_step
from hud_gym.suites.osworld.support import METRICS

__all__ = ["agent_failed", "osworld_evaluate"]


def agent_failed(response: str | None) -> bool:
    """The agent's final answer is OSWorld's ``FAIL`` (the task is infeasible, it says)."""
    return response is not None and response.strip().upper() == "FAIL"


def _as_list(value: Any, count: int) -> list[Any]:
    return value if isinstance(value, list) else [value] * count


async def _score(getters: Getters, func: str, result: Any, expected: Any, options: Any) -> tuple[float, str]:
    metric = METRICS.get(func)
    if metric is None:
        raise NotImplementedError(f"OSWorld metric {func[:100]!r} does not run here")
    state = await getters.get(result)
    wanted = await getters.get(expected) if expected is not None else None
    kwargs = dict(options or {})
    try:
        if wanted is not None:
            score = await asyncio.to_thread(metric, state, wanted, **kwargs)
        else:
            score = await asyncio.to_thread(metric, state, **kwargs)
    except NotImplementedError:
        raise
    except Exception as exc:  # noqa: BLE001  (the desktop's files are the agent's: a broken one scores 0)
        return 0.0, f"{func}: 0 ({type(exc).__name__}: {str(exc)[:200]})"
    return float(score), f"{func}: {float(score):g}"


async def _metrics(ctx: FunctionContext, evaluator: dict[str, Any], scratch: Path) -> tuple[float, list[str]]:
    funcs = evaluator["func"]
    single = not isinstance(funcs, list)
    funcs = [funcs] if single else funcs
    results = [evaluator.get("result")] if single else _as_list(evaluator.get("result"), len(funcs))
    expecteds = [evaluator.get("expected")] if single else _as_list(evaluator.get("expected"), len(funcs))
    options = [evaluator.get("options")] if single else _as_list(evaluator.get("options"), len(funcs))
    conj = evaluator.get("conj", "and")
    metadata = (ctx.task.metadata or {}) if ctx.task is not None else {}
    names = {"domain": metadata.get("domain"), "task_id": ctx.task.id if ctx.task is not None else None}
    getters = Getters(ctx, scratch, names)
    scores: list[float] = []
    notes: list[str] = []
    for i, func in enumerate(funcs):
        try:
            score, note = await _score(getters, func, results[i], expecteds[i], options[i])
        except FileNotFoundError as exc:
            if conj == "and":
                return 0.0, [*notes, f"{func}: 0 ({str(exc)[:200]})"]
            score, note = 0.0, f"{func}: 0 ({str(exc)[:200]})"
        notes.append(note)
        if conj == "and" and score == 0.0:
            return 0.0, notes
        if conj == "or" and score == 1.0:
            return 1.0, notes
        scores.append(score)
    total = sum(scores) / len(scores) if conj == "and" else max(scores)
    return total, notes


@evaluate_function("ubuntu")
async def osworld_evaluate(ctx: FunctionContext, evaluator: dict[str, Any]) -> Grade:
    """Grade an OSWorld ``evaluator`` object as OSWorld does (see the module docstring)."""
    try:
        for step in evaluator.get("postconfig") or []:
            await run_step(ctx, step)
        if evaluator["func"] == "infeasible":
            failed = agent_failed(ctx.final_response)
            return Grade(
                reward=float(failed), content=f"infeasible: the agent {'answered' if failed else 'did not answer'} FAIL"
            )
        if agent_failed(ctx.final_response):
            return Grade(reward=0.0, content="the agent answered FAIL on a feasible task")
        with tempfile.TemporaryDirectory(prefix="hud-gym-osworld-") as scratch:
            reward, notes = await _metrics(ctx, evaluator, Path(scratch))
    except (NotImplementedError, PermissionError) as exc:
        return Grade.error(f"osworld_evaluate: {str(exc)[:500]}")
    return Grade(reward=reward, content="; ".join(notes)[:2000], info={"metrics": notes[:20]})
