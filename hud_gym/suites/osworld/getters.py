"""OSWorld's getters on the desktop: what a metric compares (``result`` / ``expected``).

- ``vm_file`` ``{path, dest, multi, gives}``: a copy of the desktop's file (``None`` when it is
  missing, as OSWorld's), read beneath the env's home without following a link out
  (:class:`~hud_gym.controllers.ubuntu.homefs.HomeFiles`), at most :data:`MAX_FILE_BYTES`;
- ``cloud_file`` ``{path: url, dest, multi, gives}``: the file of a URL, through the cache and
  the mirror (:mod:`.files`);
- ``cache_file`` ``{path}``: a file an earlier getter of this grading stored under that name;
- ``rule`` ``{rules}``: the rules themselves;
- ``gimp_config_file`` ``{file_name, dest}``: GIMP's settings file of that name
  (``~/.config/GIMP/2.10/<file_name>``, a single file name) read as ``vm_file`` reads;
- ``vm_command_line`` ``{command, shell}``: the stdout of a command run in the episode's sandbox
  as its uid (needs ``allow_shell=True``).

Copies go to the grading's own scratch directory (made by the host, named by the getter's
``dest``, reduced to a bounded file name).
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from pathlib import Path
from typing import Any

from hud_gym.controllers.ubuntu.homefs import HomeFiles
from hud_gym.evaluation.registry import FunctionContext
from hud_gym.suites.osworld.files import episode_file
from hud_gym.suites.osworld.metrics_text import MAX_FILE_BYTES
from hud_gym.suites.osworld.scripts import OSWORLD_HOME, home_path

__all__ = ["GIMP_CONFIG_DIR", "SAVED_AT", "SAVE_WAIT", "Getters"]

SAVE_WAIT = 30.0
"""After a keystroke script's Ctrl+S, the longest a ``vm_file`` getter waits for its file to be
written (a save takes longer on a loaded box than OSWorld's ``sleep 0.5`` allows for)."""
SAVED_AT = "osworld_saved_at"
"""``ctx.state`` key: when a keystroke script pressed Ctrl+S (``time.time()``)."""
GIMP_CONFIG_DIR = "~/.config/GIMP/2.10"
"""Where OSWorld's ``gimp_config_file`` getter reads GIMP's settings (GIMP 2.10's own folder)."""
_NAME = re.compile(r"[^A-Za-z0-9._ -]")


def _file_name(dest: Any, index: int) -> str:
    """A bounded, single-component file name for ``dest`` (its suffix kept: metrics read it)."""
    name = _NAME.sub("_", os.path.basename(str(dest)))[-120:] or f"file{index}"
    return name if name not in (".", "..") else f"file{index}"


def _pairs(config: dict[str, Any]) -> tuple[list[Any], list[Any], set[int]]:
    if config.get("multi", False):
        paths, dests = list(config["path"]), list(config["dest"])
    else:
        paths, dests = [config["path"]], [config["dest"]]
    return paths, dests, set(config.get("gives", [0]))


class Getters:
    """The getters of one grading: ``ctx`` is the env's, ``scratch`` the grading's directory."""

    def __init__(self, ctx: FunctionContext, scratch: Path, names: dict[str, str | None]) -> None:
        self.ctx = ctx
        self.scratch = scratch
        self.names = names

    async def get(self, config: Any) -> Any:
        """The state ``config`` (a getter's object) names; ``None`` config gives ``None``."""
        if config is None:
            return None
        kind = config.get("type")
        if kind == "rule":
            return config["rules"]
        if kind == "vm_command_line":
            return await self._command(config)
        if kind == "gimp_config_file":
            return await asyncio.to_thread(self._gimp_config, config)
        if kind in ("vm_file", "cloud_file"):
            return await asyncio.to_thread(self._files, config)
        if kind == "cache_file":
            path = self.scratch / _file_name(config["path"], 0)
            if not path.is_file():
                raise FileNotFoundError(f"cache_file {str(config['path'])[:200]!r} was not stored by a getter")
            return str(path)
        raise NotImplementedError(f"getter {str(kind)[:100]!r} is not supported here")

    async def _command(self, config: dict[str, Any]) -> str:
        desktop = self.ctx.controller.desktop
        desktop.require_shell("the vm_command_line getter")
        command = config["command"]
        if isinstance(command, list):
            command = [str(a).replace(OSWORLD_HOME, os.fspath(desktop.state.home)) for a in command]
        else:
            command = str(command).replace(OSWORLD_HOME, "$HOME")
        _code, stdout, _stderr = await desktop.run(command, timeout=60.0)
        return str(stdout)

    def _files(self, config: dict[str, Any]) -> Any:
        paths, dests, gives = _pairs(config)
        given: list[str | None] = []
        for i, (source, dest) in enumerate(zip(paths, dests, strict=False)):
            target = self.scratch / _file_name(dest, i)
            got = (
                self._vm_file(str(source), target) if config["type"] == "vm_file" else self._cloud(str(source), target)
            )
            if i in gives:
                given.append(got)
        return given[0] if len(given) == 1 else given

    def _wait_for_save(self, files: HomeFiles, resolved: Path) -> None:
        """After a Ctrl+S of the postconfig: until the file is newer than the key press (at most
        :data:`SAVE_WAIT` seconds; a file that is not saved is read as it is)."""
        saved_at = self.ctx.state.get(SAVED_AT)
        if saved_at is None:
            return
        deadline = time.monotonic() + SAVE_WAIT
        while time.monotonic() < deadline:
            modified = files.mtime(resolved)
            if modified is None or modified >= saved_at - 1.0:
                time.sleep(0.5)  # the rename that ends the save, then nothing more
                return
            time.sleep(0.25)

    def _vm_file(self, path: str, target: Path) -> str | None:
        desktop = self.ctx.controller.desktop
        files = HomeFiles(Path(desktop.state.home), desktop.state.file_owner)
        try:
            resolved = desktop.resolve_path(home_path(path), check_links=False)
            self._wait_for_save(files, resolved)
            data = files.read_bytes(resolved, MAX_FILE_BYTES)
        except (OSError, ValueError, PermissionError):
            return None  # missing, not a file, a link out of the home: OSWorld's None (the task fails)
        target.write_bytes(data)
        return str(target)

    def _gimp_config(self, config: dict[str, Any]) -> str | None:
        name = str(config["file_name"])
        if not name or "/" in name or name in (".", "..") or len(name) > 255:
            raise ValueError(f"gimp_config_file: {name[:100]!r} is not a file name")
        return self._vm_file(f"{GIMP_CONFIG_DIR}/{name}", self.scratch / _file_name(config["dest"], 0))

    def _cloud(self, url: str, target: Path) -> str:
        cached = episode_file(
            self.ctx.controller.desktop,
            url,
            domain=self.names.get("domain"),
            task_id=self.names.get("task_id"),
            name=target.name,
        )
        target.write_bytes(cached.read_bytes())
        return str(target)
