"""Commands in a private mount namespace (``unshare -m``, as root): a directory bind-mounted
read-only, or a small tmpfs that fills up. The mounts vanish with the command; the rest of the
machine never sees them."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["can_mount", "run_on_tmpfs", "run_read_only"]

REASON = "needs root and util-linux unshare (a private mount namespace)"


@functools.cache
def can_mount() -> bool:
    """Whether this process may make private mounts."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-m", "true"], capture_output=True, timeout=30).returncode == 0


def run_read_only(directory: Path, argv: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` with ``directory`` read-only (a read-only bind mount over itself)."""
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", script, str(directory), *argv],
        capture_output=True,
        text=True,
        check=False,
        **kwargs,
    )


def run_on_tmpfs(directory: Path, size: str, argv: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` with a fresh tmpfs of ``size`` (``"4m"``) mounted on ``directory``."""
    script = 'mount -t tmpfs -o "size=$1" tmpfs "$0" && shift && exec "$@"'
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", script, str(directory), size, *argv],
        capture_output=True,
        text=True,
        check=False,
        **kwargs,
    )
