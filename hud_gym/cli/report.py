"""The HTML job report: one self-contained page (``hud-gym report JOB``).

The page holds the job summary (status, success rate, mean reward, errors, steps, durations), the
run settings, a per-task table, a per-group table when tasks ran more than once (GRPO groups), and
a card per trajectory: its task, prompt, status badge, reward (failed runs say ``no reward`` and
why, never ``0``), and a filmstrip of its frames (the reset screenshot, then one per step) with
each step's actions in words and as CLA JSON, its reward and any error.

Screenshots are embedded as ``data:`` URLs, downscaled to ``frame_width`` pixels and re-encoded as
JPEG (``images="embed"``), or linked as relative file paths (``images="link"``: a small page that
only works next to the job store). CSS and JS are inline; every text from the job (prompts,
answers, errors, metadata) is HTML-escaped, and a Content-Security-Policy lets only the page's own
script (by nonce) run.

Example:
    >>> path = write_report(load_job("3f2a"))        # doctest: +SKIP
    >>> print(path)                                   # doctest: +SKIP
    /home/me/.local/share/hud-gym/reports/3f2a....html
"""

from __future__ import annotations

import base64
import html
import io
import json
import os
import secrets
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from hud_gym.cli.numbers import fmt, pct
from hud_gym.cli.report_assets import REPORT_CSS, REPORT_JS
from hud_gym.jobs.analytics import JobAnalytics, is_success
from hud_gym.jobs.export import describe_actions
from hud_gym.jobs.overlay import overlay_svg
from hud_gym.jobs.rows import INITIAL_OBSERVATION_REF
from hud_gym.trajectory import FAILED, Trajectory

__all__ = ["ReportImages", "default_report_path", "outcome_of", "render_report", "write_report"]

ReportImages = Literal["embed", "link"]

Progress = Callable[[int, int], Any]


def _e(value: Any) -> str:
    """HTML-escaped text (quotes included, so it is safe in attributes too)."""
    return html.escape("" if value is None else str(value), quote=True)


def _seconds(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.1f} s" if value < 120 else f"{value / 60:.1f} min"


def outcome_of(trajectory: Trajectory, success_threshold: float = 1.0) -> str:
    """``"success"``, ``"failure"`` (scored below the threshold) or ``"error"`` (a failed run: no
    reward), as the analytics count them."""
    if trajectory.status in FAILED:
        return "error"
    row = {"reward": trajectory.reward, "status": trajectory.status, "grade": trajectory.grade}
    return "success" if is_success(row, success_threshold) else "failure"


class _Images:
    """Turns screenshot paths into ``<img src>`` values: embedded JPEG data URLs or relative links."""

    def __init__(self, mode: ReportImages, base_dir: Path, frame_width: int, jpeg_quality: int) -> None:
        self.mode, self.base_dir, self.frame_width, self.jpeg_quality = mode, base_dir, frame_width, jpeg_quality
        self.bytes_embedded = 0
        self.sizes: dict[str, tuple[int, int]] = {}
        self._run_sizes: dict[str, tuple[int, int]] = {}
        self._relative_dirs: dict[str, str] = {}

    def size(self, ref: str | None) -> tuple[int, int] | None:
        """The stored frame's (width, height): the pixels its step's actions are in. The frames of
        one run (one directory) share the env's observation size: one header is read per run."""
        if not ref:
            return None
        if ref in self.sizes:
            return self.sizes[ref]
        run = os.path.dirname(ref)
        if run not in self._run_sizes:
            from PIL import Image

            try:
                with Image.open(ref) as image:  # reads the header only
                    self._run_sizes[run] = image.size
            except (OSError, ValueError, Image.DecompressionBombError):
                return None
        return self._run_sizes[run]

    def _link(self, path: str) -> str:
        folder, name = os.path.split(path)
        if folder not in self._relative_dirs:
            self._relative_dirs[folder] = quote(os.path.relpath(folder, self.base_dir).replace(os.sep, "/"))
        return f"{self._relative_dirs[folder]}/{quote(name)}"

    def src(self, ref: str | None) -> str | None:
        if not ref:
            return None
        path = Path(ref)
        if not os.path.isfile(ref):
            return None
        if self.mode == "link":
            return self._link(ref)
        from PIL import Image

        try:
            with Image.open(path) as image:
                rgb = image.convert("RGB")
        except (OSError, ValueError, Image.DecompressionBombError):  # a damaged file: the frame shows no image
            return None
        self.sizes[ref] = rgb.size
        if rgb.width > self.frame_width:
            height = max(1, round(rgb.height * self.frame_width / rgb.width))
            rgb = rgb.resize((self.frame_width, height), Image.Resampling.LANCZOS)
        buffer = io.BytesIO()
        rgb.save(buffer, format="JPEG", quality=self.jpeg_quality, optimize=True)
        data = buffer.getvalue()
        self.bytes_embedded += len(data)
        return "data:image/jpeg;base64," + base64.b64encode(data).decode("ascii")


