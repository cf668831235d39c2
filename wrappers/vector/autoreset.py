"""Gymnasium's three autoreset modes, written once for every hud-gym vector env.

The rules are those of Gymnasium's ``SyncVectorEnv``:

- ``NEXT_STEP`` (the default): the step after an episode ended resets the env instead of stepping
  it; that row has the reset's observation and info, reward 0, neither terminated nor truncated.
- ``SAME_STEP``: the step that ends an episode also resets the env; its row has the reset's
  observation and info, the ended step's own in ``info["final_obs"]`` / ``info["final_info"]``,
  and the ended step's reward, terminated and truncated.
- ``DISABLED``: an env whose episode ended is refused a step until the caller resets it with
  ``reset(options={"reset_mask": mask})``.

A failed step (``env_error``, ``timeout``: the backend replaced the env) ends its episode, so the
same rules apply to it.

A reset the backend could not do at all (it failed on a fresh env too: a controller server that
keeps dying) is a :class:`ResetFailed` thrown into the program, never an exception out of
``step``/``recv``: in place of a ``NEXT_STEP`` autoreset the row is an ``env_error`` (reward
``None``, terminated); after a ``SAME_STEP`` final step the row keeps that step, without
``final_obs``, and carries ``info["reset_error"]``. Either way the env still needs a reset
(:func:`needs_reset_after`), tried again at its next step (a reset row, as ``NEXT_STEP``).

The rules run where the env is: on the event loop for a local env (awaiting coroutines), inside
its actor for a Ray env (plain calls), in the driver for a Ray env whose actor failed. So they are
written as *programs*: generators that yield the calls they need (:class:`Step`, :data:`RESET`)
and return the row; :func:`run` and :func:`arun` execute one with a backend's own calls.

Example:
    >>> from gymnasium.vector import AutoresetMode
    >>> def step(action):
    ...     return "last", 1.0, True, False, {"step": 3}
    >>> def reset():
    ...     return "first", {"step": 0}
    >>> run(step_program(AutoresetMode.SAME_STEP, False, "click"), step, reset)
    ('first', 1.0, True, False, {'final_obs': 'last', 'final_info': {'step': 3}, 'step': 0})
    >>> run(step_program(AutoresetMode.NEXT_STEP, True, "click"), step, reset)
    ('first', 0.0, False, False, {'step': 0})
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any, Final

from gymnasium.vector import AutoresetMode

from hud_gym.wrappers.vector.batching import StepResult

__all__ = [
    "RESET",
    "Program",
    "Reset",
    "ResetFailed",
    "Step",
    "arun",
    "end_program",
    "needs_reset_after",
    "run",
    "step_program",
]


@dataclass(frozen=True)
class Step:
    """A program's call: step the env with ``action``; answered with the step's 5-tuple."""

    action: Any


@dataclass(frozen=True)
class Reset:
    """A program's call: reset the env (no seed, no options); answered with ``(observation, info)``."""


RESET: Final = Reset()

Program = Generator[Step | Reset, Any, StepResult]
"""A program: yields its calls, is sent each call's answer, returns the env's row."""


class ResetFailed(Exception):
    """A backend's reset that failed for good (on a fresh env too). Raised by the backend's reset
    call, :func:`run` / :func:`arun` throw it into the program, which reports it in the env's row.

    Args:
        error: why, for ``info["error"]`` / ``info["reset_error"]``.
        observation: the env's latest observation, repeated in a row that has no new one.
    """

    def __init__(self, error: str, observation: Any) -> None:
        super().__init__(error)
        self.error = error
        self.observation = observation

    def row(self) -> StepResult:
        """The row of an autoreset that failed: an ``env_error`` that ends the (empty) episode."""
        return self.observation, None, True, False, {"status": "env_error", "error": self.error, "replaced": True}


def step_program(mode: AutoresetMode, needs_reset: bool, action: Any) -> Program:
    """One env's step under ``mode``: a reset in its place when the env ``needs_reset`` (see
    :func:`needs_reset_after`), else the step and :func:`end_program`."""
    if needs_reset:
        try:
            observation, info = yield RESET
        except ResetFailed as failure:
            return failure.row()
        return observation, 0.0, False, False, info
    row = yield Step(action)
    return (yield from end_program(mode, row))


def end_program(mode: AutoresetMode, row: StepResult) -> Program:
    """What follows a finished step (also a failed one): with ``SAME_STEP`` an ended episode is
    reset at once, its row carrying ``final_obs`` / ``final_info``; otherwise the row as it is."""
    observation, reward, terminated, truncated, info = row
    if mode is AutoresetMode.SAME_STEP and (terminated or truncated):
        try:
            reset_observation, reset_info = yield RESET
        except ResetFailed as failure:  # the ended step's row; the next step resets (needs_reset_after)
            return observation, reward, terminated, truncated, {**info, "reset_error": failure.error}
        return (
            reset_observation,
            reward,
            terminated,
            truncated,
            {"final_obs": observation, "final_info": info, **reset_info},
        )
    return row


def needs_reset_after(mode: AutoresetMode, row: StepResult) -> bool:
    """Whether an env must be reset before its next step, after the step that gave ``row``: its
    episode ended and was not reset within the step (by ``SAME_STEP``; a Ray env whose fresh actor
    could not be reset was not). ``NEXT_STEP`` then resets in place of the next step; ``DISABLED``
    refuses the next step until ``reset(options={"reset_mask": ...})``."""
    _, _, terminated, truncated, info = row
    ended = bool(terminated or truncated)
    return ended and not (mode is AutoresetMode.SAME_STEP and "final_obs" in info)


def run(
    program: Program, step: Callable[[Any], StepResult], reset: Callable[[], tuple[Any, dict[str, Any]]]
) -> StepResult:
    """Execute ``program`` with plain calls: ``step(action)`` and ``reset()`` (a reset that raises
    :class:`ResetFailed` is thrown into the program)."""
    try:
        call = next(program)
        while True:
            if isinstance(call, Step):
                call = program.send(step(call.action))
                continue
            try:
                answer = reset()
            except ResetFailed as failure:
                call = program.throw(failure)
                continue
            call = program.send(answer)
    except StopIteration as done:
        return done.value


async def arun(
    program: Program,
    step: Callable[[Any], Awaitable[StepResult]],
    reset: Callable[[], Awaitable[tuple[Any, dict[str, Any]]]],
) -> StepResult:
    """Execute ``program`` with coroutine calls: ``await step(action)`` and ``await reset()`` (a
    reset that raises :class:`ResetFailed` is thrown into the program)."""
    try:
        call = next(program)
        while True:
            if isinstance(call, Step):
                call = program.send(await step(call.action))
                continue
            try:
                answer = await reset()
            except ResetFailed as failure:
                call = program.throw(failure)
                continue
            call = program.send(answer)
    except StopIteration as done:
        return done.value
