"""Export a job's trajectories: JSONL training data, a video replay per trajectory, HUD-style JSON.

- :func:`export_jsonl`: one line per trajectory with its ids, group, task, prompt, seed, status,
  ``reward`` (``null`` for failed runs), and every step's actions (CLA JSON), reward, status and
  screenshot (an absolute path, or inline as a ``data:`` URL with ``images="base64"``).
- :func:`export_video` / :func:`export_videos`: a replay per trajectory (MP4 through
  imageio-ffmpeg, or an animated GIF / WebP), one frame for the reset screenshot and one per step,
  each with a caption band saying what the step did and the reward it got.
- :func:`export_hud_json`: the HUD SDK's trajectory shape (``id``, ``reward``, ``logs``, ``error``,
  ``trajectory`` = steps of ``observation_url``, ``observation_text``, ``actions``,
  ``start_timestamp``, ``end_timestamp``; the first step is the reset observation, with no
  actions), plus hud-gym's ``status``, ``task_id`` and ``group_id``.
- :func:`export_job`: any of them by name (what ``hud-gym jobs export`` calls).

Every function takes a :class:`~hud_gym.jobs.Job` (its finished trajectories are loaded) or a list
of :class:`~hud_gym.trajectory.Trajectory` whose screenshots are files (``observation_ref``).

Example:
    >>> job = load_job("3f2a")                                            # doctest: +SKIP
    >>> export_jsonl(job, "train.jsonl", images="base64")                # doctest: +SKIP
    >>> export_videos(job, "replays/", video_format="gif")               # doctest: +SKIP
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Union

import numpy as np

from hud_gym.jobs.rows import INITIAL_OBSERVATION_REF, json_safe
from hud_gym.trajectory import FAILED, Trajectory

if TYPE_CHECKING:
    from hud_gym.jobs.job import Job

__all__ = [
    "EXPORT_FORMATS",
    "IMAGE_MODES",
    "VIDEO_FORMATS",
    "ExportFormat",
    "ImageMode",
    "Source",
    "VideoFormat",
    "describe_action",
    "describe_actions",
    "export_hud_json",
    "export_job",
    "export_jsonl",
    "export_video",
    "export_videos",
    "hud_trajectory",
    "image_data_url",
    "trajectory_frames",
    "trajectory_record",
]

ImageMode = Literal["path", "base64", "none"]
"""How screenshots appear in an export: absolute file paths, inline ``data:`` URLs, or left out."""
VideoFormat = Literal["mp4", "gif", "webp"]
ExportFormat = Literal["jsonl", "hud", "video"]

IMAGE_MODES: tuple[str, ...] = ("path", "base64", "none")
VIDEO_FORMATS: tuple[str, ...] = ("mp4", "gif", "webp")
EXPORT_FORMATS: tuple[str, ...] = ("jsonl", "hud", "video")

Progress = Callable[[int, int], Any]
"""``on_progress(done, total)``, called after each trajectory."""
Source = Union["Job", Sequence[Trajectory]]
"""A job (its finished trajectories are loaded) or trajectories whose screenshots are files."""

_MIME = {".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".webp": "image/webp", ".gif": "image/gif"}


def _check_choice(name: str, value: str, choices: Sequence[str]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}; got {value!r}")


def _trajectories(source: Source) -> list[Trajectory]:
    if hasattr(source, "load_trajectories"):
        return list(source.load_trajectories())
    trajectories = list(source)
    for item in trajectories:
        if not isinstance(item, Trajectory):
            raise TypeError(f"expected a Job or Trajectory objects, got {type(item).__name__}")
    return trajectories


def _initial_ref(trajectory: Trajectory) -> str | None:
    return trajectory.metadata.get(INITIAL_OBSERVATION_REF)


def _existing(ref: str | None) -> Path | None:
    if not ref:
        return None
    path = Path(ref)
    return path if path.is_file() else None


def image_data_url(path: str | os.PathLike[str]) -> str:
    """The image file at ``path`` as a ``data:image/...;base64,`` URL (bytes as stored, not re-encoded)."""
    path = Path(path)
    mime = _MIME.get(path.suffix.lower(), "application/octet-stream")
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def _image(ref: str | None, images: str) -> str | None:
    path = _existing(ref)
    if path is None or images == "none":
        return None
    return image_data_url(path) if images == "base64" else str(path)


# ---------------------------------------------------------------------- human-readable actions

def _point(value: Any) -> str:
    if isinstance(value, dict) and "x" in value and "y" in value:
        return f"({value['x']}, {value['y']})"
    return "the cursor"


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_action(action: dict[str, Any]) -> str:
    """One CLA action (its JSON form) as a short phrase, e.g. ``click left at (30, 142)``.

    Example:
        >>> describe_action({"type": "press", "keys": ["ctrl", "a"]})
        'press ctrl+a'
    """
    kind = action.get("type")
    hold = action.get("hold_keys")
    holding = f" holding {'+'.join(hold)}" if hold else ""
    if kind == "click":
        pattern = action.get("pattern")
        times = f" x{len(pattern) + 1}" if pattern else ""
        return f"click {action.get('button', 'left')}{times} at {_point(action.get('point'))}{holding}"
    if kind in ("press", "keydown", "keyup"):
        return f"{kind} {'+'.join(str(k) for k in action.get('keys') or [])}"
    if kind == "type":
        return f"type {json.dumps(_clip(str(action.get('text', ''))), ensure_ascii=False)}" + (
            " + enter" if action.get("enter_after") else "")
    if kind == "scroll":
        scroll = action.get("scroll") or {}
        return f"scroll ({scroll.get('x', 0)}, {scroll.get('y', 0)}) at {_point(action.get('point'))}{holding}"
    if kind == "move":
        if action.get("offset"):
            return f"move by {_point(action['offset'])}"
        return f"move to {_point(action.get('point'))}"
    if kind == "drag":
        path = action.get("path") or []
        ends = f"{_point(path[0])} → {_point(path[-1])}" if path else "?"
        return f"drag {ends}{holding}"
    if kind == "wait":
        return f"wait {action.get('time', 0)} ms"
    if kind == "response":
        return f"respond {json.dumps(_clip(str(action.get('text', ''))), ensure_ascii=False)}"
    if kind in ("screenshot", "position"):
        return kind
    if kind == "custom":
        args = action.get("args")
        return f"custom {action.get('action', '?')}" + (f" {_clip(json.dumps(args, ensure_ascii=False), 40)}" if args else "")
    if "value" in action and len(action) == 1:  # an action the policy returned in no CLA form
        return f"unparsed action {_clip(str(action['value']), 40)}"
    return _clip(json.dumps(action, ensure_ascii=False))


def describe_actions(actions: Sequence[dict[str, Any]]) -> str:
    """A step's actions, ``; ``-separated (``no action`` when empty)."""
    return "; ".join(describe_action(a) for a in actions) if actions else "no action"


