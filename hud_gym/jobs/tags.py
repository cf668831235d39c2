"""Job tags and the settings a job is listed by: its agent, task set and ``key=value`` tags.

A tag marks a job for comparison across jobs (``--tag ckpt=1200`` on ``hud-gym run``; ``hud-gym
jobs tag``): a checkpoint, a learning rate, a date. Tags live in the job's metadata under
``"tags"`` (a dict of strings), so no schema change is needed and older stores read as untagged.
A tag given without ``=`` has the empty value.

Keys and values are bounded (:data:`MAX_KEY_CHARS`, :data:`MAX_VALUE_CHARS`, :data:`MAX_TAGS`)
and keys are restricted to ``[A-Za-z0-9_.-]``: they are shown in the UI and the CLI.

Example:
    >>> parse_tags(["ckpt=1200", "baseline"])
    {'ckpt': '1200', 'baseline': ''}
    >>> job_settings({"agent": "random", "run": {"taskset": "miniwob", "seed": 0}})["taskset"]
    'miniwob'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "MAX_KEY_CHARS",
    "MAX_TAGS",
    "MAX_VALUE_CHARS",
    "TAGS_KEY",
    "job_settings",
    "job_tags",
    "matches",
    "parse_tags",
    "tag_order",
]

TAGS_KEY = "tags"
MAX_TAGS = 32
MAX_KEY_CHARS = 64
MAX_VALUE_CHARS = 128
_KEY = re.compile(r"^[A-Za-z0-9_.-]+$")


def parse_tags(items: Iterable[str]) -> dict[str, str]:
    """``["key=value", "key"]`` as a dict (a later item wins over an earlier one with its key).

    Raises:
        ValueError: an empty or over-long key, a key outside ``[A-Za-z0-9_.-]``, an over-long
            value or one with control characters, or more than :data:`MAX_TAGS` tags.
    """
    tags: dict[str, str] = {}
    for item in items:
        key, _, value = str(item).partition("=")
        key, value = key.strip(), value.strip()
        if not key or len(key) > MAX_KEY_CHARS or not _KEY.match(key):
            raise ValueError(
                f"a tag is key=value with a key of 1-{MAX_KEY_CHARS} characters from A-Z a-z 0-9 _ . -, got {item!r:.80}"
            )
        if len(value) > MAX_VALUE_CHARS or any(ord(c) < 32 or ord(c) == 127 for c in value):
            raise ValueError(f"tag {key!r}: a value is at most {MAX_VALUE_CHARS} printable characters")
        tags[key] = value
    if len(tags) > MAX_TAGS:
        raise ValueError(f"a job takes at most {MAX_TAGS} tags, got {len(tags)}")
    return tags


def job_tags(metadata: Mapping[str, Any]) -> dict[str, str]:
    """The tags stored in a job's ``metadata`` (an absent or malformed entry: none)."""
    tags = metadata.get(TAGS_KEY)
    if not isinstance(tags, dict):
        return {}
    return {str(k)[:MAX_KEY_CHARS]: str(v)[:MAX_VALUE_CHARS] for k, v in list(tags.items())[:MAX_TAGS]}


def _run(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The run settings :func:`hud_gym.jobs.run.run_job` stores under ``"run"`` (none: empty)."""
    run = metadata.get("run")
    return run if isinstance(run, dict) else {}


def job_settings(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """What a job ran with, from its metadata: ``agent``, ``taskset``, ``seed``, ``group_size``,
    ``max_steps``, ``env_kwargs`` and ``tags`` (``None`` / empty when not recorded)."""
    run = _run(metadata)
    agent = metadata.get("agent") or run.get("agent")
    env_kwargs = metadata.get("env_kwargs", run.get("env_kwargs"))
    return {
        "agent": str(agent) if agent is not None else None,
        "taskset": run.get("taskset"),
        "tasks": run.get("tasks"),
        "seed": run.get("seed"),
        "group_size": run.get("group_size"),
        "max_steps": run.get("max_steps"),
        "env_kwargs": env_kwargs if isinstance(env_kwargs, dict) else {},
        "tags": job_tags(metadata),
    }


def matches(
    metadata: Mapping[str, Any],
    *,
    agent: str | None = None,
    taskset: str | None = None,
    tags: Mapping[str, str] | None = None,
) -> bool:
    """Whether a job with ``metadata`` ran ``agent`` (the CLI's ``--agent`` label, or the
    policy's name) on ``taskset`` and carries ``tags`` (a tag with the empty value matches any
    value of its key); ``None`` filters match all."""
    settings = job_settings(metadata)
    run = _run(metadata)
    if agent is not None and agent not in (settings["agent"], run.get("agent")):
        return False
    if taskset is not None and settings["taskset"] != taskset:
        return False
    have = settings["tags"]
    return all(key in have and (not value or have[key] == value) for key, value in (tags or {}).items())


def tag_order(value: str) -> tuple[int, float, str]:
    """A sort key that puts numeric tag values in numeric order (``"800" < "1200"``), then text."""
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)
