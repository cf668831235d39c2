"""A batched vector env: N hud-gym envs in one process, stepped concurrently on one event loop.

All sub-envs share the process's private loop thread (and so one browser, for ``hud/Browser-v0``);
a batched ``step`` awaits every sub-env's ``astep`` at once, so N slow pages cost about one slow
page, not N. EnvPool-style :meth:`HudVectorEnv.send` / :meth:`HudVectorEnv.recv` let a trainer
collect whichever envs finish first, so one slow page never stalls the rest; ``step`` is ``send``
to every env followed by ``recv`` of all of them (:class:`~hud_gym.wrappers.vector.send_recv.SendRecvVectorEnv`).

The three Gymnasium autoreset modes behave exactly as in ``SyncVectorEnv``
(:mod:`~hud_gym.wrappers.vector.autoreset`; NEXT_STEP is the default, advertised in
``metadata["autoreset_mode"]``). A sub-env whose step raises is replaced by
a new one and its episode is reported as ``terminated`` with ``info["status"] == "env_error"``; one
whose step (autoreset included) outlives ``step_timeout`` is replaced too, its episode reported as
``truncated`` with ``info["status"] == "timeout"``. An autoreset that fails, on a fresh env too (a
controller server that keeps dying), never raises out of ``step``/``recv``: the row reports it
(:class:`~hud_gym.wrappers.vector.autoreset.ResetFailed`) and the env's next step tries again.

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
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode

from hud_gym.core.env import HudEnv
from hud_gym.core.loop import get_loop_thread
from hud_gym.core.time_limit import effective_limit
from hud_gym.wrappers.rollout.placement import controller_kwargs
from hud_gym.wrappers.vector import autoreset, sub_envs
from hud_gym.wrappers.vector.batching import InfoMode, StepResult
from hud_gym.wrappers.vector.send_recv import SendRecvVectorEnv

__all__ = ["HudVectorEnv"]


class HudVectorEnv(SendRecvVectorEnv):
    """N hud-gym envs stepped concurrently on the shared event loop.

    Args:
        env_fns: functions that each make one sub-env: a :class:`HudEnv`, bare or in Gymnasium's
            wrappers (``gymnasium.make``'s, ``RenderCollection``, ``RecordEpisodeStatistics``, ...;
            :mod:`~hud_gym.wrappers.vector.sub_envs`), a new one at every call.
        autoreset_mode: Gymnasium's autoreset mode (``NEXT_STEP`` by default).
        copy: accepted for ``SyncVectorEnv`` compatibility: every batch is built anew (no buffer
            is reused between calls), so the observations returned are always the caller's own.
        step_timeout: seconds one sub-env's step may take in all (its action, observation,
            evaluation and any autoreset) before the env is replaced and the row reported as a
            ``timeout``; by default the sub-env's own ``step_timeout`` + ``reset_timeout``, the
            most its own limits allow.
        info_mode: ``"all"`` or ``"numeric"`` (only numeric info keys; for trainers that move
            infos to tensors): see :class:`~hud_gym.wrappers.vector.send_recv.SendRecvVectorEnv`.
    """

    _in_flight: dict[int, concurrent.futures.Future[StepResult]]

    def __init__(
        self,
        env_fns: Sequence[Callable[[], gymnasium.Env]],
        *,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        copy: bool = True,
        step_timeout: float | None = None,
        info_mode: InfoMode = "all",
    ) -> None:
        if not env_fns:
            raise ValueError("a vector env needs at least one env")
        if step_timeout is not None and step_timeout <= 0:
            raise ValueError(f"step_timeout must be positive, got {step_timeout}")
        super().__init__(len(env_fns), autoreset_mode=autoreset_mode, copy=copy, info_mode=info_mode)
        self.env_fns = list(env_fns)
        self.step_timeout = step_timeout
        # Replacement envs are made on the loop thread: make them in this context, so that they
        # are linked to the same job (``hud_gym.jobs.current_job``) as the first ones.
        self._made_in = contextvars.copy_context()
        self.envs: list[gymnasium.Env] = [fn() for fn in self.env_fns]
        try:
            sub_envs.check_sub_envs(self.envs)
        except Exception:
            for env in {id(env): env for env in self.envs}.values():
                env.close()
            raise
        first = self.envs[0]
        self._describe_batch(
            metadata=first.metadata,
            render_mode=first.render_mode,
            spec=first.spec,
            observation_space=first.observation_space,
            action_space=first.action_space,
        )
        self._runner = get_loop_thread()
        self._closed = False

    @classmethod
    def from_env_class(
        cls,
        env_class: type[HudEnv],
        num_envs: int,
        *,
        max_episode_steps: int | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        copy: bool = True,
        vector_step_timeout: float | None = None,
        info_mode: InfoMode = "all",
        **env_kwargs: Any,
    ) -> HudVectorEnv:
        """``num_envs`` envs of ``env_class`` made with ``env_kwargs``; ``max_episode_steps`` becomes
        each env's own ``max_steps`` (so the final step is graded; the lower one when ``max_steps`` is
        given too) and ``vector_step_timeout`` the
        vector env's ``step_timeout`` (``step_timeout`` stays each env's own). A list for
        ``controller`` spreads the envs over those places (:mod:`hud_gym.wrappers.rollout.placement`)."""
        if max_episode_steps is not None:
            env_kwargs["max_steps"] = effective_limit(env_kwargs.get("max_steps"), max_episode_steps)
        env_fns = [functools.partial(env_class, **controller_kwargs(env_kwargs, i)) for i in range(num_envs)]
        return cls(
            env_fns, autoreset_mode=autoreset_mode, copy=copy, step_timeout=vector_step_timeout, info_mode=info_mode
        )

    # ------------------------------------------------------------------ the backend: reset, send, recv

    def _reset(
        self, indices: list[int], seeds: list[int | None], options: dict[str, Any]
    ) -> list[tuple[Any, dict[str, Any]]]:
        async def reset_all() -> list[tuple[Any, dict[str, Any]]]:
            return await asyncio.gather(*(sub_envs.areset(self.envs[i], seeds[i], dict(options)) for i in indices))

        return self._runner.run(reset_all())

    def _send(self, i: int, action: Any, needs_reset: bool) -> concurrent.futures.Future[StepResult]:
        return asyncio.run_coroutine_threadsafe(self._bounded_step(i, action, needs_reset), self._runner.loop)

    def _recv(self, timeout: float | None) -> dict[int, StepResult]:
        finished = [i for i, future in self._in_flight.items() if future.done()]
        if not finished and timeout != 0:
            concurrent.futures.wait(
                self._in_flight.values(), timeout=timeout, return_when=concurrent.futures.FIRST_COMPLETED
            )
            finished = [i for i, future in self._in_flight.items() if future.done()]
        return {i: self._in_flight.pop(i).result() for i in finished}

    # ------------------------------------------------------------------ one env's step, on the loop

    def _timeout_of(self, env: gymnasium.Env) -> float:
        if self.step_timeout is not None:
            return self.step_timeout
        inner = sub_envs.hud_env(env)
        return inner.step_timeout + inner.reset_timeout

    async def _bounded_step(self, i: int, action: Any, needs_reset: bool) -> StepResult:
        """Env ``i``'s step under the autoreset rules, within the step timeout; past it the env is
        replaced and the row reports ``status="timeout"`` (truncated), its last observation repeated."""
        timeout = self._timeout_of(self.envs[i])
        try:
            return await asyncio.wait_for(
                autoreset.arun(
                    autoreset.step_program(self.autoreset_mode, needs_reset, action),
                    functools.partial(self._step_or_replace, i),
                    functools.partial(self._reset_or_replace, i),
                ),
                timeout,
            )
        except asyncio.TimeoutError:
            pass
        info: dict[str, Any] = {
            "status": "timeout",
            "error": f"sub-env {i} did not finish its step within {timeout} s",
            "replaced": True,
        }
        await self._replace(i)
        return await autoreset.arun(
            autoreset.end_program(self.autoreset_mode, (self._last_obs[i], None, False, True, info)),
            functools.partial(self._step_or_replace, i),
            functools.partial(self._reset_or_replace, i),
        )

    async def _step_or_replace(self, i: int, action: Any) -> StepResult:
        """Env ``i``'s own step; one that raises is replaced and its episode reported failed."""
        try:
            return await sub_envs.astep(self.envs[i], action)
        except Exception as exc:  # noqa: BLE001  (a crashed sub-env is replaced, its episode reported failed)
            info = {
                "status": "env_error",
                "error": f"sub-env {i} crashed: {type(exc).__name__}: {exc}",
                "replaced": True,
            }
            row: StepResult = (self._last_obs[i], None, True, False, info)
            await self._replace(i)
            return row

    async def _replace(self, i: int) -> None:
        old = self.envs[i]
        try:
            await sub_envs.aclose(old)
        except Exception:  # noqa: BLE001  (the old env is discarded either way)
            pass
        self.envs[i] = self._made_in.run(self.env_fns[i])

    async def _reset_or_replace(self, i: int) -> tuple[Any, dict[str, Any]]:
        """Env ``i``'s autoreset; one that raises is tried once more on a fresh env.

        Raises:
            autoreset.ResetFailed: the fresh env's reset failed too (reported in the env's row).
        """
        try:
            return await sub_envs.areset(self.envs[i])
        except Exception:  # noqa: BLE001  (one more try on a fresh env)
            await self._replace(i)
        try:
            observation, info = await sub_envs.areset(self.envs[i])
        except Exception as exc:  # reported in the row; the env's next step tries again
            error = f"sub-env {i} could not be reset: {type(exc).__name__}: {exc}"
            raise autoreset.ResetFailed(error, self._last_obs[i]) from exc
        info["replaced"] = True
        return observation, info

    # ------------------------------------------------------------------ misc

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call a method (or read an attribute) of every sub-env (through its wrappers)."""
        results = []
        for env in self.envs:
            attribute = env.get_wrapper_attr(name)
            results.append(attribute(*args, **kwargs) if callable(attribute) else attribute)
        return tuple(results)

    def set_attr(self, name: str, values: list[Any] | tuple[Any, ...] | Any) -> None:
        """Set an attribute of every sub-env: ``values`` is one value per env (a list or tuple) or
        one value for all, as ``SyncVectorEnv.set_attr``.

        Raises:
            ValueError: a list or tuple of another length than ``num_envs``.
        """
        if not isinstance(values, (list, tuple)):
            values = [values for _ in range(self.num_envs)]
        if len(values) != self.num_envs:
            raise ValueError(
                "Values must be a list or tuple with length equal to the number of environments. "
                f"Got `{len(values)}` values for {self.num_envs} environments."
            )
        for env, value in zip(self.envs, values, strict=True):
            env.set_wrapper_attr(name, value)

    def render(self) -> tuple[np.ndarray | None, ...]:  # type: ignore[override]  # None: a sub-env with no frame yet
        """The last screenshot of every sub-env (a list of them for ``RenderCollection``'s)."""
        frames: list[Any] = [env.render() for env in self.envs]
        return tuple(frames)

    def close_extras(self, **kwargs: Any) -> None:
        """Close every sub-env (pending steps are cancelled first)."""
        if self._closed:
            return
        for future in self._in_flight.values():
            future.cancel()
        self._in_flight.clear()
        for env in self.envs:
            env.close()
        self._closed = True