# ---------------------------------------------------------------------- JSONL

def trajectory_record(trajectory: Trajectory, *, images: ImageMode = "path") -> dict[str, Any]:
    """One trajectory as a JSON-ready training record (one JSONL line; see :func:`export_jsonl`)."""
    _check_choice("images", images, IMAGE_MODES)
    failed = trajectory.status in FAILED
    metadata = {k: v for k, v in trajectory.metadata.items() if k != INITIAL_OBSERVATION_REF}
    steps = []
    for step in trajectory.steps:
        entry: dict[str, Any] = {
            "index": step.index, "actions": step.actions, "reward": step.reward, "terminated": step.terminated,
            "truncated": step.truncated, "status": step.status, "error": step.error, "text": step.text,
            "image": _image(step.observation_ref, images),
            "started_at": step.started_at.isoformat(), "ended_at": step.ended_at.isoformat() if step.ended_at else None,
        }
        if step.policy_trace is not None:
            entry["policy_trace"] = step.policy_trace
        steps.append(entry)
    record = {
        "trajectory_id": trajectory.trajectory_id, "job_id": trajectory.job_id, "group_id": trajectory.group_id,
        "rollout_index": trajectory.rollout_index, "task_id": trajectory.task_id, "prompt": trajectory.prompt,
        "seed": trajectory.seed, "status": trajectory.status, "failed": failed,
        "reward": None if failed or trajectory.reward is None else float(trajectory.reward),
        "error": trajectory.error, "final_response": trajectory.final_response, "grade": trajectory.grade,
        "started_at": trajectory.started_at.isoformat(),
        "ended_at": trajectory.ended_at.isoformat() if trajectory.ended_at else None,
        "duration_s": trajectory.duration_s, "step_rewards": trajectory.step_rewards,
        "initial_image": _image(_initial_ref(trajectory), images), "steps": steps,
        "task": trajectory.task.model_dump(mode="json") if trajectory.task else None, "metadata": metadata,
    }
    return json_safe(record)


