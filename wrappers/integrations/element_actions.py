"""MiniWoB++'s element-level action space for ``hud/Browser-v0``: a compact ``MultiDiscrete``.

MiniWoB's ``shi17``-style agents act on elements, not pixels: click the element with ref ``r``,
or focus it and type the instance's field ``f``. :class:`ElementActionWrapper` gives an env that
action space, ``MultiDiscrete([2, max_ref + 1, max_fields])`` (stable-baselines3's PPO and A2C take
it), and maps each action to the browser gym's custom actions
(:mod:`hud_gym.suites.miniwob.dom`):

- ``[0, ref, _]``: ``click_element`` (MiniWoB's ``CLICK_ELEMENT``);
- ``[1, ref, field]``: ``type_field`` with the ref (MiniWoB's ``FOCUS_ELEMENT_AND_TYPE_FIELD``).

The refs are those of ``info["dom_elements"]`` (make the env with ``elements=True``); a ref that
is not on the page is an ``action_error`` step, as every impossible action.

Example:
    >>> env = ElementActionWrapper(gymnasium.make("hud/Browser-v0", task="miniwob/click-test-2", elements=True))  # doctest: +SKIP
    >>> obs, info = env.reset(seed=0)                                                   # doctest: +SKIP
    >>> ref = next(e["ref"] for e in info["dom_elements"] if e["text"] == "ONE")         # doctest: +SKIP
    >>> env.step([0, ref, 0])[1]                                                        # doctest: +SKIP
    1.0
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from hud_gym.actions import CustomAction

__all__ = ["ElementActionWrapper"]


class ElementActionWrapper(gymnasium.ActionWrapper[Any, np.ndarray, Any]):
    """See the module docstring.

    Args:
        env: a ``hud/Browser-v0`` env (MiniWoB++ tasks, ``elements=True``).
        max_ref: the largest ref the space can name (MiniWoB pages have a few dozen elements).
        max_fields: how many fields the space can name.
    """

    def __init__(self, env: gymnasium.Env[Any, Any], max_ref: int = 127, max_fields: int = 4) -> None:
        if max_ref < 1 or max_fields < 1:
            raise ValueError(f"max_ref and max_fields must be at least 1, got {max_ref} and {max_fields}")
        super().__init__(env)
        self.action_space = spaces.MultiDiscrete([2, max_ref + 1, max_fields])

    def action(self, action: Any) -> CustomAction:
        """The custom action of a ``[kind, ref, field]`` action."""
        kind, ref, field = (int(x) for x in np.asarray(action).reshape(3))
        if kind == 0:
            return CustomAction(action="click_element", args={"ref": ref})
        return CustomAction(action="type_field", args={"ref": ref, "field": field})
