"""A stable-baselines3 ``VecEnv`` over our batched :class:`~hud_gym.wrappers.vector.local.HudVectorEnv`.

SB3 does not take Gymnasium vector envs. :class:`HudSB3VecEnv` is a real SB3 ``VecEnv``:
``step_async`` maps each SB3 action to a CLA action (:class:`ActionMapper`) and ``send``\\ s them,
``step_wait`` ``recv``\\ s every env and maps the observations (:class:`ObservationMapper`). It
follows SB3's conventions, which are Gymnasium's ``SAME_STEP`` autoreset:

- a done env's row holds the first observation of its next episode; its info is the info of the
  step that ended the episode (``final_info``) plus ``"terminal_observation"`` (mapped) and
  ``"TimeLimit.truncated"`` (set on every env's info, ``truncated and not terminated``); the new
  episode's reset info goes to :attr:`reset_infos`; it also holds ``"episode"``: ``{"r": return,
  "l": length, "t": seconds since the VecEnv was made}``, as SB3's ``VecMonitor`` writes it, so
  SB3's logger shows ``ep_rew_mean`` and ``ep_len_mean`` without a monitor wrapper;
- ``seed()`` and ``set_options()`` apply at the next ``reset()`` only.

SB3 cannot take an absent reward: a NaN would poison PPO's advantages. A failed step (status
``env_error``, ``timeout`` or ``eval_error``: NaN in :class:`HudVectorEnv`'s reward array) is
given to SB3 as ``failed_reward`` (0.0 by default: choose it knowingly), never silently: its info
says ``reward_absent=True`` next to its ``status`` and ``error``, :attr:`HudSB3VecEnv.absent_rewards`
counts them, and each is logged as a warning (logger ``hud_gym.wrappers.integrations.sb3_vec_env``).

Importing this module imports SB3 (and so torch); ``import hud_gym.wrappers`` does not.

Example:
    >>> from stable_baselines3 import PPO
    >>> from hud_gym.wrappers.integrations.sb3_vec_env import to_sb3_vec_env
    >>> venv = to_sb3_vec_env("hud/QA-v0", num_envs=2, taskset="qa-basic", texts=("Paris", "4"),
    ...                       observation_size=(64, 64), text="codes")
    >>> model = PPO("MultiInputPolicy", venv, n_steps=16, batch_size=32).learn(64)  # doctest: +SKIP
    >>> venv.close()
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode

from hud_gym.wrappers.integrations.sb3_actions import DEFAULT_KEYS, ActionMapper, Mode
from hud_gym.wrappers.integrations.sb3_observations import ObservationMapper, TextMode
from hud_gym.wrappers.vector import HudVectorEnv
from hud_gym.wrappers.vector.sub_envs import hud_env

try:
    from stable_baselines3.common.vec_env.base_vec_env import (
        VecEnv,
        VecEnvIndices,
        VecEnvObs,
        VecEnvStepReturn,
    )
except ModuleNotFoundError as exc:  # pragma: no cover  (the message says what to install)
    raise ModuleNotFoundError(
        f"hud_gym.wrappers.integrations.sb3_vec_env needs stable-baselines3 ({exc}): pip install 'hud-gym[sb3]'"
    ) from None

__all__ = ["HudSB3VecEnv", "to_sb3_vec_env", "unbatch_infos"]

logger = logging.getLogger(__name__)


def unbatch_infos(infos: dict[str, Any], num_envs: int) -> list[dict[str, Any]]:
    """Gymnasium's batched infos (arrays with ``_key`` masks, nested for dict values) as one
    dict per env; NumPy scalars become Python values.

    Example:
        >>> unbatch_infos({"a": np.array([1, 0]), "_a": np.array([True, False])}, 2)
        [{'a': 1}, {}]
    """
    out: list[dict[str, Any]] = [{} for _ in range(num_envs)]
    for key, value in infos.items():
        if key.startswith("_") and key[1:] in infos:
            continue
        mask = infos.get(f"_{key}")
        if mask is None:  # not a per-env entry (e.g. HudVectorEnv's "env_id" of a partial recv)
            continue
        nested = unbatch_infos(value, num_envs) if isinstance(value, dict) and key != "final_obs" else None
        for i in range(num_envs):
            if not mask[i]:
                continue
            item = nested[i] if nested is not None else value[i]
            out[i][key] = item.item() if isinstance(item, np.generic) else item
    return out


class HudSB3VecEnv(VecEnv):
    """A :class:`HudVectorEnv` (in ``SAME_STEP`` autoreset mode) as a stable-baselines3 ``VecEnv``.

    Build it with :func:`to_sb3_vec_env`. The action and observation spaces are those of
    :class:`ActionMapper` and :class:`ObservationMapper`; clicks are in the sub-envs'
    observation pixels, whatever ``observation_size`` the SB3 images are resized to.

    Args:
        vector_env: the vector env; it must be in ``SAME_STEP`` autoreset mode.
        action_mode: ``"multidiscrete"`` (PPO, A2C), ``"discrete"`` (DQN) or ``"box"`` (SAC, TD3).
        grid: ``(columns, rows)`` of the click grid.
        keys: keys the agent can press (``()``: none).
        texts: snippets the agent can type (``()``: none).
        observation_size: ``(width, height)`` of the SB3 image.
        text: ``"drop"`` (observations are images), ``"codes"`` (a Dict with the text as codes) or
            ``"words"`` (a Dict with the text as a hashed bag of words: the instruction next to the pixels).
        text_length: characters kept with ``text="codes"``; hash buckets with ``text="words"``.
        failed_reward: the reward SB3 gets for a failed step, whose own reward is absent (see
            the module docstring); a finite number.

    Raises:
        ValueError: ``failed_reward`` is not finite, or the vector env is not in ``SAME_STEP`` mode.
    """

    def __init__(
        self,
        vector_env: HudVectorEnv,
        *,
        action_mode: Mode = "multidiscrete",
        grid: tuple[int, int] = (16, 16),
        keys: Sequence[str] = DEFAULT_KEYS,
        texts: Sequence[str] = ("",),
        observation_size: tuple[int, int] = (84, 84),
        text: TextMode = "drop",
        text_length: int = 256,
        failed_reward: float = 0.0,
    ) -> None:
        if not isinstance(failed_reward, (int, float)) or not math.isfinite(failed_reward):
            raise ValueError(
                f"failed_reward must be a finite number (SB3 cannot learn from NaN), got {failed_reward!r}"
            )
        self.failed_reward = float(failed_reward)
        self.absent_rewards = 0
        """Failed steps so far whose absent reward SB3 got as ``failed_reward``."""
        if vector_env.autoreset_mode is not AutoresetMode.SAME_STEP:
            raise ValueError(
                f"HudSB3VecEnv needs a HudVectorEnv in SAME_STEP autoreset mode, got "
                f"{vector_env.autoreset_mode}; use to_sb3_vec_env(), which switches it"
            )
        self.vector_env = vector_env
        self.action_mapper = ActionMapper(hud_env(vector_env.envs[0]).observation_size, action_mode, grid, keys, texts)
        self.observation_mapper = ObservationMapper(observation_size, text, text_length)
        self._stepping = False
        self._observed = False
        self._episode_returns = np.zeros(vector_env.num_envs, dtype=np.float64)
        self._episode_lengths = np.zeros(vector_env.num_envs, dtype=np.int64)
        self._made_at = time.monotonic()
        super().__init__(vector_env.num_envs, self.observation_mapper.space, self.action_mapper.space)

    # ------------------------------------------------------------------ observations

    def _map_batch(self, observations: dict[str, Any]) -> VecEnvObs:
        mapped = [
            self.observation_mapper.map({"screenshot": observations["screenshot"][i], "text": observations["text"][i]})
            for i in range(self.num_envs)
        ]
        if isinstance(mapped[0], dict):
            return {key: np.stack([m[key] for m in mapped]) for key in mapped[0]}
        return np.stack(mapped)

    # ------------------------------------------------------------------ reset and step

    def reset(self) -> VecEnvObs:
        """Reset every env, with the seeds of :meth:`seed` and the options of :meth:`set_options`
        (each used once). A step in flight is awaited and discarded."""
        if self._stepping:
            self._stepping = False
            self.vector_env.recv(ordered=True)
        seeds = list(self._seeds)
        groups: list[tuple[dict[str, Any], np.ndarray]] = []
        for i, options in enumerate(self._options):
            for group_options, mask in groups:
                if group_options == options:
                    mask[i] = True
                    break
            else:
                mask = np.zeros(self.num_envs, dtype=np.bool_)
                mask[i] = True
                groups.append((options, mask))
        if not self._observed:
            # A masked reset needs every other env to have an observation already: the first
            # group resets them all (the others again below, with the same seeds).
            groups[0][1][:] = True
        observations: dict[str, Any] = {}
        for options, mask in groups:
            observations, infos = self.vector_env.reset(seed=seeds, options={**options, "reset_mask": mask})
            self._observed = True
            for i, info in enumerate(unbatch_infos(infos, self.num_envs)):
                if mask[i]:
                    self.reset_infos[i] = info
        self._reset_seeds()
        self._reset_options()
        self._episode_returns[:] = 0.0
        self._episode_lengths[:] = 0
        return self._map_batch(observations)

    def step_async(self, actions: np.ndarray) -> None:
        """Start a step of every env (``HudVectorEnv.send``) with one SB3 action each.

        Raises:
            ValueError: an action is not in :attr:`action_space` (the message names the env).
        """
        actions = np.asarray(actions)
        if len(actions) != self.num_envs:
            raise ValueError(f"expected {self.num_envs} actions, got {len(actions)}")
        cla_actions = []
        for i, action in enumerate(actions):
            try:
                cla_actions.append(self.action_mapper.to_cla(action))
            except ValueError as exc:
                raise ValueError(f"env {i}: {exc}") from None
        self.vector_env.send(cla_actions)
        self._stepping = True

    def step_wait(self) -> VecEnvStepReturn:
        """Wait for every env's step (``HudVectorEnv.recv``); see the module docstring for the
        infos of done envs."""
        try:
            observations, rewards, terminations, truncations, batched_infos = self.vector_env.recv(ordered=True)
        finally:
            self._stepping = False
        infos = unbatch_infos(batched_infos, self.num_envs)
        dones = terminations | truncations
        for i in range(self.num_envs):
            if dones[i]:
                reset_info = infos[i]
                final_observation = reset_info.pop("final_obs")
                infos[i] = reset_info.pop("final_info")
                infos[i]["terminal_observation"] = self.observation_mapper.map(final_observation)
                self.reset_infos[i] = reset_info
            infos[i]["TimeLimit.truncated"] = bool(truncations[i] and not terminations[i])
        filled = self._fill_absent(rewards, infos)
        self._count_episodes(filled, dones, infos)
        return self._map_batch(observations), filled, dones, infos

    def _count_episodes(self, rewards: np.ndarray, dones: np.ndarray, infos: list[dict[str, Any]]) -> None:
        """Add the step to each env's episode; a done env's info gets VecMonitor's ``episode``."""
        self._episode_returns += rewards
        self._episode_lengths += 1
        for i in np.flatnonzero(dones):
            infos[i]["episode"] = {
                "r": round(float(self._episode_returns[i]), 6),
                "l": int(self._episode_lengths[i]),
                "t": round(time.monotonic() - self._made_at, 6),
            }
            self._episode_returns[i] = 0.0
            self._episode_lengths[i] = 0

    def _fill_absent(self, rewards: np.ndarray, infos: list[dict[str, Any]]) -> np.ndarray:
        """The rewards as float32 with each absent one (NaN) replaced by ``failed_reward``; its
        info marked ``reward_absent``, counted and logged."""
        rewards = rewards.astype(np.float32)
        for i in np.flatnonzero(np.isnan(rewards)):
            info = infos[i]
            info["reward_absent"] = True
            self.absent_rewards += 1
            logger.warning(
                "env %d: the step failed (%s: %s), so it has no reward; SB3 gets failed_reward=%g "
                "(%d absent rewards so far)",
                i,
                info.get("status"),
                info.get("error"),
                self.failed_reward,
                self.absent_rewards,
            )
            rewards[i] = self.failed_reward
        return rewards

    # ------------------------------------------------------------------ sub-env access

    def _targets(self, indices: VecEnvIndices) -> list[gymnasium.Env]:
        return [self.vector_env.envs[i] for i in self._get_indices(indices)]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """An attribute of each sub-env (a :class:`~hud_gym.core.env.HudEnv`)."""
        return [env.get_wrapper_attr(attr_name) for env in self._targets(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute of each sub-env (a sub-env replaced after a crash is a new object)."""
        for env in self._targets(indices):
            setattr(env, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> list[Any]:
        """Call a method of each sub-env."""
        return [env.get_wrapper_attr(method_name)(*method_args, **method_kwargs) for env in self._targets(indices)]

    def env_is_wrapped(self, wrapper_class: type[gymnasium.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        """Whether each sub-env is wrapped in ``wrapper_class`` (the mappers are not wrappers)."""
        from stable_baselines3.common.env_util import is_wrapped

        return [is_wrapped(env, wrapper_class) for env in self._targets(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        """The last screenshot observation of each sub-env (full size, before the SB3 resize)."""
        if self.render_mode != "rgb_array":
            warnings.warn(f"the render mode is {self.render_mode}: get_images() needs 'rgb_array'", stacklevel=2)
            return [None] * self.num_envs
        return list(self.vector_env.render())

    def close(self) -> None:
        """Close the vector env and every sub-env."""
        self.vector_env.close()


def to_sb3_vec_env(
    env_or_id: str | HudVectorEnv,
    num_envs: int | None = None,
    *,
    action_mode: Mode = "multidiscrete",
    grid: tuple[int, int] = (16, 16),
    keys: Sequence[str] = DEFAULT_KEYS,
    texts: Sequence[str] = ("",),
    observation_size: tuple[int, int] = (84, 84),
    text: TextMode = "drop",
    text_length: int = 256,
    failed_reward: float = 0.0,
    **env_kwargs: Any,
) -> HudSB3VecEnv:
    """A stable-baselines3 ``VecEnv`` of hud-gym envs.

    Args:
        env_or_id: a hud-gym id (``num_envs`` envs made with ``env_kwargs`` in one
            :class:`HudVectorEnv`, their observations already ``observation_size``) or an existing
            :class:`HudVectorEnv`, switched to ``SAME_STEP`` autoreset if it is in another mode.
        num_envs: number of envs for an id (default 1); for a vector env, ``None`` or its size.
        action_mode, grid, keys, texts: the action vocabulary (:class:`ActionMapper`).
        observation_size: ``(width, height)`` of the image observations.
        text, text_length: ``"drop"`` the observation's text, or give it as ``"codes"`` or ``"words"``.
        failed_reward: what SB3 gets for a failed step's absent reward (see :class:`HudSB3VecEnv`).
        **env_kwargs: arguments of each env (``task``, ``taskset``, ``observation_crop``, ``max_steps``, ...).

    Raises:
        ValueError: ``num_envs`` disagrees with the vector env, or the vector env has a step in flight.
        TypeError: ``env_kwargs`` with an existing vector env, or an id that is not a hud-gym env.

    Example:
        >>> venv = to_sb3_vec_env("hud/Browser-v0", 2, task="miniwob/click-test", action_mode="discrete",
        ...                       keys=(), texts=(), grid=(5, 5), observation_size=(64, 64))  # doctest: +SKIP
    """
    if isinstance(env_or_id, HudVectorEnv):
        vector_env = env_or_id
        if env_kwargs:
            raise TypeError(f"env arguments {sorted(env_kwargs)} apply to a gym id, not to an existing HudVectorEnv")
        if num_envs is not None and num_envs != vector_env.num_envs:
            raise ValueError(f"num_envs={num_envs} but the HudVectorEnv has {vector_env.num_envs} envs")
        if vector_env.autoreset_mode is not AutoresetMode.SAME_STEP:
            if vector_env.in_flight:
                raise ValueError(
                    f"cannot switch the HudVectorEnv from {vector_env.autoreset_mode} to SAME_STEP "
                    "autoreset with a step in flight: recv() it first"
                )
            # Safe without a step in flight: SB3 resets every env before its first step.
            vector_env.autoreset_mode = AutoresetMode.SAME_STEP
            vector_env.metadata = {**vector_env.metadata, "autoreset_mode": AutoresetMode.SAME_STEP}
    elif isinstance(env_or_id, str):
        entry_point = gymnasium.spec(env_or_id).vector_entry_point
        if not (isinstance(entry_point, str) and entry_point.startswith("hud_gym.")):
            raise TypeError(f"{env_or_id!r} is not a hud-gym env id (hud/QA-v0, hud/Browser-v0, hud/Ubuntu-v0)")
        env_kwargs.setdefault("observation_size", observation_size)
        made = gymnasium.make_vec(
            env_or_id,
            num_envs=1 if num_envs is None else num_envs,
            autoreset_mode=AutoresetMode.SAME_STEP,
            **env_kwargs,
        )
        if not isinstance(made, HudVectorEnv):
            raise TypeError(f"{env_or_id!r} made a {type(made).__name__}, not a HudVectorEnv")
        vector_env = made
    else:
        raise TypeError(f"env_or_id is a hud-gym id or a HudVectorEnv, got {type(env_or_id).__name__}")
    return HudSB3VecEnv(
        vector_env,
        action_mode=action_mode,
        grid=grid,
        keys=keys,
        texts=texts,
        observation_size=observation_size,
        text=text,
        text_length=text_length,
        failed_reward=failed_reward,
    )
