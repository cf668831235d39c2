"""A vector env whose sub-envs live in Ray actors, so rollouts spread over a Ray cluster.

:class:`RayVectorEnv` has the API of :class:`~hud_gym.wrappers.vector.local.HudVectorEnv`: a batched
``step``, EnvPool-style ``send`` / ``recv`` (built on ``ray.wait``; ``infos["env_id"]`` names the
rows), ``reset(seed=int | list)`` and the three Gymnasium autoreset modes with the timelines of
``SyncVectorEnv``. Each sub-env runs in its own actor (``num_cpus=0`` by default: the envs mostly
wait on a browser or a display), and the per-env autoreset state machine runs inside the actor.

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
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array

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
from hud_gym.wrappers.vector.batching import (
    StepResult,
    batch_rows,
    reset_indices,
    reset_seeds,
    send_ids,
    unbatch_actions,
)

__all__ = ["RayVectorEnv"]


@dataclass
class _InFlight:
    """A call to sub-env ``i`` awaiting its answer: a step, or (SAME_STEP) the reset of the
    actor that replaced a failed one, with the failed step's row to report with it."""

    ref: Any
    deadline: float | None
    failed_row: StepResult | None = None


class RayVectorEnv(VectorEnv):
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

    def __init__(self, env: str | Sequence[Callable[[], gymnasium.Env]], num_envs: int | None = None, *,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 max_episode_steps: int | None = None, step_timeout: float | None = 300.0,
                 start_timeout: float = 120.0, actor_options: dict[str, Any] | None = None,
                 address: str | None = None, copy: bool = True, **env_kwargs: Any) -> None:
        self._closed = True  # until the actors exist
        self._in_flight: dict[int, _InFlight] = {}
        if isinstance(env, str):
            if num_envs is None or num_envs < 1:
                raise ValueError(f"RayVectorEnv({env!r}) needs num_envs >= 1, got {num_envs!r}")
            if max_episode_steps is not None:
                env_kwargs["max_episode_steps"] = max_episode_steps
            self.env_fns: list[Callable[[], gymnasium.Env]] = [
                GymEnvMaker(env, controller_kwargs(env_kwargs, i)) for i in range(num_envs)]
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
        self.num_envs = len(self.env_fns)
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.step_timeout = step_timeout
        self.start_timeout = start_timeout
        self.copy = copy
        self._ray = ensure_ray(address)
        self.actor_options = {**DEFAULT_ACTOR_OPTIONS, **(actor_options or {})}
        self._worker_class = remote_worker(self._ray, self.actor_options)
        # Envs whose actor has not answered yet (allowed start_timeout more).
        self._fresh: set[int] = set()
        self.actors: list[Any] = [self._new_actor(i, needs_reset=False) for i in range(self.num_envs)]
        self._closed = False
        try:
            first = self._get(0, self.actors[0].describe.remote(), "describe()")
        except BaseException:
            self.close()
            raise
        self.metadata = {**first["metadata"], "autoreset_mode": self.autoreset_mode}
        self.render_mode = first["render_mode"]
        self.spec = first["spec"]
        self.single_observation_space = first["observation_space"]
        self.single_action_space = first["action_space"]
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        # Each env's latest observation: a failed env reports its last one.
        self._last_obs: list[Any] = [None] * self.num_envs
        # DISABLED: envs whose episode ended and wait for a reset_mask reset.
        self._ended = np.zeros(self.num_envs, dtype=np.bool_)

    # ------------------------------------------------------------------ actors

    def _new_actor(self, i: int, *, needs_reset: bool) -> Any:
        self._fresh.add(i)
        return self._worker_class.remote(self.env_fns[i], self.autoreset_mode.value, needs_reset)

    def _replace(self, i: int, *, needs_reset: bool) -> None:
        """Kill sub-env ``i``'s actor (dead or hung) and start a fresh one in its place."""
        try:
            self._ray.kill(self.actors[i], no_restart=True)
        except Exception:  # noqa: BLE001  (an actor already gone cannot be killed twice)
            pass
        self.actors[i] = self._new_actor(i, needs_reset=needs_reset)

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

    # ------------------------------------------------------------------ reset

    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset every sub-env (or those in ``options["reset_mask"]``) concurrently.

        ``seed`` is ``None``, an int (env ``i`` gets ``seed + i``) or a list of seeds
        (``[s] * N`` gives every env the same task instance: a GRPO group). A sub-env whose
        actor died or hangs is replaced and reset once more (``info["replaced"]``); an error
        raised by the env itself (a bad option, an unknown task) is raised here.
        """
        self._check_open()
        if self._in_flight:
            raise RuntimeError(f"envs {sorted(self._in_flight)} have a step in flight: recv() it before reset()")
        seeds = reset_seeds(seed, self.num_envs)
        indices, options = reset_indices(options, self.num_envs)
        results = self._reset_many(indices, seeds, options, retry=True)
        infos: dict[str, Any] = {}
        for i in indices:
            observation, info = results[i]
            self._last_obs[i] = observation
            self._ended[i] = False
            infos = self._add_info(infos, info, i)
        observations = concatenate(self.single_observation_space, self._last_obs, self._batch(self.num_envs))
        return observations, infos

    def _reset_many(self, indices: list[int], seeds: list[int | None], options: dict[str, Any],
                    retry: bool) -> dict[int, tuple[Any, dict[str, Any]]]:
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
                self._replace(i, needs_reset=False)
            for i, (observation, info) in self._reset_many(list(failed), seeds, options, retry=False).items():
                results[i] = (observation, {**info, "replaced": True})
        return results

    def _batch(self, n: int) -> Any:
        return create_empty_array(self.single_observation_space, n)

    # ------------------------------------------------------------------ step, send, recv

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every sub-env concurrently; ``actions`` is a batched action-space element or a
        sequence of N per-env actions (CLA models, CLA dicts, lists of them, or space samples)."""
        self.send(unbatch_actions(self.action_space, actions, self.num_envs))
        return self.recv(min_batch=self.num_envs, ordered=True)

    def send(self, actions: Sequence[Any], env_ids: Sequence[int] | None = None) -> None:
        """Start a step of the envs ``env_ids`` (all by default) with one UNBATCHED action each;
        returns at once. Collect the results with :meth:`recv`."""
        self._check_open()
        env_ids = send_ids(actions, env_ids, self.num_envs, busy=self._in_flight, ended=self._ended,
                           autoreset_mode=self.autoreset_mode)
        for i, action in zip(env_ids, actions):
            self._in_flight[i] = _InFlight(self.actors[i].step.remote(action), self._deadline(i))

    def recv(self, min_batch: int | None = None, timeout: float | None = None, *,
             ordered: bool = False) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Wait until at least ``min_batch`` envs in flight have finished their step (all of them
        by default), or ``timeout`` seconds; return the finished ones as a batch.

        ``infos["env_id"]`` names the env of each row (left out when ``ordered`` and every env is
        in the batch, as ``step`` does). A sub-env past ``step_timeout`` counts as finished: its
        row has ``status == "timeout"``.

        Raises:
            RuntimeError: nothing is in flight.
            TimeoutError: ``timeout`` passed before any env finished.
        """
        if not self._in_flight:
            raise RuntimeError("no step in flight: call send() first")
        wanted = len(self._in_flight) if min_batch is None else max(1, min(min_batch, len(self._in_flight)))
        deadline = None if timeout is None else time.monotonic() + timeout
        rows: dict[int, StepResult] = {}
        while True:
            self._collect(rows)
            if len(rows) >= wanted or not self._in_flight:
                break
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                if rows:
                    break
                raise TimeoutError(f"no env finished its step within {timeout} s")
            limits = [d - now for d in (deadline, *(f.deadline for f in self._in_flight.values())) if d is not None]
            self._ray.wait([f.ref for f in self._in_flight.values()], num_returns=1,
                           timeout=max(0.0, min(limits)) if limits else None)
        finished = sorted(rows) if ordered else list(rows)
        for i in finished:
            observation, _, terminated, truncated, _ = rows[i]
            self._last_obs[i] = observation
            self._ended[i] = bool(terminated or truncated)
        return batch_rows(self, [(i, rows[i]) for i in finished], with_env_ids=not (ordered and len(finished) == self.num_envs))

    def _collect(self, rows: dict[int, StepResult]) -> None:
        """Move every answered (or overdue) call in flight to ``rows``, without blocking."""
        refs = [f.ref for f in self._in_flight.values()]
        ready, _ = self._ray.wait(refs, num_returns=len(refs), timeout=0)
        ready_set = set(ready)
        now = time.monotonic()
        for i, call in list(self._in_flight.items()):
            if call.ref in ready_set:
                try:
                    # The observation is copied into the batch; only the info needs writable arrays.
                    result = self._ray.get(call.ref)
                except self._ray.exceptions.RayError as exc:
                    self._fail(i, call, "env_error", f"sub-env {i} crashed: {failure_message(exc)}", rows)
                    continue
                del self._in_flight[i]
                self._fresh.discard(i)
                if call.failed_row is None:
                    observation, reward, terminated, truncated, info = result
                    rows[i] = (observation, reward, terminated, truncated, writable(info))
                else:
                    reset_observation, reset_info = result
                    reset_info = writable(reset_info)
                    observation, reward, terminated, truncated, info = call.failed_row
                    rows[i] = (reset_observation, reward, terminated, truncated,
                               {"final_obs": writable(observation), "final_info": info, **reset_info})
            elif call.deadline is not None and now >= call.deadline:
                self._fail(i, call, "timeout", f"sub-env {i} did not answer within {self.step_timeout} s", rows)

    def _fail(self, i: int, call: _InFlight, status: str, error: str, rows: dict[int, StepResult]) -> None:
        """Report sub-env ``i``'s failed call and put a fresh actor in its place."""
        del self._in_flight[i]
        if call.failed_row is not None:
            # The replacement could not be reset either: report the first failure; the next
            # actor resets on its first step.
            observation, reward, terminated, truncated, info = call.failed_row
            self._replace(i, needs_reset=True)
            rows[i] = (observation, reward, terminated, truncated, {**info, "error": f"{info['error']}; then {error}"})
            return
        # As HudEnv: a crash terminates the episode, a timeout truncates it.
        row: StepResult = (self._last_obs[i], None, status == "env_error", status == "timeout",
                           {"status": status, "error": error, "replaced": True})
        if self.autoreset_mode is AutoresetMode.SAME_STEP:
            self._replace(i, needs_reset=False)
            self._in_flight[i] = _InFlight(self.actors[i].reset.remote(None, {}), self._deadline(i), failed_row=row)
            return
        self._replace(i, needs_reset=self.autoreset_mode is AutoresetMode.NEXT_STEP)
        rows[i] = row

    # ------------------------------------------------------------------ misc

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call a method (or read an attribute) of every sub-env, in its actor."""
        self._check_open()
        refs = [actor.call.remote(name, args, kwargs) for actor in self.actors]
        return tuple(self._get(i, ref, f"call({name!r})") for i, ref in enumerate(refs))

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """An attribute of every sub-env."""
        return self.call(name)

    def render(self) -> tuple[np.ndarray | None, ...]:
        """The last screenshot of every sub-env."""
        self._check_open()
        return tuple(self._get(i, actor.render.remote(), "render()") for i, actor in enumerate(self.actors))

    def describe(self) -> list[dict[str, Any]]:
        """What every sub-env's actor reports of itself: ``pid`` (on its node), ``actor_id``,
        ``gym_type``, spaces."""
        self._check_open()
        return [self._get(i, actor.describe.remote(), "describe()") for i, actor in enumerate(self.actors)]

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the vector env is closed")

    def close_extras(self, **kwargs: Any) -> None:
        """Close every sub-env (which closes its browser), then kill every actor."""
        if self._closed:
            return
        self._closed = True
        busy = set(self._in_flight)
        self._in_flight.clear()
        # An actor with a call in flight would close only after it: kill it at once.
        close_actors(self._ray, [a for i, a in enumerate(self.actors) if i not in busy],
                     [a for i, a in enumerate(self.actors) if i in busy])
