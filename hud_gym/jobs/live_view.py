"""Live view of an env (``live_view=True`` or ``HUD_GYM_LIVE_VIEW=1``): where to watch it in ``hud-gym ui``.

An env with a live view is recorded like any env linked to a job (its ``job=``, else the current
job, else a job of its own named ``"live"``, finished when the env closes). At each reset
:class:`LiveView` sets ``env.live_url`` and ``info["live_url"]`` to the env's live page,
``<app>/#/live/env/<env id>``, which shows the env's newest episode step by step as the store
grows, and moves on to the next episode at each reset (one URL for the env's whole life);
``info["live_run_url"]`` is the episode's own page, ``<app>/#/live/<run id>``. At the first reset
it prints the URL (stderr) and logs it (logger ``hud_gym.jobs.live_view``, INFO).

The app's address: a running ``hud-gym ui`` writes it to :data:`UI_ADDRESS_FILE` in the store's
directory when it starts listening (mode 0600: an exposed app's URL carries its token) and
removes it when it stops (:func:`write_ui_address`, :func:`remove_ui_address`). With no app
running, the message gives the command that starts one and the URL it will serve.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hud_gym.jobs.paths import HOME_ENV_VAR, resolve_home

if TYPE_CHECKING:
    from hud_gym.core.env import HudEnv
    from hud_gym.jobs.job import Job
    from hud_gym.jobs.recorder import TrajectoryRecorder

__all__ = [
    "DEFAULT_UI_URL",
    "UI_ADDRESS_FILE",
    "LiveView",
    "remove_ui_address",
    "running_ui_url",
    "ui_hint",
    "write_ui_address",
]

logger = logging.getLogger("hud_gym.jobs.live_view")
logger.addHandler(logging.NullHandler())  # a library logs; the application decides where it goes

UI_ADDRESS_FILE = "ui.json"
DEFAULT_UI_URL = "http://127.0.0.1:8000/"  # what `hud-gym ui` serves by default


def write_ui_address(home: Path, url: str) -> Path:
    """Record that the app of this process serves the store in ``home`` at ``url``."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / UI_ADDRESS_FILE
    partial = path.with_name(f".{UI_ADDRESS_FILE}.{os.getpid()}")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        json.dump({"url": url, "pid": os.getpid()}, file)
    os.replace(partial, path)
    return path


def remove_ui_address(home: Path) -> None:
    """Remove the address file if this process wrote it (another app may have replaced it)."""
    path = home / UI_ADDRESS_FILE
    if _read(path).get("pid") == os.getpid():
        with contextlib.suppress(OSError):
            path.unlink()


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def running_ui_url(home: Path) -> str | None:
    """The URL of a ``hud-gym ui`` serving the store in ``home``, if one is running."""
    data = _read(home / UI_ADDRESS_FILE)
    url = data.get("url")
    if isinstance(url, str) and url.startswith(("http://", "https://")) and _alive(data.get("pid")):
        return url
    return None


def ui_hint(home: Path) -> tuple[str, str | None]:
    """The app's base URL for the store in ``home``, and the command that starts it (``None``
    when an app is running)."""
    url = running_ui_url(home)
    if url is not None:
        return url, None
    command = "hud-gym ui"
    if home != resolve_home(None) or os.environ.get(HOME_ENV_VAR):
        command = f"{HOME_ENV_VAR}={shlex.quote(str(home))} {command}"
    return DEFAULT_UI_URL, command


class LiveView:
    """The env listener behind ``live_view``: after ``recorder`` opened the episode's run, point
    ``env.live_url`` and ``info["live_url"]`` at the env's live page (and ``info["live_run_url"]``
    at the run's); print it at the first reset. The
    ``"live"`` job the env was given of its own (``owned_job``) is finished when the env closes."""

    def __init__(self, recorder: TrajectoryRecorder, owned_job: Job | None = None) -> None:
        self.recorder = recorder
        self.owned_job = owned_job
        self.announced = False

    async def on_reset(
        self, env: HudEnv, observation: dict[str, Any], info: dict[str, Any], options: dict[str, Any]
    ) -> None:
        run_id = self.recorder.trajectory_id
        if run_id is None:  # the run could not be recorded (the recorder warned)
            env.live_url = None
            return
        base, command = await asyncio.to_thread(ui_hint, self.recorder.home)
        env.live_url = info["live_url"] = f"{base}#/live/env/{self.recorder.env_id}"
        info["live_run_url"] = f"{base}#/live/{run_id}"
        if self.announced:
            logger.info("%s: live view of the new episode: %s", env.gym or "env", info["live_run_url"])
            return
        self.announced = True
        job = f"{base}#/job/{self.recorder.job_id}"
        if command is None:
            message = f"hud-gym live view of {env.gym or 'env'}: {env.live_url}  (all its runs: {job})"
        else:
            message = (
                f"hud-gym live view of {env.gym or 'env'}: start the app with `{command}`, "
                f"then open {env.live_url}  (all its runs: {job})"
            )
        print(message, file=sys.stderr, flush=True)
        logger.info(message)

    async def on_step(
        self,
        env: HudEnv,
        action: Any,
        observation: dict[str, Any],
        reward: float | None,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
    ) -> None:
        return None

    async def on_close(self, env: HudEnv) -> None:
        if self.owned_job is not None:
            job, self.owned_job = self.owned_job, None
            with contextlib.suppress(Exception):  # best effort: the job ends at the process's exit anyway
                await asyncio.to_thread(job.finish, "completed", None, only_if_running=True)
