"""CLA actions as a vector env's batched ``Dict`` action (issue 28, item 13).

A hud-gym vector env steps a list of CLA actions as they are, one per env; a trainer whose
policy emits elements of :attr:`~gymnasium.vector.VectorEnv.action_space` (the batched action
``Dict`` of :mod:`hud_gym.spaces`: one row per env) needs the CLA actions in that form, to mix
scripted and sampled actions, to store them in a replay buffer, or to compute log-probabilities.
:func:`batch_actions` (also :meth:`SendRecvVectorEnv.batch_actions
<hud_gym.wrappers.vector.send_recv.SendRecvVectorEnv.batch_actions>`) encodes each env's CLA
action with the sub-envs' own :class:`~hud_gym.spaces.ActionSpaceConfig` and stacks them.

Example:
    >>> import gymnasium, hud_gym
    >>> from hud_gym import ClickAction, ResponseAction
    >>> envs = gymnasium.make_vec("hud/QA-v0", num_envs=2, taskset="qa-basic")
    >>> batch = envs.batch_actions([ClickAction(point=(10, 20)), {"type": "response", "text": "4"}])
    >>> envs.action_space.contains(batch), batch["point"][0].tolist()
    (True, [10, 20])
    >>> envs.close()
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import concatenate, create_empty_array

from hud_gym.actions import ActionError, parse_actions
from hud_gym.spaces import ActionSpaceConfig, encode

__all__ = ["batch_actions"]


def batch_actions(envs: VectorEnv, actions: Sequence[Any]) -> dict[str, Any]:
    """One CLA action per env (a CLA model or a dict in CLA form) as one element of
    ``envs.action_space``, encoded with the sub-envs' ``action_space_config``.

    Raises:
        ValueError: not one action per env.
        hud_gym.actions.ActionError: an action that is not a single CLA action, or one the action
            space cannot hold (its type, or a field past a limit); the message names the env.
    """
    if isinstance(actions, (str, bytes)) or len(actions) != envs.num_envs:
        raise ValueError(f"batch_actions takes one CLA action per env: {envs.num_envs}, got {len(actions)}")
    config: ActionSpaceConfig = envs.get_attr("action_space_config")[0]  # type: ignore[attr-defined]
    encoded = []
    for i, action in enumerate(actions):
        try:
            parsed = parse_actions(action)
            if len(parsed) != 1:
                raise ActionError(f"a Dict action holds one CLA action, got {len(parsed)}")
            encoded.append(encode(parsed[0], config))
        except ActionError as exc:
            raise ActionError(f"env {i}: {exc}") from None
    space = envs.single_action_space
    out: Any = create_empty_array(space, envs.num_envs)
    result: Any = concatenate(space, encoded, out)
    return dict(result)
