"""What the control channel's task calls do to a session's env.

- ``tasks.start``: reset the session's env on the task (a new env when it has none, or one of
  another gym type), with the ``seed`` of the args: the prompt frame ``{"prompt": ...}``.
- The MCP tools step it (:func:`act`); a step that ends the episode is kept as its final step.
- ``tasks.grade {answer}``: the final step's grade when the episode has ended, else the step of a
  ``ResponseAction`` with the answer, graded by the task's evaluator. A step that was not graded
  (the evaluator broke, the env failed, a timeout: ``reward=None``) is an error grade,
  ``isError: true`` with its status and error, never a plain 0 (HUD's frame needs a finite
  ``score``, so it carries 0.0 beside ``isError``). Grading ends the task.
- ``tasks.cancel`` ends the episode as ``interrupted`` without a grade.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

import hud_gym
from hud_gym.actions import ResponseAction
from hud_gym.bounds import STRING_CHARS, bound, clip_text
from hud_gym.core.env import HudEnv
from hud_gym.core.episode import StepResult
from hud_gym.errors import HudGymError
from hud_gym.gyms import get_gym
from hud_gym.protocols.hud_control.catalog import StartArgs
from hud_gym.protocols.hud_control.sessions import Session
from hud_gym.rewards import graded_reward
from hud_gym.task import Task

__all__ = ["EpisodeError", "act", "cancel", "grade", "grade_frame", "start"]


class EpisodeError(HudGymError, RuntimeError):
    """A task call the session's state does not allow (no task started, the episode is over)."""


async def start(
    session: Session, task_id: str, task: Task, args: StartArgs, env_options: dict[str, Any]
) -> dict[str, Any]:
    """Reset the session's env on ``task``; the ``tasks.start`` result."""
    async with session.lock:
        gym = get_gym(task.gym).name
        if session.env is not None and session.env.gym != gym:
            await session.close()
        if session.env is None:
            made = await asyncio.to_thread(hud_gym.make, task, **env_options)
            session.env = cast("HudEnv", made.unwrapped)
        session.task_id, session.final = None, None
        observation, info = await session.env.areset(seed=args.seed, options={"task": task})
        session.task_id, session.observation = task_id, observation
        return {"prompt": info.get("prompt") or task.prompt}


async def act(session: Session, action: Any) -> StepResult:
    """Step the session's episode with ``action`` (a CLA dict or a list of them).

    Raises:
        EpisodeError: no task is started, or the episode is over (grade it).
    """
    async with session.lock:
        env = _open_episode(session)
        result = await env.astep(action)
        session.observation = result[0]
        if result[2] or result[3]:
            session.final = result
        return result


async def grade(session: Session, payload: dict[str, Any]) -> dict[str, Any]:
    """Grade the session's task with the ``answer`` of ``payload``; the ``tasks.grade`` result.

    Raises:
        EpisodeError: no task is started.
    """
    async with session.lock:
        if session.task_id is None or session.env is None:
            raise EpisodeError("no task in progress: call tasks.start first")
        final = session.final
        if final is None:
            final = await session.env.astep(ResponseAction(text=_answer_text(payload.get("answer"))))
        session.task_id, session.final = None, None
        return grade_frame(final)


async def cancel(session: Session) -> None:
    """End the session's episode as ``interrupted`` (no grade); no-op without one."""
    async with session.lock:
        if session.task_id is not None and session.env is not None and session.final is None:
            await session.env.aend_episode("interrupted", "tasks.cancel")
        session.task_id, session.final = None, None


def grade_frame(result: StepResult) -> dict[str, Any]:
    """HUD's grade frame for the step that ended an episode (see the module docstring)."""
    _, step_reward, terminated, truncated, info = result
    reward = graded_reward(step_reward)  # the env's absent reward (NaN) is None here
    status = str(info.get("status") or "")
    grade = info.get("grade")
    if reward is None:
        error = clip_text(str(info.get("error") or status or "the episode was not graded"), STRING_CHARS)
        return {
            "score": 0.0,
            "isError": True,
            "done": True,
            "content": f"not graded ({status}): {error}",
            "info": {"status": status, "reward": None, "error": error},
        }
    extra = _jsonable(bound(dict(grade.info))[0]) if grade is not None and grade.info else {}
    return {
        "score": float(reward),
        "isError": False,
        "done": bool(grade.done) if grade is not None else bool(terminated or truncated),
        "content": grade.content if grade is not None else None,
        "info": {**extra, "status": status, "truncated": bool(truncated)},
    }


def _open_episode(session: Session) -> HudEnv:
    if session.task_id is None or session.env is None:
        raise EpisodeError("no task in progress: call tasks.start first")
    if session.final is not None:
        raise EpisodeError("the episode is over: call tasks.grade")
    return session.env


def _answer_text(answer: Any) -> str:
    if answer is None:
        return ""
    if isinstance(answer, str):
        return answer
    return json.dumps(answer, separators=(",", ":"), default=str)


def _jsonable(value: Any) -> Any:
    """``value`` as JSON types (an evaluator's info may hold other objects: their ``str``)."""
    try:
        return json.loads(json.dumps(value, default=str, allow_nan=False))
    except ValueError:  # a NaN or infinity: JSON has none (HUD's frames are strict JSON)
        return {"unencodable": clip_text(repr(value), 1000)}
