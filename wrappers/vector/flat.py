"""An RL-ready flat form of a :class:`HudVectorEnv`: image (or image + text codes) observations and
a flat action vocabulary (:mod:`hud_gym.wrappers.vector.flat_spaces`), made by the vector entry
point itself, so a trainer that only calls ``gymnasium.make_vec`` (RLlib's
``gym_env_vectorize_mode="vector_entry_point"``, which forbids wrappers) gets spaces it has
encoders for:

    >>> envs = gymnasium.make_vec("hud/QA-v0", 2, taskset="qa-basic", observation="image",
    ...                           action_mode="discrete", grid=(4, 4), keys=(), texts=("Paris",))  # doctest: +SKIP

Any of ``observation``, ``action_mode``, ``grid``, ``keys``, ``texts``, ``text_length``,
``normalize`` or ``failed_reward`` among the entry point's arguments selects the flat form.
``normalize=True`` gives the image as float32 in [0, 1] (RLlib's CNN encoder takes floats only;
SB3 scales uint8 images itself).

A learner cannot take an absent reward (a NaN poisons its advantages): a failed step's reward
(``env_error``, ``timeout``, ``eval_error``) is given as ``failed_reward`` (0.0 by default:
choose it knowingly), never silently: the step's info says ``reward_absent=True`` beside its
``status`` and ``error``, :attr:`FlatVectorEnv.absent_rewards` counts them and each is logged as a
warning (logger ``hud_gym.wrappers.vector.flat``). The flat form keeps the vector env's autoreset
mode (``NEXT_STEP`` by default, as RLlib expects).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorWrapper
from gymnasium.vector.utils import batch_space

from hud_gym.wrappers.vector import sub_envs
from hud_gym.wrappers.vector.flat_spaces import DEFAULT_KEYS, ActionMapper, Mode, ObservationMapper, TextMode
from hud_gym.wrappers.vector.local import HudVectorEnv

__all__ = ["FLAT_ARGUMENTS", "FlatVectorEnv"]

logger = logging.getLogger(__name__)

FLAT_ARGUMENTS = frozenset(
    {"observation", "action_mode", "grid", "keys", "texts", "text_length", "normalize", "failed_reward"}
)
"""The entry-point arguments that select the flat form."""


class FlatVectorEnv(VectorWrapper):
    """A :class:`HudVectorEnv` seen through flat spaces; see the module docstring.

    Args:
        env: the vector env (its sub-envs' observations are mapped to ``observation_size``).
        observation: ``"image"`` (the screenshot alone) or ``"codes"`` (``Dict`` of the image and
            the text's first ``text_length`` character codes).
        action_mode, grid, keys, texts: the action vocabulary (:class:`ActionMapper`).
        normalize: the image as float32 in [0, 1] instead of uint8.
        failed_reward: the reward a failed step is given (finite).
    """

    def __init__(
        self,
        env: HudVectorEnv,
        *,
        observation: str = "image",
        action_mode: Mode = "multidiscrete",
        grid: tuple[int, int] = (16, 16),
        keys: Sequence[str] = DEFAULT_KEYS,
        texts: Sequence[str] = ("",),
        text_length: int = 256,
        normalize: bool = False,
        failed_reward: float = 0.0,
    ) -> None:
        if observation not in ("image", "codes"):
            raise ValueError(f"observation must be 'image' or 'codes', got {observation!r}")
        if not isinstance(failed_reward, (int, float)) or not math.isfinite(failed_reward):
            raise ValueError(
                f"failed_reward must be a finite number (a learner cannot take NaN), got {failed_reward!r}"
            )
        super().__init__(env)
        self.hud_env = env
        size = sub_envs.hud_env(env.envs[0]).observation_size
        text: TextMode = "drop" if observation == "image" else "codes"
        self.observation_mapper = ObservationMapper(size, text, text_length)
        self.action_mapper = ActionMapper(size, action_mode, grid, keys, texts)
        self.normalize = bool(normalize)
        self.single_observation_space = self._space(self.observation_mapper.space)
        self.single_action_space = self.action_mapper.space
        self.observation_space = batch_space(self.single_observation_space, env.num_envs)
        self.action_space = batch_space(self.single_action_space, env.num_envs)
        self.failed_reward = float(failed_reward)
        self.absent_rewards = 0
        """Failed steps so far whose absent reward was given as ``failed_reward``."""

    def _space(self, space: spaces.Space) -> spaces.Space:
        if isinstance(space, spaces.Dict):
            return spaces.Dict({key: self._space(sub) if key == "image" else sub for key, sub in space.items()})
        if self.normalize and isinstance(space, spaces.Box):
            return spaces.Box(0.0, 1.0, space.shape, np.float32)
        return space

    def _one(self, observation: dict[str, Any]) -> Any:
        mapped = self.observation_mapper.map(observation)
        if not self.normalize:
            return mapped
        if isinstance(mapped, dict):
            return {**mapped, "image": mapped["image"].astype(np.float32) / 255.0}
        return mapped.astype(np.float32) / 255.0

    def _map(self, observations: dict[str, Any]) -> Any:
        mapped = [
            self._one({"screenshot": observations["screenshot"][i], "text": observations["text"][i]})
            for i in range(self.num_envs)
        ]
        if isinstance(mapped[0], dict):
            return {key: np.stack([m[key] for m in mapped]) for key in mapped[0]}
        return np.stack(mapped)

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None) -> Any:
        """Reset (as :meth:`HudVectorEnv.reset`); the observations flat."""
        observations, infos = self.hud_env.reset(seed=seed, options=options)
        return self._map(observations), infos

    def step(self, actions: Any) -> Any:
        """Step every env with one flat action each (rows of :attr:`action_space`).

        Raises:
            ValueError: an action is not in :attr:`single_action_space` (the message names the env).
        """
        actions = np.asarray(actions) if not isinstance(actions, dict) else actions
        if len(actions) != self.num_envs:
            raise ValueError(f"expected {self.num_envs} actions, got {len(actions)}")
        cla_actions = []
        for i, action in enumerate(actions):
            try:
                cla_actions.append(self.action_mapper.to_cla(action))
            except ValueError as exc:
                raise ValueError(f"env {i}: {exc}") from None
        observations, rewards, terminations, truncations, infos = self.hud_env.step(cla_actions)
        if self.hud_env.autoreset_mode is AutoresetMode.SAME_STEP and "final_obs" in infos:
            final = infos["final_obs"]
            infos["final_obs"] = np.array([None] * self.num_envs, dtype=object)
            for row in np.flatnonzero(infos.get("_final_obs", terminations | truncations)):
                infos["final_obs"][row] = self._one(final[row])
        return self._map(observations), self._fill_absent(rewards, infos), terminations, truncations, infos

    def _fill_absent(self, rewards: np.ndarray, infos: dict[str, Any]) -> np.ndarray:
        rewards = np.asarray(rewards, dtype=np.float64).copy()
        absent = np.isnan(rewards)
        if absent.any():
            infos["reward_absent"] = absent
            infos["_reward_absent"] = absent
            statuses, errors = infos.get("status"), infos.get("error")
            for i in np.flatnonzero(absent):
                self.absent_rewards += 1
                logger.warning(
                    "env %d: the step failed (%s: %s), so it has no reward; the learner gets failed_reward=%g "
                    "(%d absent rewards so far)",
                    i,
                    None if statuses is None else statuses[i],
                    None if errors is None else errors[i],
                    self.failed_reward,
                    self.absent_rewards,
                )
            rewards[absent] = self.failed_reward
        return rewards
