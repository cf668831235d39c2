"""``hud/Browser-v0``: a Chromium tab driven with CLA actions, observed as pixels.

Every env in a process shares one Chromium (launched on the first reset, closed with the last
env) and has its own isolated browser context: cookies, storage, cache and downloads are never
seen by another env, nor by the next episode of the same env. The gym's descriptor is :data:`GYM`.
"""

from __future__ import annotations

from typing import Any

import gymnasium

from hud_gym.controllers.base import Frame
from hud_gym.core.env import HudEnv, Observation
from hud_gym.core.gym_type import GymType
from hud_gym.envs.browser_nodes import axtree_text, draw_marks, map_boxes, node_spaces
from hud_gym.envs.browser_options import BrowserOptions

__all__ = ["GYM", "BrowserEnv", "BrowserOptions"]


class BrowserEnv(HudEnv):
    """A browser tab. Observations: the viewport's pixels and ``"URL: ...\\nTitle: ..."``;
    ``info`` adds ``url``, ``title``, ``tabs``, the ``dialogs`` and ``downloads`` of the step, and
    ``elements`` when asked for. Custom actions: ``goto`` (``{"url"}``), ``back``, ``forward``,
    ``reload``, ``new_tab`` (``{"url"}`` optional), ``switch_tab`` (``{"index"}``), ``close_tab``
    (``{"index"}`` optional).

    Nondeterministic (real pages, real time), so ``check_env``'s determinism checks are skipped
    through the registration's ``nondeterministic=True``.

    The gym's suites (:mod:`hud_gym.suites`) add task sets, env options, reset options, custom
    actions and ``info`` entries for their tasks (:mod:`hud_gym.core.suite`).

    Options: :class:`~hud_gym.envs.browser_options.BrowserOptions` (``headless``, ``reset_mode``,
    ``capture``, ``warm_pages``, ``limits``, ...), given as keywords or whole as ``options=``.

    Args:
        *args: :class:`~hud_gym.core.env.HudEnv`'s positional arguments (``task``, ``taskset``).
        **kwargs: :class:`~hud_gym.core.env.HudEnv` arguments (``screen_size``,
            ``observation_size``, ``max_episode_steps``, ``step_timeout``, ...), the browser's
            options and the suites' options.

    Example:
        >>> import gymnasium, hud_gym
        >>> from hud_gym import CustomAction
        >>> env = gymnasium.make("hud/Browser-v0", screen_size=(800, 600))  # doctest: +SKIP
        >>> obs, info = env.reset(seed=0)                                    # doctest: +SKIP
        >>> obs, r, term, trunc, info = env.step(CustomAction(action="goto", args={"url": "about:blank"}))  # doctest: +SKIP
        >>> env.close()                                                      # doctest: +SKIP
    """

    options: BrowserOptions

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Fail at make time, not at the first reset, on a bad option. The allowed directory of a
        # controller in a container or on another machine is a path there, not here.
        checked = self.options
        if self.placement not in ("local", "subprocess"):
            checked = checked.model_copy(update={"allow_file_urls": None})
        assert self.descriptor is not None
        self.descriptor.make_controller(self.screen_size, checked)
        width, height = self.observation_size
        added = node_spaces(self.options.axtree, self.options.som, width, height)
        if added:
            assert isinstance(self.observation_space, gymnasium.spaces.Dict)
            self.observation_space = gymnasium.spaces.Dict({**self.observation_space.spaces, **added})
        self._last_nodes: dict[str, Any] = {}

    def _observation(self, frame: Frame) -> Observation:
        """As :class:`HudEnv`, with element boxes mapped from screen to observation pixels and
        the elements wholly outside the observed region (a crop) left out; with ``axtree`` /
        ``som``, their keys (:mod:`hud_gym.envs.browser_nodes`)."""
        axtree = frame.info.pop("axtree", None)
        mapped = self.observation_crop is not None or not self.screen_mapping.identity
        for key in ("elements", "som"):
            if frame.info.get(key) and mapped:
                frame.info[key] = map_boxes(frame.info[key], self.screen_mapping, self.observation_size)
        observation = super()._observation(frame)
        if self.options.axtree:
            nodes = map_boxes(axtree or [], self.screen_mapping, self.observation_size) if mapped else axtree or []
            observation["axtree"], truncated = axtree_text(nodes)
            if truncated:
                frame.info["axtree_truncated"] = True
        if self.options.som:
            observation["som"] = draw_marks(observation["screenshot"], frame.info.setdefault("som", []))
        self._last_nodes = {key: observation[key] for key in ("axtree", "som") if key in observation}
        return observation

    def _repeat_observation(self) -> Observation:
        observation = super()._repeat_observation()
        if self.options.axtree:
            observation["axtree"] = self._last_nodes.get("axtree", "[]")
        if self.options.som:
            last = self._last_nodes.get("som")
            observation["som"] = last.copy() if last is not None else observation["screenshot"].copy()
        return observation


GYM = GymType(
    name="browser",
    id="hud/Browser-v0",
    env=BrowserEnv,
    controller="hud_gym.controllers.browser:BrowserController",
    options=BrowserOptions,
    aliases=("hud-browser",),
    function_modules=("hud_gym.controllers.browser.functions",),
    function_prefixes=("browser", "chrome", "chromium", "page"),
    max_episode_steps=50,
    description="a Chromium tab (Playwright), one isolated context per env",
)
"""The browser gym."""