# ---------------------------------------------------------------------- sections


def _summary(job: Any, analytics: JobAnalytics) -> str:
    wall = (job.ended_at - job.created_at).total_seconds() if job.ended_at else None
    errors = ", ".join(f"{n} {s}" for s, n in sorted(analytics.error_counts.items())) or "none"
    duration = analytics.duration
    cards = [
        (
            "Status",
            f'<span class="badge {_e(analytics.status)}">{_e(analytics.status)}</span>',
            f"wall time {_seconds(wall)}",
        ),
        (
            "Trajectories",
            str(analytics.trajectories),
            f"{analytics.finished} finished" + (f", {analytics.running} running" if analytics.running else ""),
        ),
        (
            "Success rate",
            pct(analytics.success_rate),
            f"{analytics.successes}/{analytics.scored} scored runs (reward ≥ {fmt(analytics.success_threshold, 2)})",
        ),
        ("Mean reward", fmt(analytics.mean_reward, 3), "over scored runs"),
        ("Errors", str(analytics.errors), errors),
        ("Steps", str(analytics.steps_total), f"mean {fmt(analytics.steps_mean, 2)} per run"),
        (
            "Run duration",
            _seconds(duration.mean_s),
            f"p50 {_seconds(duration.p50_s)} · p95 {_seconds(duration.p95_s)} · max {_seconds(duration.max_s)}",
        ),
    ]
    return (
        '<section class="cards" id="summary">'
        + "".join(
            f'<div class="card" data-card="{_e(label.lower())}"><div class="label">{_e(label)}</div>'
            f'<div class="value">{value}</div><div class="sub">{_e(sub)}</div></div>'
            for label, value, sub in cards
        )
        + "</section>"
    )


def _job_error(job: Any) -> str:
    error = job.error
    return f'<p class="error-text" id="job-error">job {_e(job.status)}: {_e(error)}</p>' if error else ""


def _settings(job: Any) -> str:
    metadata = dict(job.metadata or {})
    run = metadata.pop("run", None)
    items = {k: v for k, v in {**(run if isinstance(run, dict) else {}), **metadata}.items() if v is not None}
    if not items:
        return ""
    rows = "".join(
        f"<dt>{_e(key)}</dt><dd>{_e(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))}</dd>"
        for key, value in items.items()
    )
    return f'<h2>Settings</h2><dl class="settings">{rows}</dl>'


