"""Replays of trajectories: one frame per step, the screen its agent saw with the step's actions
drawn on it (click point and button, drag path, scroll arrow), then the screen the run ended on,
each with a caption band saying what the step did and the reward it got, written as MP4
(imageio-ffmpeg), an animated GIF or WebP.

Example:
    >>> export_videos(load_job("3f2a"), "replays/", video_format="gif")   # doctest: +SKIP
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, cast

import numpy as np

from hud_gym.jobs.export_common import (
    VIDEO_FORMATS,
    Progress,
    Source,
    VideoFormat,
    _check_choice,
    _clip,
    _existing,
    _initial_ref,
    _safe_name,
    _trajectories,
    describe_actions,
)
from hud_gym.jobs.overlay import draw_overlay
from hud_gym.trajectory import FAILED, Trajectory

__all__ = ["export_video", "export_videos", "trajectory_frames"]

_CAPTION_HEIGHT = 34
_COLORS = {"ok": (46, 125, 50), "fail": (198, 40, 40), "neutral": (66, 66, 66)}


def _load_rgb(path: Path | None) -> np.ndarray | None:
    """The screenshot's pixels; ``None`` when there is none or the file is damaged (the replay
    then shows the previous frame)."""
    if path is None:
        return None
    from PIL import Image

    try:
        with Image.open(path) as image:
            return np.asarray(image.convert("RGB"))
    except (OSError, ValueError, Image.DecompressionBombError):
        return None


def _scale(image: Any, min_width: int, max_width: int | None) -> Any:
    from PIL import Image

    width, height = image.size
    if width < min_width:
        factor = -(-min_width // width)
        return image.resize((width * factor, height * factor), Image.Resampling.NEAREST)
    if max_width is not None and width > max_width:
        return image.resize((max_width, max(1, round(height * max_width / width))), Image.Resampling.LANCZOS)
    return image


def _caption_lines(trajectory: Trajectory, index: int) -> tuple[str, str, str]:
    """(first line, second line, colour key) of frame ``index``: frame ``i < len(steps)`` is the
    screen step ``i`` acted on, the last frame the screen it ended on (the reset with no step)."""
    steps = trajectory.steps
    if not steps:
        return f"reset · {trajectory.task_id or 'task'}", _clip(trajectory.prompt or "", 90), "neutral"
    if index < len(steps):
        step = steps[index]
        reward = "none" if step.reward is None else f"{step.reward:g}"
        head = f"step {step.index + 1}/{len(steps)} · reward {reward}"
        if step.status != "ok":
            head += f" · {step.status}"
        return head, _clip(describe_actions(step.actions), 90), "fail" if step.status != "ok" else "neutral"
    outcome = (
        "failed: " + trajectory.status
        if trajectory.status in FAILED
        else (f"final reward {trajectory.reward:g}" if trajectory.reward is not None else trajectory.status)
    )
    colour = "neutral"
    if trajectory.status in FAILED or (trajectory.reward is not None and trajectory.reward <= 0):
        colour = "fail"
    elif trajectory.reward is not None and trajectory.reward > 0:
        colour = "ok"
    return f"end · {len(steps)} step(s) · {outcome}", _clip(trajectory.prompt or "", 90), colour


def _fit(text: str, font: Any, width: int, draw: Any) -> str:
    if draw.textlength(text, font=font) <= width:
        return text
    while text and draw.textlength(text + "…", font=font) > width:
        text = text[:-1]
    return text + "…"


def trajectory_frames(
    trajectory: Trajectory, *, caption: bool = True, min_width: int = 320, max_width: int | None = 1280
) -> list[np.ndarray]:
    """The replay frames of a trajectory (``1 + len(steps)``): each step on the screen its agent
    saw (the reset screenshot, then the one after the step before) with its actions drawn
    (:func:`hud_gym.jobs.overlay.draw_overlay`), then the screen it ended on; as ``(H, W, 3)``
    uint8 arrays of one size (even width and
    height, as video codecs need). A missing screenshot repeats the previous frame (grey if there
    is none yet), and so does a suite's end cover (``info["observed"] == "cover"``: MiniWoB++'s
    START screen), so a replay ends on the last real frame. Small screenshots are scaled up to ``min_width`` (nearest neighbour), large ones
    down to ``max_width``. With ``caption``, a band under each frame says what happened.

    Returns an empty list when the trajectory has no readable screenshot at all (e.g. its reset
    failed).
    """
    from PIL import Image, ImageDraw, ImageFont

    # A step whose screenshot is a suite's end cover (MiniWoB++'s START screen: info "observed")
    # shows no page: the replay repeats the last real frame instead.
    refs = [
        _initial_ref(trajectory),
        *(None if s.info.get("observed") == "cover" else s.observation_ref for s in trajectory.steps),
    ]
    paths = [_existing(ref) for ref in refs]
    first = next((pixels for pixels in map(_load_rgb, filter(None, paths)) if pixels is not None), None)
    if first is None:
        return []
    base = _scale(Image.fromarray(first), min_width, max_width)
    width, height = base.size
    width += width % 2
    band = _CAPTION_HEIGHT if caption else 0
    total_height = height + band
    total_height += total_height % 2
    font = ImageFont.load_default(size=12) if caption else None
    frames: list[np.ndarray] = []
    previous: np.ndarray | None = None  # the last screen read: a missing one repeats it
    for index, path in enumerate(paths):
        pixels = _load_rgb(path)
        previous = pixels if pixels is not None else previous
        if previous is None:
            image = Image.new("RGB", (width, height), (128, 128, 128))
        else:
            marked = (
                draw_overlay(previous, trajectory.steps[index].actions) if index < len(trajectory.steps) else previous
            )
            image = _scale(Image.fromarray(marked), min_width, max_width)
            if image.size != (width, height):
                image = image.resize((width, height), Image.Resampling.LANCZOS)
        canvas = Image.new("RGB", (width, total_height), (250, 250, 250))
        canvas.paste(image, (0, 0))
        if caption:
            draw = ImageDraw.Draw(canvas)
            head, detail, colour = _caption_lines(trajectory, index)
            draw.rectangle((0, height, width, total_height), fill=_COLORS[colour])
            draw.text((4, height + 3), _fit(head, font, width - 8, draw), fill=(255, 255, 255), font=font)
            draw.text((4, height + 18), _fit(detail, font, width - 8, draw), fill=(235, 235, 235), font=font)
        frames.append(np.asarray(canvas))
    return frames


def export_video(
    trajectory: Trajectory,
    out: str | os.PathLike[str],
    *,
    video_format: VideoFormat | None = None,
    fps: float = 1.0,
    caption: bool = True,
) -> Path | None:
    """Write the replay of one trajectory (:func:`trajectory_frames`) to ``out``: MP4 (H.264 via
    imageio-ffmpeg), GIF or WebP, from ``video_format`` or else ``out``'s suffix. Returns the path,
    or ``None`` when the trajectory has no screenshot to show.

    Raises:
        ValueError: an unknown format or a non-positive ``fps``.
    """
    path = Path(out)
    video_format = cast("VideoFormat", video_format or path.suffix.lower().lstrip(".") or "mp4")
    _check_choice("video format", str(video_format), VIDEO_FORMATS)
    if not fps > 0:
        raise ValueError(f"fps must be positive, got {fps}")
    frames = trajectory_frames(trajectory, caption=caption)
    if not frames:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.stem}.part{path.suffix or '.' + video_format}")
    if video_format == "mp4":
        import imageio.v2 as imageio

        # macro_block_size=2: frames are already even-sized, so no rescaling (and no warning).
        with imageio.get_writer(
            partial,
            format="FFMPEG",
            mode="I",
            fps=fps,
            codec="libx264",
            quality=7,
            pixelformat="yuv420p",
            macro_block_size=2,
            ffmpeg_log_level="error",
        ) as writer:
            for frame in frames:
                writer.append_data(frame)  # type: ignore[attr-defined]  # imageio's v2 Format.Writer
    else:
        import imageio.v3 as iio

        options: dict[str, Any] = {"duration": round(1000 / fps), "loop": 0}
        if video_format == "webp":
            options.update(quality=80)
        iio.imwrite(partial, np.stack(frames), plugin="pillow", extension=f".{video_format}", **options)
    os.replace(partial, path)
    return path


def export_videos(
    source: Source,
    out_dir: str | os.PathLike[str],
    *,
    video_format: VideoFormat = "mp4",
    fps: float = 1.0,
    caption: bool = True,
    on_progress: Progress | None = None,
) -> list[Path]:
    """A replay per trajectory of ``source`` in ``out_dir``, named
    ``<task id>-<group id[:8]>-<rollout index>-<trajectory id[:8]>.<format>``. Trajectories with no
    screenshot are skipped. Returns the paths written."""
    _check_choice("video format", video_format, VIDEO_FORMATS)
    trajectories = _trajectories(source)
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for done, trajectory in enumerate(trajectories, 1):
        stem = "-".join(
            [
                _safe_name(trajectory.task_id or "task"),
                (trajectory.group_id or "nogroup")[:8],
                str(trajectory.rollout_index),
                trajectory.trajectory_id[:8],
            ]
        )
        path = export_video(
            trajectory, directory / f"{stem}.{video_format}", video_format=video_format, fps=fps, caption=caption
        )
        if path is not None:
            written.append(path)
        if on_progress is not None:
            on_progress(done, len(trajectories))
    return written
