"""Managing stored jobs: rename, tag, delete, and list them filtered by agent, task set and tags.

The functions behind ``hud-gym jobs rename|tag|delete`` and ``hud-gym jobs list --agent/--taskset/--tag``
(tags: :mod:`hud_gym.jobs.tags`). A job that is still running in a live process is not deleted
unless ``force`` is given: its process would go on writing rows of a job that no longer exists.

Example:
    >>> job = rename_job("3f2a", "baseline")                    # doctest: +SKIP
    >>> tag_job(job.id, {"ckpt": "1200"})                        # doctest: +SKIP
    >>> [j.name for j in filter_jobs(tags={"ckpt": ""})]         # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from hud_gym.errors import HudGymError
from hud_gym.jobs.job import Job, list_jobs, load_job
from hud_gym.jobs.rows import load_json
from hud_gym.jobs.tags import MAX_TAGS, TAGS_KEY, job_tags, matches, parse_tags

__all__ = ["MAX_NAME_CHARS", "JobRunningError", "delete_job", "filter_jobs", "rename_job", "settings_of", "tag_job"]

MAX_NAME_CHARS = 200

Home = str | os.PathLike[str] | None


class JobRunningError(HudGymError, ValueError):
    """The job is still running in a live process (pass ``force`` to delete it all the same)."""


def rename_job(id_or_prefix: str, name: str, *, home: Home = None) -> Job:
    """Rename a job; returns it with its new name.

    Raises:
        ValueError: an empty name, or one longer than :data:`MAX_NAME_CHARS`.
        JobNotFoundError: no such job, or an ambiguous prefix.
    """
    name = name.strip() if isinstance(name, str) else ""
    if not name or len(name) > MAX_NAME_CHARS or any(ord(c) < 32 for c in name):
        raise ValueError(f"a job name is 1-{MAX_NAME_CHARS} printable characters, got {name[:80]!r}")
    job = load_job(id_or_prefix, home=home)
    job.store.rename_job(job.id, name)
    return load_job(job.id, home=home)


def tag_job(
    id_or_prefix: str, add: Mapping[str, str] | None = None, remove: Iterable[str] = (), *, home: Home = None
) -> dict[str, str]:
    """Add the tags ``add`` (a key already there gets the new value) and remove the keys
    ``remove`` from a job; returns its tags.

    Raises:
        ValueError: a malformed tag (see :func:`~hud_gym.jobs.tags.parse_tags`) or too many.
        JobNotFoundError: no such job, or an ambiguous prefix.
    """
    added = parse_tags(f"{k}={v}" for k, v in (add or {}).items())
    job = load_job(id_or_prefix, home=home)
    metadata = load_json(job.store.job_row(job.id)["metadata"], {})
    tags = {k: v for k, v in job_tags(metadata).items() if k not in set(remove)}
    tags.update(added)
    if len(tags) > MAX_TAGS:
        raise ValueError(f"a job takes at most {MAX_TAGS} tags; this one would have {len(tags)}")
    metadata[TAGS_KEY] = tags
    job.store.jobs.update_job_metadata(job.id, metadata)
    return tags


def delete_job(id_or_prefix: str, *, force: bool = False, home: Home = None) -> Job:
    """Delete a job with its runs, steps and screenshots; returns the job deleted.

    Raises:
        JobRunningError: the job is running in a live process and ``force`` is not given.
        JobNotFoundError: no such job, or an ambiguous prefix.
    """
    job = load_job(id_or_prefix, home=home)
    if job.status == "running" and not force:
        raise JobRunningError(
            f"job {job.id} ({job.name!r}) is still running in a live process: stop it first, or pass --force"
        )
    job.store.jobs.delete_job(job.id)
    return job


def filter_jobs(
    *,
    agent: str | None = None,
    taskset: str | None = None,
    tags: Mapping[str, str] | None = None,
    limit: int | None = None,
    home: Home = None,
) -> list[Job]:
    """The jobs (newest first, at most ``limit``) that ran ``agent`` on ``taskset`` and carry
    ``tags`` (see :func:`~hud_gym.jobs.tags.matches`)."""
    kept: list[Job] = []
    for job in list_jobs(home=home):
        if matches(job.metadata, agent=agent, taskset=taskset, tags=tags):
            kept.append(job)
            if limit is not None and len(kept) >= limit:
                break
    return kept


def settings_of(job: Job) -> dict[str, Any]:
    """The job's settings (agent, task set, seed, env kwargs, tags), from its stored metadata."""
    from hud_gym.jobs.tags import job_settings

    return job_settings(load_json(job.store.job_row(job.id)["metadata"], {}))
