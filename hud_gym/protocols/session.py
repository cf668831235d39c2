"""One env served to a protocol's clients: its episodes as typed, JSON-safe reports.

A :class:`ServedEnv` wraps a ``hud_gym`` env made by the server's operator (who is trusted: the
gym, its options and its task set come from the command line). What a client sends is untrusted:

- a task is picked by reference only (:func:`pick_task`): an id of the served task set, or
  ``"<registered task set>/<id>"``; never a task dict (its ``files`` may name host paths) nor a
  task file path. References are bounded (:data:`TASK_REFERENCE_CHARS`).
- actions are CLA (dicts), validated by the env as any agent's are.

Every report crosses intact what the env said: ``reward`` is the graded reward or ``None``
(absent, with ``status`` saying why: never a 0 for a failed grade), ``status`` is the step's
``info["status"]``, and ``info`` is bounded (:func:`hud_gym.bounds.bound_info`) and JSON-safe.
Requests are served one at a time (an env runs one step at a time).

Example:
    >>> served = ServedEnv(hud_gym.make("qa-basic/capital-france"))   # doctest: +SKIP
    >>> report, screenshot = await served.reset()                     # doctest: +SKIP
    >>> report, _ = await served.step({"type": "response", "text": "Paris"})  # doctest: +SKIP
    >>> report.reward, report.status                                  # doctest: +SKIP
    (1.0, 'ok')
"""

from __future__ import annotations

import asyncio
import io
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from hud_gym.actions import parse_actions
from hud_gym.bounds import STRING_CHARS, TASK_ID_CHARS, bound_info, clip_text
from hud_gym.gyms import get_gym
from hud_gym.task import Task
from hud_gym.tasksets import available_tasksets, get_task

__all__ = ["TASK_REFERENCE_CHARS", "ServedEnv", "StepReport", "encode_png", "pick_task", "plain"]

TASK_REFERENCE_CHARS = 2 * TASK_ID_CHARS
"""Longest task reference a client may send."""


class StepReport(BaseModel):
    """What one reset, step or grade of a served env reports to a client.

    Attributes:
        status: the step's ``info["status"]`` (``ok``, ``action_error``, ``eval_error``,
            ``env_error``, ``timeout``, ``episode_over``); ``ok`` after a reset.
        reward: the graded reward, or ``None`` when the step was not graded or grading failed.
        terminated / truncated: Gymnasium's flags.
        error: what went wrong, when the status is not ``ok`` (bounded).
        prompt: the task's instruction (after a reset).
        text: the observation's text.
        task_id: the episode's task.
        step: steps taken in the episode.
        actions: the CLA actions the env executed for this step, as JSON.
        info: the env's ``info``, bounded and JSON-safe.
    """

    status: str = "ok"
    reward: float | None = None
    terminated: bool = False
    truncated: bool = False
    error: str | None = None
    prompt: str | None = None
    text: str = ""
    task_id: str | None = None
    step: int = 0
    actions: list[dict[str, Any]] = Field(default_factory=list)
    info: dict[str, Any] = Field(default_factory=dict)


def plain(value: Any) -> Any:
    """``value`` as plain JSON data: numpy values as Python ones, non-finite floats as ``None``,
    other objects as their ``str``."""
    if isinstance(value, BaseModel):
        return plain(value.model_dump(mode="json"))
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.generic | np.ndarray):
        return plain(value.tolist())
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)


