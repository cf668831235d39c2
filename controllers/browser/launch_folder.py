"""The private folder of one Chromium launch: what Chromium writes under the user's home and temp
directory lands there, and goes with the launch.

Chromium writes outside its ``--user-data-dir``: crash dumps (Crashpad's database, by default
``$XDG_CONFIG_HOME/chromium/Crash Reports``, a ~150 KB minidump per crashed renderer, and a
``settings.dat`` at every launch), dconf's ``~/.cache/dconf``, NSS's ``~/.pki``, and shared-memory
files ``.org.chromium.Chromium.*`` in ``$TMPDIR`` (Playwright passes ``--disable-dev-shm-usage``)
that a killed browser leaves behind. ``--disable-breakpad`` (Playwright's default) does not stop
Crashpad, and ``--disable-crashpad-for-testing`` leaves the renderers unable to load a page; so
every launch gets its own :class:`LaunchFolder` and :meth:`LaunchFolder.env` points ``HOME``,
``XDG_CONFIG_HOME``, ``XDG_CACHE_HOME``, ``TMPDIR`` and ``BREAKPAD_DUMP_LOCATION`` (where Crashpad
keeps its database) into it (``TMPDIR`` only when short enough: :data:`MAX_TMPDIR`).

Crashpad's handlers (``chrome_crashpad_handler``) are not in the browser's process tree: they
double-fork to pid 1, each in a session of its own. :meth:`LaunchFolder.pids` finds them (and
anything else) by this launch's folder in their command line (``--database=<folder>/crash-dumps``),
so closing the browser ends them too. The folder is a :func:`~hud_gym.controllers.temp_folders.make_temp_folder`
(``hud-gym-chromium-<pid>-<start>-*``): removed with the launch, at interpreter exit, or swept by
the next process after a ``SIGKILL``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

import psutil

from hud_gym.controllers.process_utils import alive
from hud_gym.controllers.temp_folders import make_temp_folder

__all__ = ["LAUNCH_PREFIX", "LaunchFolder"]

LAUNCH_PREFIX = "hud-gym-chromium-"
"""The name prefix of the launch folders in the temp directory."""

MAX_TMPDIR = 107 - len("/org.chromium.Chromium.XXXXXX/SingletonSocket")
"""The longest ``TMPDIR`` Chromium starts with: its singleton socket's path (in a folder it makes
there) must fit a ``sockaddr_un`` (107 bytes). When the launch folder's is longer, the launch
keeps the temp directory it was given, or, when that is too long as well, the system's ``/tmp``."""


class LaunchFolder:
    """One Chromium launch's folder (``<tmp>/hud-gym-chromium-<pid>-<start>-<random>``); see the
    module docstring."""

    def __init__(self) -> None:
        self.path = make_temp_folder(LAUNCH_PREFIX, self)
        for name in ("home", "config", "cache", "tmp", "crash-dumps"):
            (self.path / name).mkdir(mode=0o700)

    @property
    def crash_dumps(self) -> Path:
        """Crashpad's database (``pending/*.dmp``: the minidumps of crashed processes)."""
        return self.path / "crash-dumps"

    def env(self, base: Mapping[str, str], *, keep_config: bool = False) -> dict[str, str]:
        """``base`` (the environment Chromium would get) with the home, config, cache, temp and
        crash-dump locations inside this folder; ``keep_config`` keeps ``base``'s
        ``XDG_CONFIG_HOME`` (a headed display's private GTK settings)."""
        env = {
            **base,
            "HOME": str(self.path / "home"),
            "XDG_CACHE_HOME": str(self.path / "cache"),
            "BREAKPAD_DUMP_LOCATION": str(self.crash_dumps),
        }
        for tmp in (str(self.path / "tmp"), base.get("TMPDIR", "/tmp"), "/tmp"):
            if len(tmp) <= MAX_TMPDIR:  # else Chromium aborts at start ("Socket path too long")
                env["TMPDIR"] = tmp
                break
        if not (keep_config and "XDG_CONFIG_HOME" in base):
            env["XDG_CONFIG_HOME"] = str(self.path / "config")
        return env

    def pids(self) -> set[int]:
        """Every live process of this user whose command line names a path in this folder (the
        launch's Crashpad handlers, which are not the browser's descendants)."""
        inside = f"{self.path}{os.sep}"
        uid = os.geteuid()
        found = set()
        for proc in psutil.process_iter(["cmdline", "uids"]):
            try:
                if proc.info["uids"] is None or proc.info["uids"].real != uid:
                    continue
                cmdline = proc.info["cmdline"] or []
            except psutil.Error:
                continue
            if any(inside in arg for arg in cmdline) and alive(proc.pid):
                found.add(proc.pid)
        return found

    def remove(self) -> None:
        """Remove the folder (idempotent; after the launch's processes are gone)."""
        shutil.rmtree(self.path, ignore_errors=True)
