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

Replays are :mod:`hud_gym.jobs.video`, the shared parts :mod:`hud_gym.jobs.export_common`.
Every function takes a :class:`~hud_gym.jobs.Job` (its finished trajectories are loaded) or a list
of :class:`~hud_gym.trajectory.Trajectory` whose screenshots are files (``observation_ref``).

Example:
    >>> job = load_job("3f2a")                                            # doctest: +SKIP
    >>> export_jsonl(job, "train.jsonl", images="base64")                # doctest: +SKIP
    >>> export_videos(job, "replays/", video_format="gif")               # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hud_gym.jobs.export_common import (
    EXPORT_FORMATS,
    IMAGE_MODES,
    VIDEO_FORMATS,
    ExportFormat,
    ImageMode,
    Progress,
    Source,
    VideoFormat,
    _check_choice,
    _existing,
    _image,
    _initial_ref,
    _trajectories,
    describe_action,
    describe_actions,
    image_data_url,
)
from hud_gym.jobs.rows import INITIAL_OBSERVATION_REF, json_safe
from hud_gym.jobs.video import export_video, export_videos, trajectory_frames
from hud_gym.trajectory import FAILED, Trajectory

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


# ---------------------------------------------------------------------- JSONL


def trajectory_record(trajectory: Trajectory, *, images: ImageMode = "path") -> dict[str, Any]:
    """One trajectory as a JSON-ready training record (one JSONL line; see :func:`export_jsonl`)."""
    _check_choice("images", images, IMAGE_MODES)
    failed = trajectory.status in FAILED
    metadata = {k: v for k, v in trajectory.metadata.items() if k != INITIAL_OBSERVATION_REF}
    steps = []
    for step in trajectory.steps:
        entry: dict[str, Any] = {
            "index": step.index,
            "actions": step.actions,
            "reward": step.reward,
            "terminated": step.terminated,
            "truncated": step.truncated,
            "status": step.status,
            "error": step.error,
            "text": step.text,
            "image": _image(step.observation_ref, images),
            "image_shows": step.info.get("observed", "after"),
            "started_at": step.started_at.isoformat(),
            "ended_at": step.ended_at.isoformat() if step.ended_at else None,
        }
        if step.policy_trace is not None:
            entry["policy_trace"] = step.policy_trace
        steps.append(entry)
    record = {
        "trajectory_id": trajectory.trajectory_id,
        "job_id": trajectory.job_id,
        "group_id": trajectory.group_id,
        "rollout_index": trajectory.rollout_index,
        "task_id": trajectory.task_id,
        "prompt": trajectory.prompt,
        "seed": trajectory.seed,
        "status": trajectory.status,
        "failed": failed,
        "reward": None if failed or trajectory.reward is None else float(trajectory.reward),
        "error": trajectory.error,
        "final_response": trajectory.final_response,
        "grade": trajectory.grade,
        "started_at": trajectory.started_at.isoformat(),
        "ended_at": trajectory.ended_at.isoformat() if trajectory.ended_at else None,
        "duration_s": trajectory.duration_s,
        "step_rewards": trajectory.step_rewards,
        "initial_image": _image(_initial_ref(trajectory), images),
        "steps": steps,
        "task": trajectory.task.model_dump(mode="json") if trajectory.task else None,
        "metadata": metadata,
    }
    return json_safe(record)


def export_jsonl(
    source: Source, out: str | os.PathLike[str], *, images: ImageMode = "path", on_progress: Progress | None = None
) -> Path:
    """Write one JSON line per trajectory of ``source`` (a Job or trajectories) to ``out``.

    Each line holds ``trajectory_id``, ``job_id``, ``group_id``, ``rollout_index``, ``task_id``,
    ``prompt``, ``seed``, ``status``, ``failed``, ``reward`` (``null`` for failed runs: they are
    not the task's doing), ``error``, ``final_response``, ``grade``, times, ``step_rewards``,
    ``initial_image``, ``steps`` (``index``, ``actions`` as CLA JSON, ``reward``, ``terminated``,
    ``truncated``, ``status``, ``error``, ``text``, ``image``, ``image_shows`` and
    ``policy_trace`` when set), the ``task`` and the ``metadata``. Returns the path written.

    A step's ``image`` is the screen **after** its actions (``initial_image`` is the one before
    the first step's); ``image_shows`` says so: ``"after"``, ``"repeated"`` (the step failed
    before observing: the image repeats the screen before its actions) or ``"cover"`` (after its
    actions, a suite's end-of-task cover such as MiniWoB++'s START screen, not the page).
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

    steps: list[dict[str, Any]] = [
        {
            "observation_url": url(_initial_ref(trajectory)),
            "observation_text": trajectory.prompt or None,
            "actions": [],
            "start_timestamp": trajectory.started_at.isoformat(),
            "end_timestamp": trajectory.started_at.isoformat(),
        }
    ]
    for step in trajectory.steps:
        steps.append(
            {
                "observation_url": url(step.observation_ref),
                "observation_text": step.text or None,
                "actions": step.actions,
                "start_timestamp": step.started_at.isoformat(),
                "end_timestamp": step.ended_at.isoformat() if step.ended_at else None,
            }
        )
    errors = [f"step {s.index}: {s.error}" for s in trajectory.steps if s.error]
    return json_safe(
        {
            "id": trajectory.trajectory_id,
            "reward": None if trajectory.status in FAILED else trajectory.reward,
            "logs": "\n".join(errors) or None,
            "error": trajectory.error,
            "trajectory": steps,
            "status": trajectory.status,
            "task_id": trajectory.task_id,
            "group_id": trajectory.group_id,
            "rollout_index": trajectory.rollout_index,
            "seed": trajectory.seed,
            "prompt": trajectory.prompt,
            "final_response": trajectory.final_response,
            "grade": trajectory.grade,
            "metadata": {k: v for k, v in trajectory.metadata.items() if k != INITIAL_OBSERVATION_REF},
        }
    )


def export_hud_json(
    source: Source, out: str | os.PathLike[str], *, images: ImageMode = "path", on_progress: Progress | None = None
) -> Path:
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
    partial.write_text(
        json.dumps({"job": json_safe(job), "trajectories": items}, ensure_ascii=False, indent=1), encoding="utf-8"
    )
    os.replace(partial, path)
    return path


# ---------------------------------------------------------------------- one entry point


def export_job(
    source: Source,
    export_format: ExportFormat,
    out: str | os.PathLike[str],
    *,
    images: ImageMode = "path",
    video_format: VideoFormat = "mp4",
    fps: float = 1.0,
    on_progress: Progress | None = None,
) -> list[Path]:
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