def export_jsonl(source: Source, out: str | os.PathLike[str], *, images: ImageMode = "path",
                 on_progress: Progress | None = None) -> Path:
    """Write one JSON line per trajectory of ``source`` (a Job or trajectories) to ``out``.

    Each line holds ``trajectory_id``, ``job_id``, ``group_id``, ``rollout_index``, ``task_id``,
    ``prompt``, ``seed``, ``status``, ``failed``, ``reward`` (``null`` for failed runs: they are
    not the task's doing), ``error``, ``final_response``, ``grade``, times, ``step_rewards``,
    ``initial_image``, ``steps`` (``index``, ``actions`` as CLA JSON, ``reward``, ``terminated``,
    ``truncated``, ``status``, ``error``, ``text``, ``image``, and ``policy_trace`` when set), the
    ``task`` and the ``metadata``. Returns the path written.
    """
    _check_choice("images", images, IMAGE_MODES)
    trajectories = _trajectories(source)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.part")
    with partial.open("w", encoding="utf-8") as file:
        for done, trajectory in enumerate(trajectories, 1):
            file.write(json.dumps(trajectory_record(trajectory, images=images), ensure_ascii=False, allow_nan=False))
            file.write("\n")
            if on_progress is not None:
                on_progress(done, len(trajectories))
    os.replace(partial, path)
    return path


# ---------------------------------------------------------------------- HUD-style JSON

def hud_trajectory(trajectory: Trajectory, *, images: ImageMode = "path") -> dict[str, Any]:
    """One trajectory in the HUD SDK's shape (``observation_url`` is a ``file://`` URL, or a
    ``data:`` URL with ``images="base64"``)."""
    _check_choice("images", images, IMAGE_MODES)

    def url(ref: str | None) -> str | None:
        path = _existing(ref)
        if path is None or images == "none":
            return None
        return image_data_url(path) if images == "base64" else path.absolute().as_uri()

    steps = [{"observation_url": url(_initial_ref(trajectory)), "observation_text": trajectory.prompt or None,
              "actions": [], "start_timestamp": trajectory.started_at.isoformat(),
              "end_timestamp": trajectory.started_at.isoformat()}]
    for step in trajectory.steps:
        steps.append({"observation_url": url(step.observation_ref), "observation_text": step.text or None,
                      "actions": step.actions, "start_timestamp": step.started_at.isoformat(),
                      "end_timestamp": step.ended_at.isoformat() if step.ended_at else None})
    errors = [f"step {s.index}: {s.error}" for s in trajectory.steps if s.error]
    return json_safe({
        "id": trajectory.trajectory_id,
        "reward": None if trajectory.status in FAILED else trajectory.reward,
        "logs": "\n".join(errors) or None,
        "error": trajectory.error,
        "trajectory": steps,
        "status": trajectory.status, "task_id": trajectory.task_id, "group_id": trajectory.group_id,
        "rollout_index": trajectory.rollout_index, "seed": trajectory.seed, "prompt": trajectory.prompt,
        "final_response": trajectory.final_response, "grade": trajectory.grade,
        "metadata": {k: v for k, v in trajectory.metadata.items() if k != INITIAL_OBSERVATION_REF},
    })


