"""Desktop functions OSWorld examples map onto (the OSWorld suite, :mod:`hud_gym.suites.osworld`, has its own), beyond
the desktop gym's own (:mod:`hud_gym.controllers.ubuntu.functions`).

- setup :func:`download_file`: OSWorld's ``download`` (an http(s) URL to a path in the home);
- evaluate :func:`command_output_check`: OSWorld's ``exact_match`` / ``check_include_exclude``
  over a ``vm_command_line`` result (stdout equal to a text, containing some texts, not others);
- evaluate :func:`file_content_check`: the same checks over a ``vm_file`` result.

They run against ``ctx.controller.desktop`` (an ``UbuntuController``'s desktop API), with its path rules: paths resolve
inside the env's home unless the env allows absolute paths, and are opened through
:class:`~hud_gym.controllers.ubuntu.homefs.HomeFiles` (no link planted in the home leads them out;
what they write is a fresh file given to the sandbox's uid). A download follows the episode's
network rules (:mod:`~hud_gym.controllers.ubuntu.download`: none without the network, never the
host's loopback). Running a command needs ``allow_shell=True`` (or the gym's container); without
it the grade is an error that says so.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hud_gym.controllers.ubuntu.download import MAX_DOWNLOAD_BYTES, download
from hud_gym.controllers.ubuntu.functions import read_task_file
from hud_gym.controllers.ubuntu.homefs import HomeFiles
from hud_gym.evaluation.grade import Grade
from hud_gym.evaluation.registry import FunctionContext, evaluate_function, setup_function

__all__ = ["command_output_check", "download_file", "file_content_check"]

_SHOWN = 200
_MAX_READ_BYTES = 10 * 1024 * 1024


def _short(text: str) -> str:
    return text if len(text) <= _SHOWN else text[:_SHOWN] + f"... ({len(text)} chars)"


def _files(ctx: FunctionContext) -> HomeFiles:
    desktop = ctx.controller.desktop
    return HomeFiles(Path(desktop.state.home), desktop.state.file_owner)


@setup_function("ubuntu")
async def download_file(
    ctx: FunctionContext, url: str, path: str, timeout: float = 60.0, max_bytes: int = MAX_DOWNLOAD_BYTES
) -> dict[str, Any]:
    """Download ``url`` (http or https) to ``path`` in the env's home, creating its parent
    directories; returns ``{"path", "bytes"}``. Only an episode with the network downloads (its
    task asks for it with ``config.network`` on an env made with ``allow_network=True``), never
    from the host's loopback; at most ``max_bytes`` in ``timeout`` seconds
    (:mod:`~hud_gym.controllers.ubuntu.download`).

    Raises:
        ValueError: not an http(s) URL, or a bad bound.
        DownloadRefused: the episode's network rules refuse it (the message names the rule).
        OSError: the download failed (the message names the cause).
    """
    if not isinstance(url, str) or urlsplit(url).scheme.lower() not in ("http", "https"):
        raise ValueError(f"download_file takes an http or https URL, got {_short(str(url))!r}")
    desktop = ctx.controller.desktop
    target = desktop.resolve_path(path)
    network = bool(desktop.state.episode_network)
    own = desktop.own_network() if not network else None
    try:
        size = await asyncio.to_thread(
            download, url, _files(ctx), target, network=network, own_network=own, max_bytes=max_bytes, timeout=timeout
        )
    finally:
        if own is not None:
            os.close(own)
    return {"path": str(target), "bytes": size}


def _check_text(
    text: str, include: list[str] | None, exclude: list[str] | None, expected: str | None
) -> tuple[bool, list[str]]:
    problems = []
    if expected is not None and text != expected:
        problems.append(f"is {_short(text)!r}, expected exactly {_short(expected)!r}")
    missing = [t for t in include or () if t not in text]
    if missing:
        problems.append(f"misses {missing!r}")
    present = [t for t in exclude or () if t in text]
    if present:
        problems.append(f"contains the excluded {present!r}")
    return not problems, problems


@evaluate_function("ubuntu")
async def command_output_check(
    ctx: FunctionContext,
    command: str | list[str],
    include: list[str] | None = None,
    exclude: list[str] | None = None,
    expected: str | None = None,
    timeout: float = 30.0,
) -> Grade:
    """Reward 1 when the stdout of ``command`` (a string runs through ``bash -lc``, a list is the
    argv) equals ``expected`` (when given, exactly), contains every text of ``include`` and none
    of ``exclude``. Needs ``allow_shell=True``; the exit code is reported in ``info``, not graded."""
    desktop = ctx.controller.desktop
    try:
        desktop.require_shell("command_output_check")
    except PermissionError as exc:
        return Grade.error(str(exc))
    code, stdout, stderr = await desktop.run(command, timeout=timeout)
    ok, problems = _check_text(stdout, include, exclude, expected)
    shown = command if isinstance(command, str) else " ".join(command)
    verdict = "passes" if ok else "; ".join(problems)
    return Grade(
        reward=float(ok),
        content=f"output of {shown!r} (exit {code}) {verdict}",
        info={"returncode": code, "stdout": stdout[:2000], "stderr": stderr[:2000], "problems": problems},
    )


@evaluate_function("ubuntu")
def file_content_check(
    ctx: FunctionContext,
    path: str,
    include: list[str] | None = None,
    exclude: list[str] | None = None,
    expected: str | None = None,
) -> Grade:
    """Reward 1 when the text of the file ``path`` equals ``expected`` (when given, exactly),
    contains every text of ``include`` and none of ``exclude``. A missing, swapped or unreadable file
    is the task's failure (:class:`~hud_gym.evaluation.TargetAbsent`)."""
    resolved = ctx.controller.desktop.resolve_path(path, check_links=False)
    text = read_task_file(_files(ctx), path, resolved, _MAX_READ_BYTES)
    ok, problems = _check_text(text, include, exclude, expected)
    verdict = "passes" if ok else "; ".join(problems)
    return Grade(reward=float(ok), content=f"{path!r} {verdict}", info={"path": str(resolved), "problems": problems})
