"""What every hud-gym vector env does the same way: read ``reset``'s seeds and mask, split a
batched action, and batch the rows a ``recv`` returns (Gymnasium's info layout included).

Used by :class:`~hud_gym.wrappers.vector.send_recv.SendRecvVectorEnv`, the base of
:class:`~hud_gym.wrappers.vector.local.HudVectorEnv` and
:class:`~hud_gym.wrappers.integrations.ray_vector.RayVectorEnv`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Literal

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import concatenate, create_empty_array, iterate

__all__ = [
    "OBJECT_INFO_KEYS",
    "InfoMode",
    "StepResult",
    "numeric_info",
    "batch_rows",
    "empty_batch",
    "reset_indices",
    "reset_seeds",
    "send_ids",
    "unbatch_actions",
]

StepResult = tuple[Any, float | None, bool, bool, dict[str, Any]]
"""One env's step: ``reward`` is ``None`` when the step failed (batched as NaN)."""


def empty_batch(space: gymnasium.Space, n: int) -> Any:
    """The batch of ``n`` observations of ``space`` to fill (gymnasium's ``create_empty_array``)."""
    return create_empty_array(space, n)


InfoMode = Literal["all", "numeric"]
"""How a vector env batches infos: every key, or only the numeric ones (:func:`numeric_info`)."""

OBJECT_INFO_KEYS: tuple[str, ...] = (
    "status",
    "error",
    "action_error",
    "grade",
    "timings",
    "task_id",
    "prompt",
    "seed",
    "url",
    "title",
    "tabs",
    "dialogs",
    "downloads",
    "elements",
    "dom_elements",
    "fields",
    "data_mode",
    "typed_field",
    "navigation_error",
    "final_obs",
    "final_info",
)
"""The info keys of hud-gym's envs that ``info_mode="all"`` batches as object arrays (strings,
``None``, lists, grades, timings; ``final_obs`` / ``final_info`` in ``SAME_STEP`` autoreset)."""


def numeric_info(info: Mapping[str, Any]) -> dict[str, Any]:
    """The numeric part of an info: bools, ints, floats, numpy numbers and numeric numpy arrays,
    with mappings (``timings``, ``final_info``) kept as dicts of their numeric part; strings,
    ``None``, lists and other objects (and ``final_obs``) are left out."""
    kept: dict[str, Any] = {}
    for key, value in info.items():
        if key == "final_obs":
            continue
        if (
            isinstance(value, (bool, int, float, np.number))
            or isinstance(value, np.ndarray)
            and (value.dtype == np.bool_ or np.issubdtype(value.dtype, np.number))
        ):
            kept[key] = value
        elif isinstance(value, Mapping):
            nested = numeric_info(value)
            if nested:
                kept[key] = nested
    return kept


def reset_seeds(seed: int | Sequence[int | None] | None, num_envs: int) -> list[int | None]:
    """Per-env seeds: ``None`` for all, ``seed + i`` for an int, or the list as given (``[s] * N``:
    a GRPO group, every env in the same initial state).

    Raises:
        ValueError: a list of another length than ``num_envs``.
    """
    if seed is None:
        return [None] * num_envs
    if isinstance(seed, (int, np.integer)):
        return [int(seed) + i for i in range(num_envs)]
    seeds = list(seed)
    if len(seeds) != num_envs:
        raise ValueError(f"got {len(seeds)} seeds for {num_envs} envs")
    return seeds


def reset_indices(options: dict[str, Any] | None, num_envs: int) -> tuple[list[int], dict[str, Any]]:
    """The envs to reset (``options["reset_mask"]``, all by default) and the options without the mask.

    The checks and their messages are ``SyncVectorEnv``'s.

    Raises:
        TypeError: a mask that is not a numpy array, or not of ``dtype=np.bool_``.
        ValueError: a mask not of shape ``(num_envs,)``, or with no True value.
    """
    options = dict(options or {})
    mask = options.pop("reset_mask", None)
    if mask is None:
        return list(range(num_envs)), options
    if not isinstance(mask, np.ndarray):
        raise TypeError(f"`options['reset_mask']` must be a numpy array, got {type(mask)}")
    if mask.shape != (num_envs,):
        raise ValueError(f"`options['reset_mask']` must have shape `({num_envs},)`, got {mask.shape}")
    if mask.dtype != np.bool_:
        raise TypeError(f"`options['reset_mask']` must have `dtype=np.bool_`, got {mask.dtype}")
    if not np.any(mask):
        raise ValueError(
            f"`options['reset_mask']` must contain a boolean array with at least one True value, got reset_mask={mask}"
        )
    return [i for i in range(num_envs) if mask[i]], options