def _task_table(analytics: JobAnalytics) -> str:
    rows = "".join(
        f"<tr><td>{_e(t.task_id or '(no id)')}</td><td class=num>{t.runs}</td><td class=num>{t.scored}</td>"
        f"<td class=num>{t.successes}</td><td class=num>{t.errors}</td><td class=num>{pct(t.success_rate)}</td>"
        f"<td class=num>{fmt(t.mean_reward, 3)}</td><td class=num>{fmt(t.mean_steps, 1)}</td></tr>"
        for t in analytics.per_task
    )
    return (
        '<h2>Per task</h2><table id="task-table"><thead><tr><th>task</th><th>runs</th><th>scored</th>'
        "<th>successes</th><th>errors</th><th>success rate</th><th>mean reward</th><th>mean steps</th></tr>"
        f"</thead><tbody>{rows}</tbody></table>"
    )


def _group_table(analytics: JobAnalytics) -> str:
    groups = [g for g in analytics.per_group if len(g.rewards) > 1]
    if not groups:
        return ""
    rows = "".join(
        f"<tr><td class=ids>{_e(g.group_id[:8])}</td><td>{_e(g.task_id or '(no id)')}</td>"
        f"<td class=num>{_e(g.seed if g.seed is not None else '—')}</td>"
        f"<td>{_e(', '.join('failed' if r is None else fmt(r, 3) for r in g.rewards))}</td>"
        f"<td class=num>{fmt(g.mean, 3)}</td><td class=num>{fmt(g.std, 3)}</td>"
        f"<td class=num>{g.successes}/{len(g.rewards)}</td></tr>"
        for g in groups
    )
    return (
        '<h2>Per group</h2><table id="group-table"><thead><tr><th>group</th><th>task</th><th>seed</th>'
        "<th>rewards (rollout order)</th><th>mean</th><th>std</th><th>successes</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )


def _frame(
    src: str | None, alt: str, caption: str, *, bad: bool = False, step: int | str = "reset", overlay: str = ""
) -> str:
    image = (
        f'<div class="shot"><img src="{_e(src)}" alt="{_e(alt)}" loading="eager">{overlay}</div>'
        if src
        else '<div class="noimage">no screenshot</div>'
    )
    data = f' data-step="{step}"'
    return f'<figure class="frame{" bad" if bad else ""}"{data}>{image}<figcaption>{caption}</figcaption></figure>'


def _trajectory_card(trajectory: Trajectory, images: _Images, success_threshold: float) -> str:
    outcome = outcome_of(trajectory, success_threshold)
    failed = outcome == "error"
    if failed:
        reward = f'<span class="reward none">no reward ({_e(trajectory.status)})</span>'
    else:
        reward = f'<span class="reward">reward {_e(fmt(trajectory.reward, 3))}</span>'
    badge_text = {"success": "success", "failure": "failed task", "error": f"run failed: {trajectory.status}"}[outcome]
    if outcome != "error" and trajectory.status == "truncated":
        badge_text += " (truncated)"
    ids = (
        f"run {trajectory.rollout_index + 1}"
        + (f" · group {trajectory.group_id[:8]}" if trajectory.group_id else "")
        + (f" · seed {trajectory.seed}" if trajectory.seed is not None else "")
        + f" · {len(trajectory.steps)} step{'' if len(trajectory.steps) == 1 else 's'}"
        + f" · {_seconds(trajectory.duration_s)} · {trajectory.trajectory_id[:12]}"
    )
    stored_reward = "" if trajectory.reward is None else trajectory.reward
    parts = [
        (
            f'<article class="trajectory {outcome}" id="t-{_e(trajectory.trajectory_id)}" data-outcome="{outcome}" '
            f'data-status="{_e(trajectory.status)}" data-reward="{_e(stored_reward)}">'
        ),
        (
            f'<div class="head"><span class="task">{_e(trajectory.task_id or "(no task id)")}</span>'
            f'<span class="badge {outcome}">{_e(badge_text)}</span>{reward}<span class="ids">{_e(ids)}</span></div>'
        ),
        f'<p class="prompt">{_e(trajectory.prompt)}</p>',
    ]
    if trajectory.error:
        parts.append(f'<p class="error-text">{_e(trajectory.error)}</p>')
    if trajectory.final_response is not None:
        parts.append(f'<p class="answer">answer: {_e(trajectory.final_response)}</p>')
    grade = trajectory.grade or {}
    if grade.get("content") and grade.get("content") != "done":
        parts.append(f'<p class="answer">grade: {_e(grade["content"])}</p>')
    # Each step shows the frame its agent saw (the reset frame, then the frame after the step
    # before) with the step's actions drawn on it; the last frame closes the strip.
    seen = trajectory.metadata.get(INITIAL_OBSERVATION_REF)
    frames = []
    for step in trajectory.steps:
        bad = step.status != "ok"
        head = (
            f'<div class="step-head"><span>step {step.index + 1}</span>'
            f'<span class="step-reward">r = {_e(fmt(step.reward, 3))}</span></div>'
        )
        caption = head + f'<div class="actions">{_e(describe_actions(step.actions))}</div>'
        if bad or step.error:
            caption += f'<div class="step-error">{_e(step.status)}{": " + _e(step.error) if step.error else ""}</div>'
        caption += (
            f"<details><summary>CLA JSON</summary><pre>"
            f"{_e(json.dumps(step.actions, ensure_ascii=False, indent=1))}</pre></details>"
        )
        src = images.src(seen)
        size = images.size(seen) if src else None
        overlay = overlay_svg(step.actions, *size) if size else ""
        alt = (
            "reset screenshot"
            if seen == trajectory.metadata.get(INITIAL_OBSERVATION_REF)
            else f"after step {step.index}"
        )
        frames.append(
            _frame(
                src, f"{alt}, with step {step.index + 1}'s action", caption, bad=bad, step=step.index, overlay=overlay
            )
        )
        seen = step.observation_ref or seen
    last = "reset" if not trajectory.steps else "end"
    frames.append(
        _frame(
            images.src(seen),
            "reset screenshot" if last == "reset" else "the last screenshot",
            f'<div class="step-head"><span>{last}</span></div>',
            step=last,
        )
    )
    parts.append(f'<div class="filmstrip">{"".join(frames)}</div></article>')
    return "".join(parts)


# ---------------------------------------------------------------------- the page


def _in_group_order(trajectories: list[Trajectory]) -> list[Trajectory]:
    """Groups in the order their first run started, each group's runs by rollout index."""
    first: dict[str, int] = {}
    for trajectory in trajectories:
        first.setdefault(trajectory.group_id or trajectory.trajectory_id, len(first))
    return sorted(trajectories, key=lambda t: (first[t.group_id or t.trajectory_id], t.rollout_index))


def render_report(
    job: Any,
    *,
    images: ReportImages = "embed",
    base_dir: str | os.PathLike[str] | None = None,
    frame_width: int = 360,
    jpeg_quality: int = 70,
    max_trajectories: int | None = None,
    trajectories: Sequence[Trajectory] | None = None,
    success_threshold: float = 1.0,
    on_progress: Progress | None = None,
) -> str:
    """The report page of ``job`` as HTML text.

    Args:
        job: a :class:`~hud_gym.jobs.Job`.
        images: ``"embed"`` (data URLs, one self-contained file) or ``"link"`` (relative paths
            from ``base_dir``, the directory the page will be written to).
        frame_width: embedded screenshots wider than this are downscaled to it.
        jpeg_quality: JPEG quality of embedded screenshots (1-95).
        max_trajectories: show at most this many trajectory cards (the tables count every run).
        trajectories: the job's trajectories if already loaded.
        success_threshold: as in :meth:`Job.get_analytics`.
        on_progress: ``on_progress(done, total)`` after each trajectory card.

    Raises:
        ValueError: a bad ``images``, ``frame_width``, ``jpeg_quality`` or ``max_trajectories``.
    """
    if images not in ("embed", "link"):
        raise ValueError(f"images must be 'embed' or 'link', got {images!r}")
    if frame_width < 16:
        raise ValueError(f"frame_width must be at least 16 pixels, got {frame_width}")
    if not 1 <= jpeg_quality <= 95:
        raise ValueError(f"jpeg_quality must be in 1..95, got {jpeg_quality}")
    if max_trajectories is not None and max_trajectories < 0:
        raise ValueError(f"max_trajectories must be >= 0, got {max_trajectories}")
    analytics: JobAnalytics = job.get_analytics(success_threshold=success_threshold)
    loaded = _in_group_order(list(trajectories) if trajectories is not None else job.load_trajectories())
    shown = loaded if max_trajectories is None else loaded[:max_trajectories]
    image_source = _Images(images, Path(base_dir or Path.cwd()).absolute(), frame_width, jpeg_quality)
    cards = []
    for done, trajectory in enumerate(shown, 1):
        cards.append(_trajectory_card(trajectory, image_source, success_threshold))
        if on_progress is not None:
            on_progress(done, len(shown))
    counts = {
        o: sum(1 for t in loaded if outcome_of(t, success_threshold) == o) for o in ("success", "failure", "error")
    }
    filters = "".join(
        f'<button type="button" data-filter="{key}"{" class=active" if key == "all" else ""}>{label} ({n})</button>'
        for key, label, n in (
            ("all", "all", len(loaded)),
            ("success", "successes", counts["success"]),
            ("failure", "failed tasks", counts["failure"]),
            ("error", "failed runs", counts["error"]),
        )
    )
    note = (
        f'<p class="note">Showing the first {len(shown)} of {len(loaded)} trajectories.</p>'
        if len(shown) < len(loaded)
        else ""
    )
    ended = job.ended_at
    meta = (
        f"job {_e(job.id)} · created {_e(job.created_at.strftime('%Y-%m-%d %H:%M:%S %Z'))}"
        + (f" · ended {_e(ended.strftime('%Y-%m-%d %H:%M:%S %Z'))}" if ended else "")
        + f" · store {_e(job.home)}"
    )
    nonce = secrets.token_urlsafe(16)
    csp = (
        f"default-src 'none'; img-src data: file: http: https:; style-src 'unsafe-inline'; "
        f"script-src 'nonce-{nonce}'; base-uri 'none'; form-action 'none'"
    )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_e(csp)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(job.name)} · hud-gym report</title><style>{REPORT_CSS}</style></head><body>"
        f'<header class="page"><h1 id="job-name">{_e(job.name)}</h1><div class="meta">{meta}</div></header><main>'
        f"{_summary(job, analytics)}{_job_error(job)}{_settings(job)}{_task_table(analytics)}{_group_table(analytics)}"
        f'<h2 id="trajectories-title">Trajectories ({len(loaded)})</h2><div class="filters">{filters}</div>{note}'
        f'<section id="trajectories">{"".join(cards)}</section></main>'
        '<dialog id="zoom"><img alt=""></dialog>'
        f'<script nonce="{nonce}">{REPORT_JS}</script></body></html>\n'
    )


def default_report_path(job: Any) -> Path:
    """Where a job's report goes by default: ``<store home>/reports/<job id>.html``."""
    return Path(job.home) / "reports" / f"{job.id}.html"


def write_report(job: Any, out: str | os.PathLike[str] | None = None, **options: Any) -> Path:
    """Write the report of ``job`` (see :func:`render_report` for ``options``) to ``out`` (a file,
    or a directory to put ``<job id>.html`` in; default :func:`default_report_path`) and return
    its absolute path."""
    path = Path(out) if out is not None else default_report_path(job)
    if path.is_dir():
        path = path / f"{job.id}.html"
    path = path.absolute()
    path.parent.mkdir(parents=True, exist_ok=True)
    page = render_report(job, base_dir=path.parent, **options)
    partial = path.with_name(f".{path.name}.part")
    partial.write_text(page, encoding="utf-8")
    os.replace(partial, path)
    return path