def encode_png(screenshot: Any) -> bytes:
    """An ``(H, W, 3)`` uint8 screenshot as PNG bytes (lossless: what the agent sees is the env's)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(np.asarray(screenshot, dtype=np.uint8)).save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()


def pick_task(reference: str, served: list[Task]) -> Task:
    """The task a client names: an id of the served task set, else ``"<task set>/<id>"`` of a
    registered task set (never a path).

    Raises:
        ValueError: the reference is too long, or names no such task (the message says which).
    """
    if len(reference) > TASK_REFERENCE_CHARS:
        raise ValueError(f"a task reference has at most {TASK_REFERENCE_CHARS} characters, this one {len(reference):,}")
    for task in served:
        if task.id == reference:
            return task.model_copy(deep=True)
    set_name, slash, _ = reference.partition("/")
    if not slash or set_name not in available_tasksets():
        ids = ", ".join(str(t.id) for t in served[:20] if t.id) or "none"
        raise ValueError(
            f"no task {reference!r}: name one of the served tasks ({ids}) or '<task set>/<id>' of a registered "
            f"task set ({', '.join(available_tasksets())})"
        )
    return get_task(reference)


def _report(info: dict[str, Any], reward: Any = None, terminated: bool = False, truncated: bool = False) -> StepReport:
    bounded = plain(bound_info(dict(info)))
    error = bounded.get("error")
    return StepReport(
        status=str(bounded.get("status", "ok")),
        reward=None if reward is None or not math.isfinite(float(reward)) else float(reward),
        terminated=bool(terminated),
        truncated=bool(truncated),
        error=None if error is None else clip_text(str(error), STRING_CHARS),
        prompt=bounded.get("prompt"),
        task_id=bounded.get("task_id"),
        step=int(bounded.get("step") or 0),
        info=bounded,
    )


class ServedEnv:
    """A ``hud_gym`` env served to a protocol's clients, one request at a time.

    Args:
        env: the env (``hud_gym.make(...)``; a Gymnasium wrapper around a ``HudEnv`` is unwrapped).
    """

    def __init__(self, env: Any) -> None:
        self.env = env.unwrapped
        self.lock = asyncio.Lock()
        self.screenshot: np.ndarray | None = None
        self.text = ""
        self.last = StepReport(status="episode_over")
        self.started = False

    @property
    def tasks(self) -> list[Task]:
        """The served tasks: the env's task, or its task set."""
        env = self.env
        if env._task is not None:
            return [env._task]
        return list(env._taskset or ())

    def _observe(self, observation: dict[str, Any], report: StepReport) -> StepReport:
        self.screenshot = np.asarray(observation["screenshot"])
        self.text = report.text = clip_text(str(observation.get("text", "")), STRING_CHARS)
        self.last = report
        return report

    async def reset(self, task: str | None = None, seed: int | None = None) -> StepReport:
        """Start an episode: on the task ``task`` names (:func:`pick_task`), else on the served
        task (or a draw from the served task set).

        Raises:
            ValueError: no such task, or a task of another gym.
        """
        options: dict[str, Any] = {}
        if task is not None:
            options["task"] = picked = pick_task(task, self.tasks)
            gym = get_gym(picked.gym).name if picked.gym else self.env.gym
            if gym != self.env.gym:
                raise ValueError(f"task {task!r} is for the {gym} gym; this server serves the {self.env.gym} gym")
        async with self.lock:
            observation, info = await self.env.areset(seed=seed, options=options)
            self.started = True
            return self._observe(observation, _report(info))

    async def step(self, actions: Any) -> StepReport:
        """Execute CLA ``actions`` (one dict or model, or a list) as one env step.

        Raises:
            hud_gym.actions.ActionError: malformed actions (the env is not stepped).
            hud_gym.errors.ResetNeeded: no episode was started.
        """
        parsed = parse_actions(actions)
        async with self.lock:
            observation, reward, terminated, truncated, info = await self.env.astep(parsed)
            report = _report(info, reward, terminated, truncated)
            report.actions = [a.model_dump(mode="json", exclude_none=True) for a in parsed]
            return self._observe(observation, report)

    async def evaluate(self) -> StepReport:
        """Grade the current state now (HUD's ``evaluate``): the reward, or ``None`` with
        ``status="eval_error"`` when grading failed; the grade's ``content`` and ``info`` in ``info``."""
        async with self.lock:
            grade = await self.env.aevaluate()
        info = {"status": "eval_error" if grade.is_error else "ok", "content": grade.content, "grade": grade.info}
        if grade.is_error:
            info["error"] = grade.content or "the evaluator failed"
        report = _report(info, None if grade.is_error else grade.reward, terminated=False)
        report.step, report.task_id = self.last.step, self.last.task_id
        return report

    async def close(self) -> None:
        """Close the env (its controller, browser or desktop)."""
        await self.env.aclose()
