"""OSWorld's ``config`` / ``postconfig`` steps on the desktop, and the ``osworld_download`` setup function.

Every step runs in the episode's sandbox as its uid or through the desktop's input (never on
the host): ``launch`` / ``open`` start a known desktop app (:data:`OPENERS`, by the file's
suffix) or, with ``allow_shell=True``, the command; ``execute`` / ``command`` run the command in
the sandbox, except OSWorld's ``python -c "import pyautogui; ..."`` input scripts (the save
before grading, a click on the document), which are read, never run: their ``hotkey`` / ``press``
/ ``time.sleep`` / ``click`` / ``doubleClick`` / ``mouseDown`` + ``mouseUp`` calls become the
desktop's key presses and clicks (:func:`pyautogui_input`; OSWorld's 1920x1080 coordinates
scaled to the env's screen); ``sleep`` sleeps (at most
:data:`MAX_SLEEP` seconds); ``activate_window`` waits for the window (at most :data:`WINDOW_WAIT` seconds); ``download`` copies the
URL's file from the cache (:mod:`.files`).
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from pathlib import Path
from typing import Any

from hud_gym.actions import ClickAction, Point, PressAction
from hud_gym.controllers.ubuntu.functions import launch
from hud_gym.controllers.ubuntu.homefs import HomeFiles
from hud_gym.evaluation.registry import FunctionContext, setup_function
from hud_gym.suites.osworld.files import episode_file
from hud_gym.suites.osworld.getters import SAVED_AT
from hud_gym.suites.osworld.scripts import (
    MAX_SLEEP,
    OSWORLD_HOME,
    OSWORLD_SCREEN,
    Click,
    Item,
    home_path,
    pyautogui_input,
)

__all__ = ["OPENERS", "opener_for", "osworld_config", "osworld_download", "run_step"]

WINDOW_WAIT = 60.0
"""The longest ``activate_window`` waits for its window (a cold LibreOffice start on a loaded box)."""

OPENERS: dict[str, str] = {
    **dict.fromkeys((".xlsx", ".xls", ".ods", ".csv"), "libreoffice-calc"),
    **dict.fromkeys((".docx", ".doc", ".odt", ".rtf"), "libreoffice-writer"),
    **dict.fromkeys((".pptx", ".ppt", ".odp"), "libreoffice-impress"),
    **dict.fromkeys((".png", ".jpg", ".jpeg", ".xcf", ".bmp", ".gif", ".tif", ".tiff", ".webp"), "gimp"),
    **dict.fromkeys((".mp4", ".mp3", ".wav", ".avi", ".mkv", ".webm", ".ogg", ".flac", ".mov"), "vlc"),
}
"""The known desktop app that opens a file, by suffix (any other file: the text editor, gedit)."""


def opener_for(path: str) -> str:
    """The known app ``open`` starts on ``path``."""
    return OPENERS.get(Path(path).suffix.lower(), "gedit")


def _script_of(command: Any) -> str | None:
    if isinstance(command, list) and len(command) == 3 and command[0] in ("python", "python3") and command[1] == "-c":
        return str(command[2])
    return None


def _click(controller: Any, click: Click) -> ClickAction:
    """The env's click for a script's ``click`` (its point scaled from OSWorld's screen, kept on the env's)."""
    point = None
    if click.x is not None and click.y is not None:
        width, height = controller.screen_size
        x = round(click.x * width / OSWORLD_SCREEN[0])
        y = round(click.y * height / OSWORLD_SCREEN[1])
        point = Point(x=min(max(x, 0), width - 1), y=min(max(y, 0), height - 1))
    return ClickAction(point=point, pattern=[100] if click.clicks == 2 else None)


async def _play(controller: Any, items: list[Item]) -> None:
    for item in items:
        if isinstance(item, float):
            await asyncio.sleep(item)
        elif isinstance(item, Click):
            await controller.step(_click(controller, item))
        else:
            await controller.step(PressAction(keys=item))


async def _command(ctx: FunctionContext, params: dict[str, Any]) -> None:
    command = params["command"]
    script = _script_of(command)
    items = pyautogui_input(script) if script is not None else None
    controller = ctx.controller
    if items is not None:
        if ["ctrl", "s"] in items:
            ctx.state[SAVED_AT] = time.time()  # the getters wait for the save (``getters.SAVE_WAIT``)
        await _play(controller, items)
        return
    desktop = controller.desktop
    desktop.require_shell("an OSWorld execute step")
    if isinstance(command, list):
        command = [str(a).replace(OSWORLD_HOME, os.fspath(desktop.state.home)) for a in command]
    else:
        command = str(command).replace(OSWORLD_HOME, "$HOME")
    await desktop.run(command, timeout=120.0)  # OSWorld ignores the exit code


def _app_arg(desktop: Any, value: str) -> str:
    """An argument of a launched app: OSWorld's ``/home/user/x`` as ``~/x``, which the launch
    policy resolves in the home; with the shell allowed the arguments pass as they are, and
    nothing expands ``~`` there: the real path in the home."""
    path = home_path(value)
    if path != value and desktop.shell_allowed():
        return str(desktop.resolve_path(path))
    return path


async def _launch(ctx: FunctionContext, params: dict[str, Any]) -> None:
    command = params["command"]
    argv = command if isinstance(command, list) else str(command).split()
    argv = [_app_arg(ctx.controller.desktop, str(a)) for a in argv]
    await launch(ctx, argv[0], argv[1:], wait=False)


async def _open(ctx: FunctionContext, params: dict[str, Any]) -> None:
    path = str(params["path"])
    await launch(ctx, opener_for(path), [_app_arg(ctx.controller.desktop, path)], wait=False)


async def _download(ctx: FunctionContext, params: dict[str, Any]) -> None:
    for item in params["files"]:
        await osworld_download(ctx, str(item["url"]), str(item["path"]))


async def run_step(ctx: FunctionContext, step: dict[str, Any]) -> None:
    """Run one ``config`` / ``postconfig`` step (see the module docstring).

    Raises:
        NotImplementedError: a step type that does not run here (:mod:`.support` lists them).
    """
    kind, params = step.get("type"), step.get("parameters") or {}
    if kind == "sleep":
        await asyncio.sleep(min(float(params.get("seconds", 1)), MAX_SLEEP))
    elif kind in ("execute", "command"):
        await _command(ctx, params)
    elif kind == "launch":
        await _launch(ctx, params)
    elif kind == "open":
        await _open(ctx, params)
    elif kind == "download":
        await _download(ctx, params)
    elif kind == "activate_window":
        name = re.escape(str(params["window_name"])[:500])
        await ctx.controller.desktop.wait_for_window(f"^{name}$" if params.get("strict") else name, WINDOW_WAIT)
    else:
        raise NotImplementedError(f"OSWorld step {str(kind)[:100]!r} does not run here")


@setup_function("ubuntu")
async def osworld_download(ctx: FunctionContext, url: str, path: str) -> dict[str, Any]:
    """OSWorld's ``download``: ``url``'s file (from the cache, the mirror or the network:
    :func:`~hud_gym.suites.osworld.files.cached_file`) written to ``path`` in the env's home,
    a fresh file given to the sandbox's uid. Returns ``{"path", "bytes"}``.

    Raises:
        OSWorldFileMissing: the file is nowhere to be had (a ``setup_error`` naming the URL).
    """
    desktop = ctx.controller.desktop
    target = desktop.resolve_path(home_path(path))
    metadata = (ctx.task.metadata or {}) if ctx.task is not None else {}
    task_id = ctx.task.id if ctx.task is not None else None
    cached = await asyncio.to_thread(
        episode_file, desktop, url, domain=metadata.get("domain"), task_id=task_id, name=target.name
    )
    data = await asyncio.to_thread(cached.read_bytes)
    files = HomeFiles(Path(desktop.state.home), desktop.state.file_owner)
    files.mkdir(target.parent)
    size = await asyncio.to_thread(files.replace, target, [data])
    return {"path": str(target), "bytes": size}


@setup_function("ubuntu")
async def osworld_config(ctx: FunctionContext, steps: list[dict[str, Any]]) -> None:
    """Run an OSWorld task's ``config`` steps, in order (:func:`run_step`)."""
    for step in steps:
        await run_step(ctx, step)
