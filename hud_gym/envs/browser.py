"""``hud/Browser-v0``: a Chromium tab driven with CLA actions, observed as pixels.

Every env in a process shares one Chromium (launched on the first reset, closed with the last
env) and has its own isolated browser context: cookies, storage, cache and downloads are never
seen by another env, nor by the next episode of the same env. The gym's descriptor is :data:`GYM`.
"""

from __future__ import annotations

from typing import Any

from hud_gym.controllers.base import Frame
from hud_gym.core.env import HudEnv, Observation
from hud_gym.core.gym_type import GymType
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

    def _observation(self, frame: Frame) -> Observation:
        """As :class:`HudEnv`, with element boxes mapped from screen to observation pixels and
        the elements wholly outside the observed region (a crop) left out."""
        elements = frame.info.get("elements")
        if elements and (self.observation_crop is not None or not self.screen_mapping.identity):
            width, height = self.observation_size
            visible = []
            for element in elements:
                x, y, w, h = self.screen_mapping.box(*element["bbox"])
                if x + w <= 0 or y + h <= 0 or x >= width or y >= height:
                    continue
                element["bbox"] = [round(x, 1), round(y, 1), round(w, 1), round(h, 1)]
                visible.append(element)
            frame.info["elements"] = visible
        return super()._observation(frame)


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