def export_hud_json(source: Source, out: str | os.PathLike[str], *, images: ImageMode = "path",
                    on_progress: Progress | None = None) -> Path:
    """Write ``{"job": {...} | null, "trajectories": [HUD trajectory, ...]}`` to ``out`` (see
    :func:`hud_trajectory`); ``job`` holds the job's ``id``, ``name``, ``metadata``,
    ``created_at`` and ``status`` when ``source`` is a Job. Returns the path written."""
    _check_choice("images", images, IMAGE_MODES)
    trajectories = _trajectories(source)
    items = []
    for done, trajectory in enumerate(trajectories, 1):
        items.append(hud_trajectory(trajectory, images=images))
        if on_progress is not None:
            on_progress(done, len(trajectories))
    job = source.to_dict() if hasattr(source, "to_dict") else None
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.part")
    partial.write_text(json.dumps({"job": json_safe(job), "trajectories": items}, ensure_ascii=False, indent=1),
                       encoding="utf-8")
    os.replace(partial, path)
    return path


# ---------------------------------------------------------------------- replays

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
    """(first line, second line, colour key) of frame ``index`` (0 = the reset)."""
    steps = trajectory.steps
    if index == 0:
        return f"reset · {trajectory.task_id or 'task'}", _clip(trajectory.prompt or "", 90), "neutral"
    step = steps[index - 1]
    last = index == len(steps)
    reward = "none" if step.reward is None else f"{step.reward:g}"
    head = f"step {step.index + 1}/{len(steps)} · reward {reward}"
    if step.status != "ok":
        head += f" · {step.status}"
    colour = "fail" if step.status != "ok" else "neutral"
    if last:
        outcome = "failed: " + trajectory.status if trajectory.status in FAILED else (
            f"final reward {trajectory.reward:g}" if trajectory.reward is not None else trajectory.status)
        head += f" · {outcome}"
        if trajectory.status in FAILED or (trajectory.reward is not None and trajectory.reward <= 0):
            colour = "fail"
        elif trajectory.reward is not None and trajectory.reward > 0:
            colour = "ok"
    return head, _clip(describe_actions(step.actions), 90), colour


def _fit(text: str, font: Any, width: int, draw: Any) -> str:
    if draw.textlength(text, font=font) <= width:
        return text
    while text and draw.textlength(text + "…", font=font) > width:
        text = text[:-1]
    return text + "…"


def trajectory_frames(trajectory: Trajectory, *, caption: bool = True, min_width: int = 320,
                      max_width: int | None = 1280) -> list[np.ndarray]:
    """The replay frames of a trajectory: the reset screenshot, then the screenshot after each
    step (``1 + len(steps)`` frames), as ``(H, W, 3)`` uint8 arrays of one size (even width and
    height, as video codecs need). A missing screenshot repeats the previous frame (grey if there
    is none yet). Small screenshots are scaled up to ``min_width`` (nearest neighbour), large ones
    down to ``max_width``. With ``caption``, a band under each frame says what happened.

    Returns an empty list when the trajectory has no readable screenshot at all (e.g. its reset
    failed).
    """
    from PIL import Image, ImageDraw, ImageFont

    refs = [_initial_ref(trajectory), *(s.observation_ref for s in trajectory.steps)]
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
    previous: Any = Image.new("RGB", (width, height), (128, 128, 128))
    for index, path in enumerate(paths):
        pixels = _load_rgb(path)
        if pixels is not None:
            image = _scale(Image.fromarray(pixels), min_width, max_width)
            if image.size != (width, height):
                image = image.resize((width, height), Image.Resampling.LANCZOS)
            previous = image
        canvas = Image.new("RGB", (width, total_height), (250, 250, 250))
        canvas.paste(previous, (0, 0))
        if caption:
            draw = ImageDraw.Draw(canvas)
            head, detail, colour = _caption_lines(trajectory, index)
            draw.rectangle((0, height, width, total_height), fill=_COLORS[colour])
            draw.text((4, height + 3), _fit(head, font, width - 8, draw), fill=(255, 255, 255), font=font)
            draw.text((4, height + 18), _fit(detail, font, width - 8, draw), fill=(235, 235, 235), font=font)
        frames.append(np.asarray(canvas))
    return frames


