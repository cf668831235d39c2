"""What the app shows, read from the job store: plain JSON-ready dicts, never a write.

:class:`StoreView` opens the store read-only (``query_only``: a write is refused by SQLite itself)
and answers each page's question with a few queries: the jobs with their figures, a job's tables
(from :func:`hud_gym.jobs.analytics.compute_analytics`, so the numbers are the CLI's), a run with
its steps, a GRPO group aligned by step with :func:`hud_gym.advantages.group_advantages`, two jobs
compared per task, and a cheap version stamp that changes whenever another process writes.

A reward that is absent (a failed run) stays ``None`` here; the page shows it as "—", never 0.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from hud_gym.advantages import group_advantages
from hud_gym.bounds import SHOWN_CHARS, bound_info
from hud_gym.jobs.analytics import compute_analytics, is_success
from hud_gym.jobs.curves import learning_curves, tag_keys
from hud_gym.jobs.elements import compact_elements
from hud_gym.jobs.errors import JobNotFoundError, TrajectoryNotFoundError
from hud_gym.jobs.export_common import describe_actions
from hud_gym.jobs.rows import load_json
from hud_gym.jobs.store import Store
from hud_gym.jobs.tags import job_settings
from hud_gym.trajectory import FAILED

__all__ = ["StoreView"]

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp")
ENV_ID = re.compile(r"[0-9a-f]{32}")


def _shown(data: dict[str, Any], **kept: Any) -> dict[str, Any]:
    """``data`` as the UI shows it: every string cut to :data:`~hud_gym.bounds.SHOWN_CHARS` (the
    fields cut listed under ``truncated_fields``), at most 8 of them in all; ``kept`` added as is."""
    return {**bound_info(data, max_string=SHOWN_CHARS, max_total=8 * SHOWN_CHARS), **kept}


def _finite(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


class StoreView:
    """Read-only queries over the store in ``home``."""

    def __init__(self, home: Path) -> None:
        if not (home / "hud_gym.db").exists():
            Store(home)  # an empty store: create the schema once, so later writers' jobs show up
        self.store = Store(home, read_only=True)
        self.images_dir = self.store.images_dir.resolve()

    def _rows(self, query: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        with self.store.db.read() as conn:
            return [dict(row) for row in conn.execute(query, params).fetchall()]

    # ------------------------------------------------------------------ live

    def version(self) -> str:
        """A stamp that changes when any job, run or step is added or finishes."""
        (row,) = self._rows(
            "SELECT (SELECT COUNT(*) FROM jobs) AS j, (SELECT COUNT(*) FROM jobs WHERE status = 'running') AS jr, "
            "(SELECT MAX(rowid) FROM trajectories) AS t, "
            "(SELECT COUNT(*) FROM trajectories WHERE status = 'running') AS tr, (SELECT MAX(rowid) FROM steps) AS s"
        )
        return "-".join(str(row[k] or 0) for k in ("j", "jr", "t", "tr", "s"))

    # ------------------------------------------------------------------ jobs

    def jobs(self) -> list[dict[str, Any]]:
        """Every job, newest first, with runs, success rate, mean reward and errors (the CLI's
        figures: :func:`~hud_gym.jobs.analytics.compute_analytics`)."""
        out = []
        for job in self._rows(
            "SELECT id, name, created_at, status, ended_at, error, metadata FROM jobs ORDER BY created_at DESC"
        ):
            analytics = compute_analytics(
                job["id"], job["name"], job["status"], self.store.trajectory_summaries(job["id"])
            )
            settings = job_settings(load_json(job.pop("metadata"), {}))
            out.append(
                {
                    **job,
                    "agent": settings["agent"],
                    "taskset": settings["taskset"],
                    "tags": settings["tags"],
                    "runs": analytics.trajectories,
                    "running": analytics.running,
                    "errors": analytics.errors,
                    "scored": analytics.scored,
                    "success_rate": analytics.success_rate,
                    "mean_reward": analytics.mean_reward,
                    "steps": analytics.steps_total,
                }
            )
        return out

    def _job_row(self, job_id: str) -> dict[str, Any]:
        rows = self._rows("SELECT * FROM jobs WHERE id = ?", (job_id,))
        if not rows:
            raise JobNotFoundError(f"no job with id {job_id!r}")
        row = rows[0]
        row["metadata"] = load_json(row["metadata"], {})
        return row

    def job(self, job_id: str) -> dict[str, Any]:
        """A job: its row, analytics (per task, per group), and every run without its steps."""
        row = self._job_row(job_id)
        runs = self.store.trajectory_summaries(job_id)
        analytics = compute_analytics(job_id, row["name"], row["status"], runs)
        for run in runs:
            run["reward"] = _finite(run["reward"])
            run["success"] = is_success(run)
            run.pop("grade", None)
        return {
            "job": {k: row[k] for k in ("id", "name", "created_at", "status", "ended_at", "error", "metadata")},
            "settings": job_settings(row["metadata"]),
            "analytics": analytics.model_dump(mode="json"),
            "runs": runs,
        }

    def compare(self, a: str, b: str) -> dict[str, Any]:
        """Two jobs per task: runs, success rate and mean reward side by side, with the difference."""
        left, right = self.job(a)["analytics"], self.job(b)["analytics"]
        tasks: dict[str, dict[str, Any]] = {}
        for side, analytics in (("a", left), ("b", right)):
            for task in analytics["per_task"]:
                entry = tasks.setdefault(task["task_id"] or "(no id)", {"task_id": task["task_id"] or "(no id)"})
                entry[side] = {k: task[k] for k in ("runs", "errors", "success_rate", "mean_reward")}
        rows = []
        for entry in tasks.values():
            for key in ("success_rate", "mean_reward"):
                va, vb = (entry.get(side, {}).get(key) for side in ("a", "b"))
                entry[f"{key}_diff"] = vb - va if va is not None and vb is not None else None
            rows.append(entry)
        summary = {
            side: {k: an[k] for k in ("name", "success_rate", "mean_reward", "errors", "finished")}
            for side, an in (("a", left), ("b", right))
        }
        return {"a": a, "b": b, "summary": summary, "tasks": sorted(rows, key=lambda r: r["task_id"])}

    def curves(self, key: str) -> dict[str, Any]:
        """Success per task set and per task across the jobs tagged ``key`` (every tag key in
        the store under ``keys``; ``key`` empty: the first of them)."""
        with self.store.db.read():
            keys = tag_keys(self.store)
            key = key or (keys[0] if keys else "")
            points = learning_curves(self.store, key) if key in keys else []
        return {"key": key, "keys": keys, "points": [_shown(p.model_dump(mode="json")) for p in points]}

    # ------------------------------------------------------------------ runs and groups

    def _image_url(self, path: str | None) -> str | None:
        if not path:
            return None
        try:
            relative = Path(path).resolve().relative_to(self.images_dir)
        except ValueError:
            return None
        return "/images/" + relative.as_posix()

    def run(self, trajectory_id: str) -> dict[str, Any]:
        """A run with every step: the frame the agent saw (before the action) and the frame after,
        the actions (CLA JSON and in words), reward, status, info, timings and policy trace."""
        try:
            trajectory = self.store.load_trajectory(trajectory_id)
        except TrajectoryNotFoundError:
            raise
        running = bool(trajectory.metadata.get("running"))
        before = self._image_url(trajectory.metadata.get("initial_observation_ref"))
        elements_before = compact_elements(trajectory.metadata.get("initial_elements"))
        steps = []
        for step in trajectory.steps:
            after = self._image_url(step.observation_ref)
            info = dict(step.info)
            elements_after = compact_elements(info.pop("elements", None))
            steps.append(
                _shown(
                    {
                        "index": step.index,
                        "actions": step.actions,
                        "caption": describe_actions(step.actions),
                        "reward": _finite(step.reward),
                        "status": step.status,
                        "error": step.error,
                        "terminated": step.terminated,
                        "truncated": step.truncated,
                        "text": step.text,
                        "info": info,
                        "timings": step.timings,
                        "policy_trace": step.policy_trace,
                        "frame_before": before,
                        "frame_after": after,
                        "elements_before": elements_before,
                        "elements_after": elements_after,
                    }
                )
            )
            before = after or before
            elements_before = elements_after if after else elements_before
        return _shown(
            {
                "id": trajectory.trajectory_id,
                "job_id": trajectory.job_id,
                "group_id": trajectory.group_id,
                "rollout_index": trajectory.rollout_index,
                "task_id": trajectory.task_id,
                "seed": trajectory.seed,
                "prompt": trajectory.prompt,
                "status": "running" if running else trajectory.status,
                "reward": None if running or trajectory.failed else _finite(trajectory.reward),
                "error": trajectory.error,
                "final_response": trajectory.final_response,
                "grade": trajectory.grade,
                "started_at": trajectory.started_at.isoformat(),
                "ended_at": trajectory.ended_at.isoformat() if trajectory.ended_at else None,
                "initial_frame": self._image_url(trajectory.metadata.get("initial_observation_ref")),
                "initial_elements": compact_elements(trajectory.metadata.get("initial_elements")),
            },
            steps=steps,
        )

    def group(self, group_id: str) -> dict[str, Any]:
        """A GRPO group's runs side by side, with rewards and advantages (population std, as
        :func:`~hud_gym.advantages.group_advantages` by default; failed runs get 0)."""
        ids = self._rows(
            "SELECT id FROM trajectories WHERE group_id = ? ORDER BY rollout_index, started_at", (group_id,)
        )
        if not ids:
            raise TrajectoryNotFoundError(f"no group with id {group_id!r}")
        runs = [self.run(row["id"]) for row in ids]
        advantages = group_advantages([r["reward"] if r["status"] not in ("running", *FAILED) else None for r in runs])
        for run, advantage in zip(runs, advantages, strict=True):
            run["advantage"] = None if run["reward"] is None else float(advantage)
        return {
            "group_id": group_id,
            "job_id": runs[0]["job_id"],
            "task_id": runs[0]["task_id"],
            "seed": runs[0]["seed"],
            "prompt": runs[0]["prompt"],
            "runs": runs,
            "max_steps": max((len(r["steps"]) for r in runs), default=0),
        }

    def env_run(self, env_id: str) -> dict[str, Any]:
        """The newest run (episode) of the env ``env_id`` (its recorder's id, in each run's
        metadata), as :meth:`run`: what an env's live page shows across its resets.

        Raises:
            TrajectoryNotFoundError: a malformed id, or no run of that env.
        """
        if not ENV_ID.fullmatch(env_id):
            raise TrajectoryNotFoundError(f"no env with id {env_id[:40]!r}")
        rows = self._rows(
            "SELECT id FROM trajectories WHERE json_extract(metadata, '$.env_id') = ? "
            "ORDER BY started_at DESC, rowid DESC LIMIT 1",
            (env_id,),
        )
        if not rows:
            raise TrajectoryNotFoundError(f"no run of env {env_id!r} yet")
        return {**self.run(rows[0]["id"]), "env_id": env_id}

    def running_runs(self) -> list[dict[str, Any]]:
        """Runs in progress, newest first, with their newest step index."""
        return self._rows(
            "SELECT t.id, t.job_id, t.task_id, t.started_at, (SELECT MAX(idx) FROM steps s WHERE s.trajectory_id = t.id) "
            "AS last_step FROM trajectories t WHERE t.status = 'running' ORDER BY t.started_at DESC LIMIT 200"
        )

    def image_path(self, relative: str) -> Path | None:
        """The file under the store's images directory that ``relative`` names, or ``None``: a
        path that leaves the directory (``..``, an absolute path, a symlink pointing out), is not
        a regular file, or is not an image."""
        if not relative or "\x00" in relative or relative.startswith(("/", "\\")):
            return None
        candidate = (self.images_dir / relative).resolve()
        try:
            candidate.relative_to(self.images_dir)
        except ValueError:
            return None
        if candidate.suffix.lower() not in IMAGE_SUFFIXES or not candidate.is_file():
            return None
        return candidate