def send_ids(
    actions: Sequence[Any],
    env_ids: Sequence[int] | None,
    num_envs: int,
    *,
    busy: Collection[int],
    ended: Sequence[bool] | np.ndarray,
    autoreset_mode: AutoresetMode,
) -> list[int]:
    """The env ids a ``send`` of ``actions`` starts (all envs by default), checked before any
    step starts.

    Raises:
        ValueError: as many actions as ids, or an id named twice.
        IndexError: an id outside ``[0, num_envs)``.
        RuntimeError: an env with a step in flight (``busy``), or one whose episode ended
            (``ended``) while autoreset is ``DISABLED``.
    """
    ids = list(range(num_envs)) if env_ids is None else [int(i) for i in env_ids]
    if len(actions) != len(ids):
        raise ValueError(f"{len(actions)} actions for {len(ids)} env ids")
    outside = [i for i in ids if not 0 <= i < num_envs]
    if outside:
        raise IndexError(f"env ids {outside} are not in [0, {num_envs - 1}]")
    if len(set(ids)) != len(ids):
        raise ValueError(f"env ids {ids} name an env twice")
    in_flight = [i for i in ids if i in busy]
    if in_flight:
        raise RuntimeError(f"envs {in_flight} already have a step in flight: recv() first")
    if autoreset_mode is AutoresetMode.DISABLED:
        over = [i for i in ids if ended[i]]
        if over:
            raise RuntimeError(
                f"envs {over} ended their episode: reset them with "
                "options={'reset_mask': mask} (autoreset is DISABLED)"
            )
    return ids


def unbatch_actions(action_space: gymnasium.Space, actions: Any, num_envs: int) -> list[Any]:
    """One action per env from a batched action-space element or a sequence of ``num_envs``
    actions (CLA models, CLA dicts, lists of them, or single-space samples).

    Raises:
        TypeError: neither form (``step(0)``, as ``SyncVectorEnv``).
        ValueError: a list or array of another length than ``num_envs``.
    """
    if (
        isinstance(actions, dict)
        and isinstance(action_space, gymnasium.spaces.Dict)
        and set(actions) == set(action_space.spaces)
    ):
        return list(iterate(action_space, actions))
    sequence = isinstance(actions, (list, tuple)) or (isinstance(actions, np.ndarray) and actions.ndim > 0)
    if sequence and len(actions) != num_envs:
        raise ValueError(f"expected {num_envs} actions, got {len(actions)}")
    if isinstance(actions, np.ndarray) and actions.ndim > 0:
        return list(iterate(action_space, actions))
    if isinstance(actions, (list, tuple)):
        return list(actions)
    raise TypeError(
        f"expected {num_envs} actions (a batched action-space element or a list), got {type(actions).__name__}"
    )


def batch_rows(
    env: VectorEnv, rows: Sequence[tuple[int, StepResult]], *, with_env_ids: bool
) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    """The ``(env id, step result)`` rows of a ``recv`` as one batch, infos in Gymnasium's layout
    (arrays plus ``_key`` masks); ``infos["env_id"]`` names each row's env when ``with_env_ids``.
    An absent reward (``None``: the step failed) is ``NaN`` in the reward array."""
    n = len(rows)
    rewards = np.zeros(n, dtype=np.float64)
    terminations = np.zeros(n, dtype=np.bool_)
    truncations = np.zeros(n, dtype=np.bool_)
    infos: dict[str, Any] = {}
    observations = []
    # VectorEnv._add_info sizes its arrays by num_envs; a recv batch may be smaller.
    num_envs, env.num_envs = env.num_envs, n
    try:
        for row, (_, (observation, reward, terminated, truncated, info)) in enumerate(rows):
            observations.append(observation)
            rewards[row] = np.nan if reward is None else reward
            terminations[row], truncations[row] = terminated, truncated
            infos = env._add_info(infos, info, row)
    finally:
        env.num_envs = num_envs
    batch = concatenate(env.single_observation_space, observations, empty_batch(env.single_observation_space, n))
    if with_env_ids:
        infos["env_id"] = np.array([i for i, _ in rows], dtype=np.int64)
    return batch, rewards, terminations, truncations, infos