def export_video(trajectory: Trajectory, out: str | os.PathLike[str], *, video_format: VideoFormat | None = None,
                 fps: float = 1.0, caption: bool = True) -> Path | None:
    """Write the replay of one trajectory (:func:`trajectory_frames`) to ``out``: MP4 (H.264 via
    imageio-ffmpeg), GIF or WebP, from ``video_format`` or else ``out``'s suffix. Returns the path,
    or ``None`` when the trajectory has no screenshot to show.

    Raises:
        ValueError: an unknown format or a non-positive ``fps``.
    """
    path = Path(out)
    video_format = video_format or path.suffix.lower().lstrip(".") or "mp4"  # type: ignore[assignment]
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
        with imageio.get_writer(partial, format="FFMPEG", mode="I", fps=fps, codec="libx264", quality=7,
                                pixelformat="yuv420p", macro_block_size=2,
                                ffmpeg_log_level="error") as writer:
            for frame in frames:
                writer.append_data(frame)
    else:
        import imageio.v3 as iio

        options: dict[str, Any] = {"duration": round(1000 / fps), "loop": 0}
        if video_format == "webp":
            options.update(quality=80)
        iio.imwrite(partial, np.stack(frames), plugin="pillow", extension=f".{video_format}", **options)
    os.replace(partial, path)
    return path


def export_videos(source: Source, out_dir: str | os.PathLike[str], *, video_format: VideoFormat = "mp4",
                  fps: float = 1.0, caption: bool = True, on_progress: Progress | None = None) -> list[Path]:
    """A replay per trajectory of ``source`` in ``out_dir``, named
    ``<task id>-<group id[:8]>-<rollout index>-<trajectory id[:8]>.<format>``. Trajectories with no
    screenshot are skipped. Returns the paths written."""
    _check_choice("video format", video_format, VIDEO_FORMATS)
    trajectories = _trajectories(source)
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for done, trajectory in enumerate(trajectories, 1):
        stem = "-".join([_safe_name(trajectory.task_id or "task"), (trajectory.group_id or "nogroup")[:8],
                         str(trajectory.rollout_index), trajectory.trajectory_id[:8]])
        path = export_video(trajectory, directory / f"{stem}.{video_format}", video_format=video_format, fps=fps,
                            caption=caption)
        if path is not None:
            written.append(path)
        if on_progress is not None:
            on_progress(done, len(trajectories))
    return written


def _safe_name(text: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "-_." else "_" for c in text).strip("._")
    return cleaned[:60] or "task"


# ---------------------------------------------------------------------- one entry point

def export_job(source: Source, export_format: ExportFormat, out: str | os.PathLike[str], *, images: ImageMode = "path",
               video_format: VideoFormat = "mp4", fps: float = 1.0, on_progress: Progress | None = None) -> list[Path]:
    """Export ``source`` as ``"jsonl"`` (a file), ``"hud"`` (a JSON file) or ``"video"`` (a
    directory of replays); returns the files written.

    Raises:
        ValueError: an unknown format, image mode or video format.
    """
    _check_choice("format", export_format, EXPORT_FORMATS)
    _check_choice("images", images, IMAGE_MODES)
    _check_choice("video format", video_format, VIDEO_FORMATS)
    if export_format == "jsonl":
        return [export_jsonl(source, out, images=images, on_progress=on_progress)]
    if export_format == "hud":
        return [export_hud_json(source, out, images=images, on_progress=on_progress)]
    return export_videos(source, out, video_format=video_format, fps=fps, on_progress=on_progress)
