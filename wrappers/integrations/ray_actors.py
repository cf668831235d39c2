"""Ray's env actors: connecting to Ray, the picklable env maker, and the actor body that holds one env.

Used by :class:`~hud_gym.wrappers.integrations.ray_vector.RayVectorEnv` (one actor per sub-env)
and :class:`~hud_gym.wrappers.integrations.ray_pool.RayEnvPool` (one actor per pooled env).
Ray is an optional extra (``pip install 'hud-gym[ray]'``): this module imports it only when a
function here needs it, so ``import hud_gym`` never does.

Example:
    >>> ray = ensure_ray()                                     # ray.init() unless initialised
    >>> Worker = remote_worker(ray, DEFAULT_ACTOR_OPTIONS)
    >>> actor = Worker.remote(GymEnvMaker("hud/QA-v0", {"taskset": "qa-basic"}))
    >>> observation, info = ray.get(actor.reset.remote(seed=0))
    >>> close_actors(ray, [actor])                             # closes the env, kills the actor
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode

from hud_gym.wrappers.vector import autoreset
from hud_gym.wrappers.vector.batching import StepResult

__all__ = [
    "CLOSE_TIMEOUT_S",
    "DEFAULT_ACTOR_OPTIONS",
    "RAY_INSTALL_HINT",
    "EnvWorker",
    "GymEnvMaker",
    "close_actors",
    "ensure_ray",
    "failure_message",
    "import_ray",
    "remote_worker",
    "writable",
]

RAY_INSTALL_HINT = "pip install 'hud-gym[ray]'"

DEFAULT_ACTOR_OPTIONS: dict[str, Any] = {"num_cpus": 0, "max_restarts": 0}
"""Options of every env actor unless overridden: the envs mostly wait on their browser or display,
and a dead actor is replaced by the vector env or pool (so Ray does not restart it)."""

CLOSE_TIMEOUT_S = 30.0
"""Seconds ``close`` lets the actors close their envs before killing them."""


def import_ray() -> ModuleType:
    """The ``ray`` module.

    Raises:
        ImportError: Ray is not installed; the message says how to install it.
    """
    try:
        import ray
    except ImportError as exc:
        raise ImportError(f"Ray support needs the 'ray' package: {RAY_INSTALL_HINT}") from exc
    return ray


def ensure_ray(address: str | None = None) -> ModuleType:
    """The ``ray`` module, connected: ``ray.init(address=address)`` unless Ray is already
    initialised (an initialised Ray is used as it is and ``address`` is ignored)."""
    ray = import_ray()
    if not ray.is_initialized():
        ray.init(address=address)
    return ray


def writable(value: Any) -> Any:
    """``value`` with every read-only numpy array (as Ray's object store hands them out) copied,
    through dicts, lists and tuples."""
    if isinstance(value, np.ndarray):
        return value if value.flags.writeable else value.copy()
    if type(value) is dict:
        return {key: writable(item) for key, item in value.items()}
    if type(value) in (list, tuple):
        return type(value)(writable(item) for item in value)
    return value


@dataclass(frozen=True)
class GymEnvMaker:
    """A picklable env creator: ``gymnasium.make(env_id, **kwargs)`` inside the actor, after
    ``import hud_gym`` registered the hud ids there. ``max_episode_steps`` of a hud id becomes
    the env's own ``max_steps`` (so the final step is graded), as in :func:`hud_gym.make`."""

    env_id: str
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __call__(self) -> gymnasium.Env:
        import hud_gym  # noqa: F401  (registers the hud ids in this process)
        from hud_gym.gyms import all_gyms

        kwargs = dict(self.kwargs)
        if self.env_id in {gym.id for gym in all_gyms()}:
            if "max_episode_steps" in kwargs:
                kwargs["max_steps"] = kwargs.pop("max_episode_steps")
            return gymnasium.make(self.env_id, **kwargs).unwrapped
        return gymnasium.make(self.env_id, **kwargs)


class EnvWorker:
    """The body of one env actor: one env, stepped under the vector env's autoreset mode.

    ``step`` runs the autoreset rules of :mod:`~hud_gym.wrappers.vector.autoreset` here, next to
    the env, so an autoreset costs no extra call: with SAME_STEP the ending step resets at once and
    carries ``final_obs`` / ``final_info``; a step sent with ``needs_reset`` (NEXT_STEP after an
    ended episode, or a replacement actor's first step) resets in place of the step.
    """

    def __init__(
        self, make_env: Callable[[], gymnasium.Env], autoreset_mode: str = AutoresetMode.NEXT_STEP.value
    ) -> None:
        import hud_gym  # noqa: F401  (registers the hud ids in this process)

        self.env = make_env()
        self.autoreset_mode = AutoresetMode(autoreset_mode)

    def describe(self) -> dict[str, Any]:
        """What the driver needs to know of the env: spaces, metadata, gym type, this pid."""
        import ray

        env = self.env
        return {
            "observation_space": env.observation_space,
            "action_space": env.action_space,
            "metadata": dict(env.metadata),
            "render_mode": env.render_mode,
            "spec": env.spec,
            "gym": getattr(env.unwrapped, "gym", None),
            "max_steps": getattr(env.unwrapped, "_max_steps", None),
            "pid": os.getpid(),
            "actor_id": ray.get_runtime_context().get_actor_id(),
        }

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset the env."""
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any, needs_reset: bool = False) -> StepResult:
        """One step under the autoreset rules (see the class docstring)."""
        step: Any = self.env.step  # hud envs' steps give reward NaN when the step failed
        return autoreset.run(autoreset.step_program(self.autoreset_mode, needs_reset, action), step, self.reset)

    def step_with_response(self, action: Any) -> tuple[StepResult, str | None]:
        """A plain step (no autoreset) and the env's ``final_response`` after it."""
        result: Any = self.env.step(action)
        return result, getattr(self.env.unwrapped, "final_response", None)

    def evaluate(self) -> Any:
        """The env's ``evaluate()`` (hud envs: a :class:`~hud_gym.Grade`)."""
        return self.env.unwrapped.evaluate()  # type: ignore[attr-defined]

    def final_response(self) -> str | None:
        """The env's final response in this episode."""
        return getattr(self.env.unwrapped, "final_response", None)

    def set_attr(self, name: str, value: Any) -> None:
        """Set an attribute of the (unwrapped) env."""
        setattr(self.env.unwrapped, name, value)

    def call(self, name: str, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        """Call a method of the env (or read an attribute)."""
        attribute = getattr(self.env, name)
        return attribute(*args, **(kwargs or {})) if callable(attribute) else attribute

    def render(self) -> Any:
        """The env's ``render()``."""
        return self.env.render()

    def close(self) -> int:
        """Close the env and stop this process's hud-gym loop (which closes its browser); returns
        this process's pid."""
        from hud_gym.core.loop import get_loop_thread

        try:
            self.env.close()
        finally:
            get_loop_thread().stop()
        return os.getpid()


def remote_worker(ray: ModuleType, actor_options: dict[str, Any]) -> Any:
    """The :class:`EnvWorker` actor class with ``actor_options`` applied."""
    return ray.remote(EnvWorker).options(**actor_options)


def failure_message(exc: BaseException) -> str:
    """One line naming what failed: the env's own exception for a task error, else the Ray error."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        return f"{type(cause).__name__}: {cause}"
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first_line}"


def close_actors(
    ray: ModuleType, actors: Sequence[Any], busy: Sequence[Any] = (), timeout: float = CLOSE_TIMEOUT_S
) -> None:
    """Let ``actors`` close their envs (up to ``timeout`` seconds), then kill them and ``busy``."""
    for actor in busy:
        try:
            ray.kill(actor, no_restart=True)
        except Exception:  # noqa: BLE001  (already dead)
            pass
    refs = [actor.close.remote() for actor in actors]
    if refs:
        ray.wait(refs, num_returns=len(refs), timeout=timeout)
    for actor in actors:
        try:
            ray.kill(actor, no_restart=True)
        except Exception:  # noqa: BLE001  (already dead)
            pass
