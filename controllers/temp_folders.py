"""Temporary folders of controllers (a desktop's home and X cookie, a browser's downloads) that do
not outlive the process that made them.

:func:`make_temp_folder` is ``tempfile.mkdtemp`` with the maker's pid and start time in the
folder's name (``hud-gym-ubuntu-<pid>-<start>-<random>``: in the name, not in a file inside, where
an episode may write). The folder is removed by its controller's ``close``, and else when its
owner object is collected or at interpreter exit (``weakref.finalize``). A process killed with
``SIGKILL`` runs neither: the next process that makes a folder of the same kind sweeps the leftovers
(:func:`sweep`): only folders of this user, real directories (never a link), whose pid runs no
more, or runs a process that started at another time (a reused pid). A live process's folder is
never touched.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
import threading
import weakref
from pathlib import Path

import psutil

__all__ = ["make_temp_folder", "owner_of", "sweep"]

_NAME = re.compile(r"(?P<pid>\d+)-(?P<start>\d+)-[^/]+")
_swept: set[str] = set()
_lock = threading.Lock()


def _start_time(pid: int) -> int | None:
    """``pid``'s start time in hundredths of a second (``None``: no such process)."""
    try:
        return round(psutil.Process(pid).create_time() * 100)
    except psutil.Error:
        return None


def owner_of(folder: Path, prefix: str) -> tuple[int, int] | None:
    """``(pid, start time)`` written in the name of ``folder`` (made with ``prefix``), else ``None``."""
    if not folder.name.startswith(prefix):
        return None
    match = _NAME.fullmatch(folder.name[len(prefix) :])
    return (int(match["pid"]), int(match["start"])) if match else None


def sweep(prefix: str, directory: Path | None = None) -> list[Path]:
    """Remove the folders named ``prefix...`` in ``directory`` (the temp directory) whose owning
    process is dead (see the module docstring); returns those removed."""
    base = Path(directory or tempfile.gettempdir())
    removed = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(base):
            owner = owner_of(Path(entry.path), prefix)
            if owner is None or owner[0] == os.getpid() and owner[1] == _start_time(os.getpid()):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
                continue
            if _start_time(owner[0]) == owner[1]:
                continue  # its owner still runs
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


def make_temp_folder(prefix: str, owner: object) -> Path:
    """A new private folder ``<tmp>/<prefix><pid>-<start>-<random>``, removed when ``owner`` is
    collected or at interpreter exit; the first call for a ``prefix`` sweeps dead processes'
    folders first (see the module docstring)."""
    with _lock:
        first = prefix not in _swept
        _swept.add(prefix)
    if first:
        sweep(prefix)
    pid = os.getpid()
    folder = Path(tempfile.mkdtemp(prefix=f"{prefix}{pid}-{_start_time(pid)}-"))
    weakref.finalize(owner, shutil.rmtree, str(folder), True)
    return folder
