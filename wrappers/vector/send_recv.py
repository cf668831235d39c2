"""The base of hud-gym's vector envs: EnvPool's ``send`` / ``recv``, with ``step`` = ``send`` + ``recv``.

:class:`SendRecvVectorEnv` does everything that does not depend on where the sub-envs run: it
checks ``reset``'s seeds and ``reset_mask`` and ``send``'s env ids, keeps each env's autoreset
state and latest observation, waits in ``recv`` for ``min_batch`` envs or ``timeout`` seconds, and
batches the rows (a failed step's absent reward is ``NaN``). A backend supplies only:

- ``_reset(indices, seeds, options)``: reset those envs, concurrently;
- ``_send(i, action, needs_reset)``: start env ``i``'s step under the autoreset rules
  (:mod:`~hud_gym.wrappers.vector.autoreset`), returning a handle kept in ``_in_flight``;
- ``_recv(timeout)``: the steps in flight that have finished, removed from ``_in_flight``,
  waiting up to ``timeout`` seconds for one when none has;

plus ``call``, ``render`` and ``close_extras``. The backends are
:class:`~hud_gym.wrappers.vector.local.HudVectorEnv` (this process's event loop) and
:class:`~hud_gym.wrappers.integrations.ray_vector.RayVectorEnv` (Ray actors).

Example:
    >>> envs = gymnasium.make_vec("hud/QA-v0", num_envs=3, taskset="qa-basic")   # a HudVectorEnv
    >>> obs, infos = envs.reset(seed=0)
    >>> envs.send([WaitAction(time=500), ResponseAction(text="Paris"), ResponseAction(text="4")])
    >>> obs, rewards, terminated, truncated, infos = envs.recv(min_batch=2)
    >>> infos["env_id"]                                   # the two envs that did not wait
    array([1, 2])
    >>> envs.close()
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate

from hud_gym.wrappers.vector import dict_actions
from hud_gym.wrappers.vector.autoreset import needs_reset_after
from hud_gym.wrappers.vector.batching import (
    InfoMode,
    StepResult,
    batch_rows,
    empty_batch,
    numeric_info,
    reset_indices,
    reset_seeds,
    send_ids,
    unbatch_actions,
)

__all__ = ["SendRecvVectorEnv"]

Batch = tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]
"""A batch of rows: observations, rewards (NaN: absent), terminations, truncations, infos."""


class SendRecvVectorEnv(VectorEnv):
    """A Gymnasium ``VectorEnv`` built on ``send`` / ``recv``; see the module docstring.

    Args:
        num_envs: how many sub-envs.
        autoreset_mode: Gymnasium's autoreset mode (``NEXT_STEP`` by default).
        copy: accepted for ``SyncVectorEnv`` compatibility: every batch is built anew, so the
            observations returned are always the caller's own.
        info_mode: ``"all"`` (every info key; strings, ``None``, grades and timings are batched
            as object arrays) or ``"numeric"`` (only the numbers, bools and numeric arrays,
            nested dicts included: what trainers that move infos to tensors, as Gymnasium's
            ``NumpyToTorch``, can take); see :func:`~hud_gym.wrappers.vector.batching.numeric_info`.
    """

    _closed = True  # until the backend's envs exist: closing before then has nothing to close

    def __init__(
        self,
        num_envs: int,
        *,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        copy: bool = True,
        info_mode: InfoMode = "all",
    ) -> None:
        if info_mode not in ("all", "numeric"):
            raise ValueError(f"info_mode must be 'all' or 'numeric', got {info_mode!r}")
        self.info_mode: InfoMode = info_mode
        self.num_envs = num_envs
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.copy = copy
        # The backend's handles of the steps in flight, by env id; _recv removes the finished ones.
        self._in_flight: dict[int, Any] = {}
        # Each env's latest observation: the reset batch is built from them, a failed env reports its last.
        self._last_obs: list[Any] = [None] * num_envs
        # Envs whose episode ended without a reset since (autoreset.needs_reset_after).
        self._needs_reset = np.zeros(num_envs, dtype=np.bool_)

    def _describe_batch(
        self,
        *,
        metadata: dict[str, Any],
        render_mode: str | None,
        spec: Any,
        observation_space: gymnasium.Space,
        action_space: gymnasium.Space,
    ) -> None:
        """Set the batch's metadata and spaces from those of its first sub-env."""
        self.metadata = {**metadata, "autoreset_mode": self.autoreset_mode}
        self.render_mode = render_mode
        self.spec = spec
        self.single_observation_space = observation_space
        self.single_action_space = action_space
        self.observation_space = batch_space(observation_space, self.num_envs)
        self.action_space = batch_space(action_space, self.num_envs)

    def _add_info(self, vector_infos: dict[str, Any], env_info: dict[str, Any], env_num: int) -> dict[str, Any]:
        if self.info_mode == "numeric":
            env_info = numeric_info(env_info)
        return super()._add_info(vector_infos, env_info, env_num)

    # ------------------------------------------------------------------ reset

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every sub-env (or those in ``options["reset_mask"]``) concurrently.

        ``seed`` is ``None``, an int (env ``i`` gets ``seed + i``) or a list of seeds
        (``[s] * N`` gives every env the same task instance: a GRPO group).

        Raises:
            RuntimeError: the vector env is closed, or a step is in flight.
            ValueError: a seed list or ``reset_mask`` of the wrong size.
        """
        self._check_open()
        if self._in_flight:
            raise RuntimeError(f"envs {sorted(self._in_flight)} have a step in flight: recv() it before reset()")
        seeds = reset_seeds(seed, self.num_envs)
        indices, options = reset_indices(options, self.num_envs)
        results = self._reset(indices, seeds, options)
        infos: dict[str, Any] = {}
        for i, (observation, info) in zip(indices, results, strict=True):
            self._last_obs[i] = observation
            self._needs_reset[i] = False
            infos = self._add_info(infos, info, i)
        observations = concatenate(
            self.single_observation_space,
            self._last_obs,
            empty_batch(self.single_observation_space, self.num_envs),
        )
        return observations, infos

    # ------------------------------------------------------------------ step, send, recv

    def step(self, actions: Any) -> Batch:
        """Step every sub-env concurrently; ``actions`` is a batched action-space element or a
        sequence of N per-env actions (CLA models, CLA dicts, lists of them, or space samples)."""
        self.send(unbatch_actions(self.action_space, actions, self.num_envs))
        return self.recv(min_batch=self.num_envs, ordered=True)

    def send(self, actions: Sequence[Any], env_ids: Sequence[int] | None = None) -> None:
        """Start a step of the envs ``env_ids`` (all by default) with one UNBATCHED action each;
        returns at once. Collect the results with :meth:`recv`.

        Raises:
            RuntimeError: the vector env is closed, an env has a step in flight, or (``DISABLED``
                autoreset) an env's episode ended; nothing is started then.
            ValueError, IndexError: ids that do not match the actions or the envs.
        """
        self._check_open()
        env_ids = send_ids(
            actions,
            env_ids,
            self.num_envs,
            busy=self._in_flight,
            ended=self._needs_reset,
            autoreset_mode=self.autoreset_mode,
        )
        for i, action in zip(env_ids, actions, strict=True):
            self._in_flight[i] = self._send(i, action, bool(self._needs_reset[i]))

    def recv(self, min_batch: int | None = None, timeout: float | None = None, *, ordered: bool = False) -> Batch:
        """Wait until at least ``min_batch`` envs in flight have finished their step (all of them
        by default), or ``timeout`` seconds; return the finished ones as a batch.

        ``infos["env_id"]`` names the env of each row (left out when ``ordered`` and every env is
        in the batch, as ``step`` does); with ``ordered`` rows follow env id order. A failed row's
        reward is ``NaN``.

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
            rows.update(self._recv(None if deadline is None else max(0.0, deadline - time.monotonic())))
            if len(rows) >= wanted or not self._in_flight:
                break
            if deadline is not None and time.monotonic() >= deadline:
                if rows:
                    break
                raise TimeoutError(f"no env finished its step within {timeout} s")
        finished = sorted(rows) if ordered else list(rows)
        for i in finished:
            self._last_obs[i] = rows[i][0]
            self._needs_reset[i] = needs_reset_after(self.autoreset_mode, rows[i])
        return batch_rows(
            self, [(i, rows[i]) for i in finished], with_env_ids=not (ordered and len(finished) == self.num_envs)
        )

    def batch_actions(self, actions: Sequence[Any]) -> dict[str, Any]:
        """One CLA action per env as one element of :attr:`action_space`, the batched ``Dict``
        (:func:`~hud_gym.wrappers.vector.dict_actions.batch_actions`)."""
        return dict_actions.batch_actions(self, actions)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """An attribute of every sub-env (``SyncVectorEnv.get_attr``)."""
        return tuple(self.call(name))

    @property
    def np_random_seed(self) -> tuple[int, ...]:  # type: ignore[override]
        """Every sub-env's seed (``(42, 43, ...)`` after ``reset(seed=42)``), as ``SyncVectorEnv``."""
        return self.get_attr("np_random_seed")

    @property  # type: ignore[misc]  # VectorEnv.np_random has a setter, SyncVectorEnv.np_random none
    def np_random(self) -> tuple[np.random.Generator, ...]:  # type: ignore[override]
        """Every sub-env's random generator, as ``SyncVectorEnv``."""
        return self.get_attr("np_random")

    @property
    def in_flight(self) -> list[int]:
        """The ids of the envs with a step sent and not yet received, in order."""
        return sorted(self._in_flight)

    # ------------------------------------------------------------------ the backend's part

    def _reset(
        self, indices: list[int], seeds: list[int | None], options: dict[str, Any]
    ) -> list[tuple[Any, dict[str, Any]]]:
        """Reset the envs ``indices`` (env ``i`` with ``seeds[i]``) concurrently; their
        ``(observation, info)`` in the order of ``indices``."""
        raise NotImplementedError

    def _send(self, i: int, action: Any, needs_reset: bool) -> Any:
        """Start env ``i``'s step (a reset in its place when ``needs_reset``); its handle."""
        raise NotImplementedError

    def _recv(self, timeout: float | None) -> dict[int, StepResult]:
        """The finished steps of ``_in_flight`` (removed from it), waiting up to ``timeout``
        seconds (``None``: as long as it takes) for one when none has finished; may be empty."""
        raise NotImplementedError

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call a method (or read an attribute) of every sub-env."""
        raise NotImplementedError

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the vector env is closed")
