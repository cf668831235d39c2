"""The action overlay (``hud_gym.jobs.overlay``) in the video replays: each step's frame is the
screen its agent saw, with the click drawn at its pixel in the step's button colour, a drag's
path and a scroll's arrow; the last frame is the screen the run ended on, unmarked. The SVG form
the report uses carries only numbers and fixed colours."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from hud_gym.jobs.overlay import draw_overlay, overlay_svg
from hud_gym.jobs.rows import INITIAL_OBSERVATION_REF
from hud_gym.jobs.video import trajectory_frames
from hud_gym.trajectory import Trajectory, TrajectoryStep

W, H = 320, 180


def _frame(path: Path, shade: int) -> str:
    Image.new("RGB", (W, H), (shade, shade, shade)).save(path)
    return str(path)


def test_replay_frames_show_each_action_on_the_screen_it_was_taken_on(tmp_path: Path) -> None:
    steps = [
        TrajectoryStep(
            index=0,
            actions=[{"type": "click", "point": {"x": 40, "y": 30}, "button": "right"}],
            observation_ref=_frame(tmp_path / "step-0.png", 200),
        ),
        TrajectoryStep(
            index=1,
            actions=[{"type": "drag", "path": [{"x": 20, "y": 150}, {"x": 300, "y": 150}]}],
            observation_ref=_frame(tmp_path / "step-1.png", 220),
        ),
    ]
    trajectory = Trajectory(
        task_id="t", steps=steps, reward=1.0, metadata={INITIAL_OBSERVATION_REF: _frame(tmp_path / "initial.png", 250)}
    )
    frames = trajectory_frames(trajectory, caption=False, min_width=W, max_width=W)
    assert len(frames) == 3 and frames[0].shape == (H, W, 3)
    # Step 1 on the reset screen (250): its right click in blue at (40, 30).
    assert tuple(frames[0][30, 40]) == (0, 87, 255) and tuple(frames[0][100, 200]) == (250, 250, 250)
    # Step 2 on the screen after step 1 (200): the drag's path in magenta; the click is gone.
    assert tuple(frames[1][150, 160]) == (255, 0, 255) and tuple(frames[1][30, 40]) == (200, 200, 200)
    # The end: the last screen (220), unmarked.
    assert np.all(frames[2] == 220)
    captions = trajectory_frames(trajectory)
    assert len(captions) == 3 and captions[0].shape[0] > H


def test_marks_for_scrolls_and_nothing_for_keys() -> None:
    blank = np.full((H, W, 3), 255, dtype=np.uint8)
    assert draw_overlay(blank, [{"type": "type", "text": "hi"}, {"type": "press", "keys": ["enter"]}]) is blank
    scrolled = draw_overlay(blank, [{"type": "scroll", "point": {"x": 160, "y": 90}, "scroll": {"x": 0, "y": 300}}])
    assert tuple(scrolled[110, 160]) == (0, 160, 64)  # the arrow points down from the scroll point
    assert tuple(scrolled[70, 160]) == (255, 255, 255)
    svg = overlay_svg([{"type": "click", "point": {"x": 1, "y": 2}, "button": "<script>"}], W, H)
    assert svg.startswith(f'<svg class="overlay" viewBox="0 0 {W} {H}"') and "<script>" not in svg
    assert 'cx="1" cy="2"' in svg and 'fill="#ff0000"' in svg  # an unknown button: the left colour
    assert overlay_svg([{"type": "click", "point": {"x": "<b>", "y": 2}}], W, H) == ""
