"""``info["screen_mapping"]``: how observation pixels map to the env's screen, on a real page."""

from __future__ import annotations

import gymnasium
import pytest
from browser_helpers import STATE_TASK, goto, page_state

from hud_gym.actions import ClickAction

pytestmark = pytest.mark.timeout(120)

KNOWN_BUTTON_CENTRE = (175, 225)  # elements.html's "known" button, in screen pixels (100..250, 200..250)


def test_info_mapping_puts_a_click_where_the_screen_point_is(site: str, controller: str) -> None:
    """A cropped, half-size observation: the reset's and every step's info give the scale and
    offset, and a screen point mapped through them to observation pixels is clicked there."""
    env = gymnasium.make(
        "hud/Browser-v0",
        screen_size=(1024, 768),
        observation_crop=(40, 150, 400, 200),
        observation_size=(200, 100),
        controller=controller,
    )
    try:
        _, reset_info = env.reset(seed=0, options={"task": STATE_TASK})
        expected = {
            "scale_x": 2.0,
            "scale_y": 2.0,
            "offset_x": 40,
            "offset_y": 150,
            "screen_size": [1024, 768],
            "observation_size": [200, 100],
        }
        assert reset_info["screen_mapping"] == expected
        obs, info = goto(env, f"{site}/elements.html")
        assert info["screen_mapping"] == expected and obs["screenshot"].shape == (100, 200, 3)
        mapping = info["screen_mapping"]
        x = (KNOWN_BUTTON_CENTRE[0] - mapping["offset_x"]) / mapping["scale_x"]
        y = (KNOWN_BUTTON_CENTRE[1] - mapping["offset_y"]) / mapping["scale_y"]
        _, _, _, _, info = env.step(ClickAction(point=(round(x), round(y))))
        assert info["status"] == "ok"
        assert page_state(env)["clicks"] == ["known"]
    finally:
        env.close()
