"""A batched vector env: N hud-gym envs in one process, stepped concurrently on one event loop.

All sub-envs share the process's private loop thread (and so one browser, for ``hud/Browser-v0``);
a batched ``step`` awaits every sub-env's ``astep`` at once, so N slow pages cost about one slow
page, not N. EnvPool-style :meth:`HudVectorEnv.send` / :meth:`HudVectorEnv.recv` let a trainer
collect whichever envs finish first, so one slow page never stalls the rest; ``step`` is ``send``
to every env followed by ``recv`` of all of them.

The three Gymnasium autoreset modes behave exactly as in ``SyncVectorEnv`` (NEXT_STEP is the
default, advertised in ``metadata["autoreset_mode"]``). A sub-env whose step raises is replaced by
a new one and its episode is reported as ``terminated`` with ``info["status"] == "env_error"``; one
whose step (autoreset included) outlives ``step_timeout`` is replaced too, its episode reported as
``truncated`` with ``info["status"] == "timeout"``.

**Absent rewards are NaN.** A row whose step failed (``infos["status"]`` is ``env_error``,
``timeout`` or ``eval_error``: the sub-env's step returned ``reward=None``) has ``NaN`` in the
float reward array, never a made-up 0; ``infos["error"]`` says why. Mask them out
(``np.isnan(rewards)``) before using the rewards, or use an adapter that does it for you
(:mod:`hud_gym.wrappers.integrations.sb3_vec_env`'s ``failed_reward``).

Example:
    >>> import gymnasium, hud_gym
    >>> envs = gymnasium.make_vec("hud/QA-v0", num_envs=4, taskset="qa-basic")
    >>> obs, infos = envs.reset(seed=[7] * 4)          # the same task in every env (GRPO)
    >>> obs["text"][0] == obs["text"][3]
    True
    >>> envs.close()
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array

from hud_gym.core.env import HudEnv
from hud_gym.core.loop import get_loop_thread
from hud_gym.wrappers.rollout.placement import controller_kwargs
from hud_gym.wrappers.vector.batching import (
    StepResult,
    batch_rows,
    reset_indices,
    reset_seeds,
    send_ids,
    unbatch_actions,
)

__all__ = ["HudVectorEnv", "browser_vector_env", "qa_vector_env", "ubuntu_vector_env"]

class HudVectorEnv(VectorEnv):
    """N hud-gym envs stepped concurrently on the shared event loop.

    Args:
        env_fns: functions that each make one sub-env (a :class:`HudEnv`).
        autoreset_mode: Gymnasium's autoreset mode (``NEXT_STEP`` by default).
        copy: accepted for ``SyncVectorEnv`` compatibility: every batch is built anew (no buffer
            is reused between calls), so the observations returned are always the caller's own.
        step_timeout: seconds one sub-env's step may take in all (its action, observation,
            evaluation and any autoreset) before the env is replaced and the row reported as a
            ``timeout``; by default the sub-env's own ``step_timeout`` + ``reset_timeout``, the
            most its own limits allow.
    """

    def __init__(self, env_fns: Sequence[Callable[[], HudEnv]], *,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP, copy: bool = True,
                 step_timeout: float | None = None) -> None:
        if not env_fns:
            raise ValueError("a vector env needs at least one env")
        self.env_fns = list(env_fns)
        # Replacement envs are made on the loop thread: make them in this context, so that they
        # are linked to the same job (``hud_gym.jobs.current_job``) as the first ones.
        self._made_in = contextvars.copy_context()
        self.envs: list[HudEnv] = [fn() for fn in self.env_fns]
        for env in self.envs:
            if not isinstance(env, HudEnv):
                raise TypeError(f"HudVectorEnv runs hud-gym envs, got {type(env).__name__}")
        self.num_envs = len(self.envs)
        self.autoreset_mode = autoreset_mode if isinstance(autoreset_mode, AutoresetMode) else AutoresetMode(autoreset_mode)
        self.copy = copy
        if step_timeout is not None and step_timeout <= 0:
            raise ValueError(f"step_timeout must be positive, got {step_timeout}")
        self.step_timeout = step_timeout
        first = self.envs[0]
        self.metadata = {**first.metadata, "autoreset_mode": self.autoreset_mode}
        self.render_mode = first.render_mode
        self.spec = first.spec
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._runner = get_loop_thread()
        self._autoreset = np.zeros(self.num_envs, dtype=np.bool_)
        # Each env's latest observation: the batch is rebuilt from these, and a crashed env
        # reports its last one.
        self._last_obs: list[Any] = [None] * self.num_envs
        self._pending: dict[int, concurrent.futures.Future[StepResult]] = {}
        self._closed = False

    @classmethod
    def from_env_class(cls, env_class: type[HudEnv], num_envs: int, *, max_episode_steps: int | None = None,
                       autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP, copy: bool = True,
                       vector_step_timeout: float | None = None, **env_kwargs: Any) -> HudVectorEnv:
        """``num_envs`` envs of ``env_class`` made with ``env_kwargs``; ``max_episode_steps`` becomes
        each env's own ``max_steps`` (so the final step is graded) and ``vector_step_timeout`` the
        vector env's ``step_timeout`` (``step_timeout`` stays each env's own). A list for
        ``controller`` spreads the envs over those places (:mod:`hud_gym.wrappers.rollout.placement`)."""
        if max_episode_steps is not None:
            env_kwargs["max_steps"] = max_episode_steps
        env_fns = [functools.partial(env_class, **controller_kwargs(env_kwargs, i)) for i in range(num_envs)]
        return cls(env_fns, autoreset_mode=autoreset_mode, copy=copy, step_timeout=vector_step_timeout)

    # ------------------------------------------------------------------ reset

    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset every sub-env (or those in ``options["reset_mask"]``) concurrently.

        ``seed`` is ``None``, an int (env ``i`` gets ``seed + i``) or a list of seeds
        (``[s] * N`` gives every env the same task instance: a GRPO group).
        """
        self._check_open()
        if self._pending:
            raise RuntimeError(f"envs {sorted(self._pending)} have a step in flight: recv() it before reset()")
        seeds = reset_seeds(seed, self.num_envs)
        indices, options = reset_indices(options, self.num_envs)

        async def reset_all() -> list[tuple[Any, dict[str, Any]]]:
            return await asyncio.gather(*(self._reset_one(i, seeds[i], options) for i in indices))

        results = self._runner.run(reset_all())
        infos: dict[str, Any] = {}
        for i, (observation, info) in zip(indices, results):
            self._last_obs[i] = observation
            infos = self._add_info(infos, info, i)
            self._autoreset[i] = False
        observations = concatenate(self.single_observation_space, self._last_obs, self._batch(self.num_envs))
        return observations, infos

    def _batch(self, n: int) -> Any:
        return create_empty_array(self.single_observation_space, n)

    async def _reset_one(self, i: int, seed: int | None, options: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        return await self.envs[i].areset(seed=seed, options=dict(options))

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
        env_ids = send_ids(actions, env_ids, self.num_envs, busy=self._pending, ended=self._autoreset,
                           autoreset_mode=self.autoreset_mode)
        for i, action in zip(env_ids, actions):
            self._pending[i] = asyncio.run_coroutine_threadsafe(self._bounded_step(i, action), self._runner.loop)

    def recv(self, min_batch: int | None = None, timeout: float | None = None, *,
             ordered: bool = False) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Wait until at least ``min_batch`` envs in flight have finished their step (all of them
        by default), or ``timeout`` seconds; return the finished ones as a batch.

        ``infos["env_id"]`` names the env of each row. With ``ordered`` rows follow env id order.
        A failed row's reward is ``NaN`` (see the module docstring).

        Raises:
            RuntimeError: nothing is in flight.
            TimeoutError: ``timeout`` passed before any env finished.
        """
        if not self._pending:
            raise RuntimeError("no step in flight: call send() first")
        wanted = len(self._pending) if min_batch is None else max(1, min(min_batch, len(self._pending)))
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            finished = [i for i, future in self._pending.items() if future.done()]
            if len(finished) >= wanted:
                break
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                if finished:
                    break
                raise TimeoutError(f"no env finished its step within {timeout} s")
            concurrent.futures.wait([f for f in self._pending.values() if not f.done()], timeout=remaining,
                                    return_when=concurrent.futures.FIRST_COMPLETED)
        if ordered:
            finished.sort()
        results = [(i, self._pending.pop(i).result()) for i in finished]
        for i, (observation, *_) in results:
            self._last_obs[i] = observation
        observations, rewards, terminations, truncations, infos = batch_rows(
            self, results, with_env_ids=not (ordered and len(results) == self.num_envs))
        return observations, rewards, terminations, truncations, infos

    def _timeout_of(self, env: HudEnv) -> float:
        return self.step_timeout if self.step_timeout is not None else env.step_timeout + env.reset_timeout

    async def _bounded_step(self, i: int, action: Any) -> StepResult:
        """:meth:`_step_one` within the step timeout; past it the env is replaced and the row
        reports ``status="timeout"`` (truncated), its last observation repeated."""
        timeout = self._timeout_of(self.envs[i])
        try:
            return await asyncio.wait_for(self._step_one(i, action), timeout)
        except asyncio.TimeoutError:
            pass
        info: dict[str, Any] = {"status": "timeout", "error": f"sub-env {i} did not finish its step within {timeout} s",
                                "replaced": True}
        await self._replace(i)
        return await self._autoreset_after(i, (self._last_obs[i], None, False, True, info))

    async def _step_one(self, i: int, action: Any) -> StepResult:
        """One env's step with the autoreset rules of ``SyncVectorEnv``."""
        env = self.envs[i]
        if self.autoreset_mode is AutoresetMode.NEXT_STEP and self._autoreset[i]:
            observation, info = await self._reset_or_replace(i)
            self._autoreset[i] = False
            return observation, 0.0, False, False, info
        try:
            observation, reward, terminated, truncated, info = await env.astep(action)
        except Exception as exc:  # noqa: BLE001  (a crashed sub-env is replaced, its episode reported failed)
            observation, reward, terminated, truncated = self._last_obs[i], None, True, False
            info = {"status": "env_error", "error": f"sub-env {i} crashed: {type(exc).__name__}: {exc}", "replaced": True}
            await self._replace(i)
        return await self._autoreset_after(i, (observation, reward, terminated, truncated, info))

    async def _autoreset_after(self, i: int, row: StepResult) -> StepResult:
        """Env ``i``'s finished step under the autoreset mode: with SAME_STEP an ended episode
        resets at once (its observation and info ride along in ``final_obs``/``final_info``, as in
        ``SyncVectorEnv``); otherwise the env is marked for the next step's reset."""
        observation, reward, terminated, truncated, info = row
        ended = terminated or truncated
        if self.autoreset_mode is AutoresetMode.SAME_STEP and ended:
            reset_observation, reset_info = await self._reset_or_replace(i)
            return reset_observation, reward, terminated, truncated, {"final_obs": observation, "final_info": info, **reset_info}
        self._autoreset[i] = ended
        return row

    async def _replace(self, i: int) -> None:
        old = self.envs[i]
        try:
            await old.aclose()
        except Exception:  # noqa: BLE001  (the old env is discarded either way)
            pass
        self.envs[i] = self._made_in.run(self.env_fns[i])

    async def _reset_or_replace(self, i: int) -> tuple[Any, dict[str, Any]]:
        try:
            return await self.envs[i].areset()
        except Exception:  # noqa: BLE001  (one more try on a fresh env; a second failure propagates)
            await self._replace(i)
            observation, info = await self.envs[i].areset()
            info["replaced"] = True
            return observation, info

    # ------------------------------------------------------------------ misc

    @property
    def in_flight(self) -> list[int]:
        """The ids of the envs with a step sent and not yet received, in order."""
        return sorted(self._pending)

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call a method (or read an attribute) of every sub-env."""
        results = []
        for env in self.envs:
            attribute = getattr(env, name)
            results.append(attribute(*args, **kwargs) if callable(attribute) else attribute)
        return tuple(results)

    def render(self) -> tuple[np.ndarray | None, ...]:
        """The last screenshot of every sub-env."""
        return tuple(env.render() for env in self.envs)

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the vector env is closed")

    def close_extras(self, **kwargs: Any) -> None:
        """Close every sub-env (pending steps are cancelled first)."""
        if self._closed:
            return
        for future in self._pending.values():
            future.cancel()
        self._pending.clear()
        for env in self.envs:
            env.close()
        self._closed = True


def _creator(env_path: str) -> Callable[..., HudVectorEnv]:
    def create(num_envs: int = 1, **kwargs: Any) -> HudVectorEnv:
        module, name = env_path.split(":")
        import importlib

        env_class = getattr(importlib.import_module(module), name)
        return HudVectorEnv.from_env_class(env_class, num_envs, **kwargs)

    create.__doc__ = f"``vector_entry_point`` of the gym id: a :class:`HudVectorEnv` of ``{env_path}``."
    return create


qa_vector_env = _creator("hud_gym.envs.qa:QAEnv")
browser_vector_env = _creator("hud_gym.envs.browser:BrowserEnv")
ubuntu_vector_env = _creator("hud_gym.envs.ubuntu:UbuntuEnv")
