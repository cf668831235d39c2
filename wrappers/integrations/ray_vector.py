"""A vector env whose sub-envs live in Ray actors, so rollouts spread over a Ray cluster.

:class:`RayVectorEnv` has the API of :class:`~hud_gym.wrappers.vector.local.HudVectorEnv`: a batched
``step``, EnvPool-style ``send`` / ``recv`` (built on ``ray.wait``; ``infos["env_id"]`` names the
rows), ``reset(seed=int | list)`` and the three Gymnasium autoreset modes with the timelines of
``SyncVectorEnv``. Each sub-env runs in its own actor (``num_cpus=0`` by default: the envs mostly
wait on a browser or a display; :mod:`~hud_gym.wrappers.integrations.ray_actors`), and the
autoreset rules (:mod:`~hud_gym.wrappers.vector.autoreset`) run inside the actor, so an autoreset
costs no extra call. The batching, seeds, ``reset_mask`` and ``recv``'s waiting are
:class:`~hud_gym.wrappers.vector.send_recv.SendRecvVectorEnv`'s; this module is the Ray backend.

Failures never stall the batch:

- an actor that dies (killed, out of memory, its node lost) or whose env raises is reported as a
  ``terminated`` row with ``info["status"] == "env_error"``;
- an actor that does not answer within ``step_timeout`` seconds is killed and reported as a
  ``truncated`` row with ``info["status"] == "timeout"``;

either way ``info["replaced"]`` is True: a fresh actor takes the env's place and is reset the way
the autoreset mode resets an ended episode, so the vector env keeps working. As in
:class:`~hud_gym.wrappers.vector.local.HudVectorEnv`, a failed row's reward (these, and a sub-env's own
``env_error``/``timeout``/``eval_error`` steps) is ``NaN`` in the reward array.

Ray is an optional extra (``pip install 'hud-gym[ray]'``); ``import hud_gym`` never imports it.

Example:
    >>> import ray
    >>> ray.init(num_cpus=2)                                    # or ray.init(address="ray://...")
    >>> envs = RayVectorEnv("hud/QA-v0", num_envs=4, taskset="qa-basic")
    >>> obs, infos = envs.reset(seed=[7] * 4)                  # the same task in every env (GRPO)
    >>> envs.send([ResponseAction(text="Paris")] * 4)
    >>> obs, rewards, terminated, truncated, infos = envs.recv(min_batch=2)   # the first 2 done
    >>> envs.close()                                            # kills every actor
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode

from hud_gym.wrappers.integrations.ray_actors import (
    DEFAULT_ACTOR_OPTIONS,
    GymEnvMaker,
    close_actors,
    ensure_ray,
    failure_message,
    remote_worker,
    writable,
)
from hud_gym.wrappers.rollout.placement import controller_kwargs
from hud_gym.wrappers.vector import autoreset
from hud_gym.wrappers.vector.batching import StepResult
from hud_gym.wrappers.vector.send_recv import SendRecvVectorEnv

__all__ = ["RayVectorEnv"]


@dataclass
class _InFlight:
    """A call to a sub-env's actor awaiting its answer: a step (the actor runs the autoreset rules
    itself), or a call of the autoreset ``program`` the driver runs for a failed step (SAME_STEP's
    reset of the fresh actor), with that ``failed_row``."""

    ref: Any
    deadline: float | None
    program: autoreset.Program | None = None
    failed_row: StepResult | None = None


class RayVectorEnv(SendRecvVectorEnv):
    """N sub-envs, one Ray actor each, with the API of :class:`~hud_gym.wrappers.vector.local.HudVectorEnv`.

    Args:
        env: a gym id (``"hud/QA-v0"``; the actors make it with ``gymnasium.make(env, **env_kwargs)``)
            or a sequence of picklable env creators (one sub-env each).
        num_envs: how many sub-envs of the gym id (the number of creators otherwise).
        autoreset_mode: Gymnasium's autoreset mode (``NEXT_STEP`` by default).
        max_episode_steps: the step limit of each env (a hud id's own ``max_steps``).
        step_timeout: seconds an actor may take to answer a step or a reset before it is killed
            and replaced (``None``: wait forever).
        start_timeout: extra seconds allowed for the first answer of a new actor (its process
            start, imports, browser launch), so a slow start is not taken for a hung env.
        actor_options: Ray actor options (``num_cpus``, ``resources``, ``runtime_env``, ...) over
            :data:`DEFAULT_ACTOR_OPTIONS`.
        address: the Ray cluster to connect to when Ray is not initialised yet.
        copy: accepted for ``SyncVectorEnv`` compatibility: the batched observations are always
            fresh arrays (never a buffer reused by the next call).
        **env_kwargs: arguments of the env (with a gym id). A list for ``controller`` spreads the
            actors' controllers over those places, e.g. the ``ws://`` servers of a controller
            fleet (:mod:`hud_gym.wrappers.rollout.placement`): actors then hold only the env core.

    Example:
        >>> envs = RayVectorEnv("hud/QA-v0", num_envs=4, taskset="qa-basic", step_timeout=60)
        >>> obs, infos = envs.reset(seed=0)
        >>> envs.close()
    """

    _in_flight: dict[int, _InFlight]

    def __init__(
        self,
        env: str | Sequence[Callable[[], gymnasium.Env]],
        num_envs: int | None = None,
        *,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        max_episode_steps: int | None = None,
        step_timeout: float | None = 300.0,
        start_timeout: float = 120.0,
        actor_options: dict[str, Any] | None = None,
        address: str | None = None,
        copy: bool = True,
        **env_kwargs: Any,
    ) -> None:
        if isinstance(env, str):
            if num_envs is None or num_envs < 1:
                raise ValueError(f"RayVectorEnv({env!r}) needs num_envs >= 1, got {num_envs!r}")
            if max_episode_steps is not None:
                env_kwargs["max_episode_steps"] = max_episode_steps
            self.env_fns: list[Callable[[], gymnasium.Env]] = [
                GymEnvMaker(env, controller_kwargs(env_kwargs, i)) for i in range(num_envs)
            ]
        else:
            self.env_fns = list(env)
            if not self.env_fns or not all(callable(fn) for fn in self.env_fns):
                raise ValueError("RayVectorEnv needs a gym id or a non-empty sequence of env creators")
            if num_envs is not None and num_envs != len(self.env_fns):
                raise ValueError(f"num_envs={num_envs} but {len(self.env_fns)} env creators were given")
            if env_kwargs or max_episode_steps is not None:
                raise ValueError("env kwargs and max_episode_steps apply to a gym id; put them in the env creators")
        if step_timeout is not None and step_timeout <= 0:
            raise ValueError(f"step_timeout must be positive or None, got {step_timeout}")
        super().__init__(len(self.env_fns), autoreset_mode=autoreset_mode, copy=copy)
        self.step_timeout = step_timeout
        self.start_timeout = start_timeout
        self._ray = ensure_ray(address)
        self.actor_options = {**DEFAULT_ACTOR_OPTIONS, **(actor_options or {})}
        self._worker_class = remote_worker(self._ray, self.actor_options)
        # Envs whose actor has not answered yet (allowed start_timeout more).
        self._fresh: set[int] = set()
        self.actors: list[Any] = [self._new_actor(i) for i in range(self.num_envs)]
        self._closed = False
        try:
            first = self._get(0, self.actors[0].describe.remote(), "describe()")
        except BaseException:
            self.close()
            raise
        self._describe_batch(
            metadata=first["metadata"],
            render_mode=first["render_mode"],
            spec=first["spec"],
            observation_space=first["observation_space"],
            action_space=first["action_space"],
        )

    # ------------------------------------------------------------------ actors

    def _new_actor(self, i: int) -> Any:
        self._fresh.add(i)
        return self._worker_class.remote(self.env_fns[i], self.autoreset_mode.value)

    def _replace(self, i: int) -> None:
        """Kill sub-env ``i``'s actor (dead or hung) and start a fresh one in its place."""
        try:
            self._ray.kill(self.actors[i], no_restart=True)
        except Exception:  # noqa: BLE001  (an actor already gone cannot be killed twice)
            pass
        self.actors[i] = self._new_actor(i)

    def _timeout(self, indices: Sequence[int]) -> float | None:
        """Seconds the envs ``indices`` may take to answer a call."""
        if self.step_timeout is None:
            return None
        return self.step_timeout + (self.start_timeout if self._fresh.intersection(indices) else 0.0)

    def _deadline(self, i: int) -> float | None:
        timeout = self._timeout([i])
        return None if timeout is None else time.monotonic() + timeout

    def _get(self, i: int, ref: Any, what: str) -> Any:
        timeout = self._timeout([i])
        ready, _ = self._ray.wait([ref], timeout=timeout)
        if not ready:
            raise TimeoutError(f"the actor of sub-env {i} did not answer {what} within {timeout} s")
        result = writable(self._ray.get(ref))
        self._fresh.discard(i)
        return result

    # ------------------------------------------------------------------ the backend: reset, send, recv

    def _reset(
        self, indices: list[int], seeds: list[int | None], options: dict[str, Any]
    ) -> list[tuple[Any, dict[str, Any]]]:
        """A sub-env whose actor died or hangs is replaced and reset once more
        (``info["replaced"]``); an error raised by the env itself (a bad option, an unknown task)
        is raised here."""
        results = self._reset_many(indices, seeds, options, retry=True)
        return [results[i] for i in indices]

    def _reset_many(
        self, indices: list[int], seeds: list[int | None], options: dict[str, Any], retry: bool
    ) -> dict[int, tuple[Any, dict[str, Any]]]:
        refs = {i: self.actors[i].reset.remote(seeds[i], options) for i in indices}
        timeout = self._timeout(indices)
        ready, _ = self._ray.wait(list(refs.values()), num_returns=len(refs), timeout=timeout)
        ready_set = set(ready)
        results: dict[int, tuple[Any, dict[str, Any]]] = {}
        failed: dict[int, str] = {}
        for i, ref in refs.items():
            if ref not in ready_set:
                failed[i] = f"no answer within {timeout} s"
                continue
            try:
                results[i] = writable(self._ray.get(ref))
                self._fresh.discard(i)
            except self._ray.exceptions.RayTaskError:
                raise  # the env itself refused the reset: the caller's error to see
            except self._ray.exceptions.RayError as exc:
                failed[i] = failure_message(exc)
        if failed:
            if not retry:
                raise RuntimeError(f"sub-envs {sorted(failed)} could not be reset on fresh actors: {failed}")
            for i in failed:
                self._replace(i)
            for i, (observation, info) in self._reset_many(list(failed), seeds, options, retry=False).items():
                results[i] = (observation, {**info, "replaced": True})
        return results

    def _send(self, i: int, action: Any, needs_reset: bool) -> _InFlight:
        return _InFlight(self.actors[i].step.remote(action, needs_reset), self._deadline(i))

    def _recv(self, timeout: float | None) -> dict[int, StepResult]:
        """The answered calls; a sub-env past ``step_timeout`` counts as finished, its row a
        ``timeout``. Waits at most until the first call in flight is overdue."""
        rows: dict[int, StepResult] = {}
        self._collect(rows)
        if rows or timeout == 0:
            return rows
        now = time.monotonic()
        limits = [call.deadline - now for call in self._in_flight.values() if call.deadline is not None]
        if timeout is not None:
            limits.append(timeout)
        self._ray.wait(
            [call.ref for call in self._in_flight.values()],
            num_returns=1,
            timeout=max(0.0, min(limits)) if limits else None,
        )
        self._collect(rows)
        return rows

    def _collect(self, rows: dict[int, StepResult]) -> None:
        """Move every answered (or overdue) call in flight to ``rows``, without blocking."""
        refs = [f.ref for f in self._in_flight.values()]
        ready, _ = self._ray.wait(refs, num_returns=len(refs), timeout=0)
        ready_set = set(ready)
        now = time.monotonic()
        for i, call in list(self._in_flight.items()):
            if call.ref in ready_set:
                try:
                    result = self._ray.get(call.ref)
                except self._ray.exceptions.RayError as exc:
                    self._fail(i, call, "env_error", f"sub-env {i} crashed: {failure_message(exc)}", rows)
                    continue
                del self._in_flight[i]
                self._fresh.discard(i)
                if call.program is None:
                    # The observation is copied into the batch; only the info needs writable arrays.
                    observation, reward, terminated, truncated, info = result
                    rows[i] = (observation, reward, terminated, truncated, writable(info))
                else:
                    self._advance(i, call.program, writable(result), call.failed_row, rows)
            elif call.deadline is not None and now >= call.deadline:
                self._fail(i, call, "timeout", f"sub-env {i} did not answer within {self.step_timeout} s", rows)

    def _fail(self, i: int, call: _InFlight, status: str, error: str, rows: dict[int, StepResult]) -> None:
        """Report sub-env ``i``'s failed call and put a fresh actor in its place."""
        del self._in_flight[i]
        self._replace(i)
        if call.failed_row is not None:
            # The replacement could not be reset either: report the first failure, with no reset
            # (so the next step resets: autoreset.needs_reset_after) and no more tries here.
            observation, reward, terminated, truncated, info = call.failed_row
            rows[i] = (observation, reward, terminated, truncated, {**info, "error": f"{info['error']}; then {error}"})
            return
        # As HudEnv: a crash terminates the episode, a timeout truncates it.
        row: StepResult = (
            writable(self._last_obs[i]),
            None,
            status == "env_error",
            status == "timeout",
            {"status": status, "error": error, "replaced": True},
        )
        self._advance(i, autoreset.end_program(self.autoreset_mode, row), None, row, rows)

    def _advance(
        self,
        i: int,
        program: autoreset.Program,
        answer: Any,
        failed_row: StepResult | None,
        rows: dict[int, StepResult],
    ) -> None:
        """Send ``answer`` to sub-env ``i``'s autoreset ``program`` (``None`` starts it): its row
        goes to ``rows`` when it returns one, else its next call to the actor is put in flight."""
        try:
            request = program.send(answer)
        except StopIteration as done:
            rows[i] = done.value
            return
        actor = self.actors[i]
        ref = actor.step.remote(request.action) if isinstance(request, autoreset.Step) else actor.reset.remote(None, {})
        self._in_flight[i] = _InFlight(ref, self._deadline(i), program, failed_row)

    # ------------------------------------------------------------------ misc

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call a method (or read an attribute) of every sub-env, in its actor."""
        self._check_open()
        refs = [actor.call.remote(name, args, kwargs) for actor in self.actors]
        return tuple(self._get(i, ref, f"call({name!r})") for i, ref in enumerate(refs))

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """An attribute of every sub-env."""
        return self.call(name)

    def render(self) -> tuple[np.ndarray | None, ...]:  # type: ignore[override]  # None: a sub-env with no frame yet
        """The last screenshot of every sub-env."""
        self._check_open()
        return tuple(self._get(i, actor.render.remote(), "render()") for i, actor in enumerate(self.actors))

    def describe(self) -> list[dict[str, Any]]:
        """What every sub-env's actor reports of itself: ``pid`` (on its node), ``actor_id``,
        ``gym``, spaces."""
        self._check_open()
        return [self._get(i, actor.describe.remote(), "describe()") for i, actor in enumerate(self.actors)]

    def close_extras(self, **kwargs: Any) -> None:
        """Close every sub-env (which closes its browser), then kill every actor."""
        if self._closed:
            return
        self._closed = True
        busy = set(self._in_flight)
        self._in_flight.clear()
        # An actor with a call in flight would close only after it: kill it at once.
        close_actors(
            self._ray,
            [a for i, a in enumerate(self.actors) if i not in busy],
            [a for i, a in enumerate(self.actors) if i in busy],
        )
