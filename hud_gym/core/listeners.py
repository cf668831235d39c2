"""What an env tells the layers above it, without importing them: its listeners, and the hook
that links a new env to a job.

- :class:`EnvListener`: what ``HudEnv.listeners`` hold (a job's trajectory recorder, ...).
- :func:`set_env_linker`: the function every new env is handed to, with its ``job=`` argument;
  :mod:`hud_gym.jobs` installs :func:`hud_gym.jobs.linking.link_env` when it is imported (and
  ``import hud_gym`` installs a stand-in that imports :mod:`hud_gym.jobs` only when an env is
  given a job). The env core never imports the jobs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["EnvLinker", "EnvListener", "link_new_env", "set_env_linker"]


class EnvListener(Protocol):
    """What ``HudEnv.listeners`` hold: coroutines awaited on the env's loop thread after every
    successful ``reset`` and ``step`` (with exactly what the caller gets back; ``reward`` is
    ``None`` for a failed step) and before ``close``. They must not raise (a listener's failure is
    its own to report).

    A listener may also define ``async on_end_episode(env, status, error)``: called by
    :meth:`~hud_gym.core.env.HudEnv.end_episode` when the episode ends with a failure from outside
    the env (``policy_error``, ``timeout``), and ``async on_evaluate(env, grade)``: called by
    :meth:`~hud_gym.core.env.HudEnv.evaluate` with the grade it returns (the grades of steps come
    in the step's ``info["grade"]``).

    ``env`` is the :class:`~hud_gym.core.env.HudEnv` (typed ``Any`` here: the env imports this
    module, never the other way round)."""

    async def on_reset(
        self, env: Any, observation: dict[str, Any], info: dict[str, Any], options: dict[str, Any]
    ) -> None: ...

    async def on_step(
        self,
        env: Any,
        action: Any,
        observation: dict[str, Any],
        reward: float | None,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
    ) -> None: ...

    async def on_close(self, env: Any) -> None: ...


EnvLinker = Callable[[Any, Any], None]
"""Links a new env to its ``job`` argument (or to the current job when it is ``None``)."""


def _no_jobs(env: Any, job: Any) -> None:
    if job is not None:
        raise TypeError("job= needs hud_gym.jobs: import hud_gym (or hud_gym.jobs) first")


_linker: list[EnvLinker] = [_no_jobs]


def set_env_linker(linker: EnvLinker) -> None:
    """Hand every new env (and its ``job=`` argument) to ``linker``."""
    _linker[0] = linker


def link_new_env(env: Any, job: Any) -> None:
    """Called by the env core at the end of ``HudEnv.__init__``."""
    _linker[0](env, job)
