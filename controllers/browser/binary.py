"""Which Chromium a browser env runs, found without downloading anything, and with which flags.

:func:`find_chromium` looks, in order, at ``$HUD_GYM_CHROMIUM``, at a browser Playwright has
already installed (``$PLAYWRIGHT_BROWSERS_PATH`` or ``~/.cache/ms-playwright``), then at the
system's Chromium/Chrome. ``playwright install`` is never needed. Every browser is launched with
:data:`LAUNCH_ARGS` (by :mod:`.chromium`, which shares one per process).

Example:
    >>> path = find_chromium()          # doctest: +SKIP
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from hud_gym.errors import HudGymError

__all__ = [
    "CHROMIUM_ENV",
    "LAUNCH_ARGS",
    "SYSTEM_CANDIDATES",
    "UNLIMITED_FRAME_RATE_ARGS",
    "ChromiumNotFoundError",
    "find_chromium",
    "playwright_browsers_dirs",
    "playwright_chromiums",
]

CHROMIUM_ENV = "HUD_GYM_CHROMIUM"
"""Environment variable naming the Chromium/Chrome executable to use."""

LAUNCH_ARGS: tuple[str, ...] = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-translate",
    "--mute-audio",
    # Software compositing in the browser process: one IPC hop less per frame (~3 ms a step).
    "--in-process-gpu",
    # Wheel scrolling lands at once instead of animating over several frames.
    "--disable-smooth-scrolling",
    # No on-device AI model service: without a performance class, Chromium 156 starts an
    # `on_device_model` utility process ~3 min after launch to benchmark the machine for Gemini
    # Nano (seen at 176 s idle; none within 230 s with this). A class given here (1: "error") is
    # taken as measured. A switch, not --disable-features, which would replace Playwright's list.
    "--optimization-guide-performance-class=1",
)
"""Flags every hud-gym Chromium is launched with (Playwright adds its own defaults)."""

UNLIMITED_FRAME_RATE_ARGS: tuple[str, ...] = ("--disable-frame-rate-limit", "--disable-gpu-vsync")
"""Flags that free Chromium from its 60 Hz frame clock, for ``launch_args=`` (opt-in, not default).

A step's frame then comes without waiting for the next vsync (one env at 160x210: ~18 instead of
~32 ms wall per step; 1280x720: 3-6 ms less), but a page that animates (a spinner, a CSS
animation, a ``requestAnimationFrame`` loop) is drawn as fast as the CPU allows while nobody looks:
~1,950 CPU-ms per second, both cores of a 2-core box, against ~80-110 at 60 Hz; and a step costs
more CPU (~31 vs ~23 CPU-ms at 160x210). Worth it only for pages that never animate, one env at a
time (``benchmarks.frame_rate``, ``benchmarks/README.md``)."""

SYSTEM_CANDIDATES: tuple[str, ...] = (
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
)
"""System browsers tried after Playwright's cache, in order."""

# Debian's /usr/bin/chromium is a shell script that execs this binary; launching the binary
# directly saves a shell and keeps the browser's pid the one Playwright started.
_WRAPPED_BINARIES: dict[str, str] = {"/usr/bin/chromium": "/usr/lib/chromium/chromium"}

_INSTALL_HINT = (
    "no Chromium found. Install one without Playwright's downloader: `apt-get install chromium` "
    f"(Debian/Ubuntu), or point {CHROMIUM_ENV} at a Chromium/Chrome executable."
)


class ChromiumNotFoundError(HudGymError, FileNotFoundError):
    """No usable Chromium executable; the message says what to install."""


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _revision(path: Path) -> int:
    """The Playwright revision in ``chromium-1187/...`` (higher is newer)."""
    for part in path.parts:
        match = re.fullmatch(r"chromium(?:_headless_shell)?-(\d+)", part)
        if match:
            return int(match.group(1))
    return -1


def playwright_browsers_dirs() -> list[Path]:
    """Where Playwright keeps downloaded browsers on this machine."""
    dirs = []
    configured = os.environ.get("PLAYWRIGHT_BROWSERS_PATH")
    if configured and configured != "0":
        dirs.append(Path(configured).expanduser())
    elif configured == "0":
        import playwright

        dirs.append(Path(playwright.__file__).parent / "driver" / "package" / ".local-browsers")
    dirs.append(Path.home() / ".cache" / "ms-playwright")
    return list(dict.fromkeys(dirs))


def playwright_chromiums(headless: bool = True) -> list[Path]:
    """Chromium builds Playwright already downloaded, newest first; headless shells first when
    ``headless`` (they render faster and cannot show a window)."""
    full: list[Path] = []
    shells: list[Path] = []
    for root in playwright_browsers_dirs():
        if not root.is_dir():
            continue
        full += [p for p in root.glob("chromium-*/chrome-linux*/chrome") if _is_executable(p)]
        for name in ("headless_shell", "chrome-headless-shell"):
            shells += [p for p in root.glob(f"chromium_headless_shell-*/chrome-*linux*/{name}") if _is_executable(p)]
    full.sort(key=_revision, reverse=True)
    shells.sort(key=_revision, reverse=True)
    return shells + full if headless else full


def find_chromium(headless: bool = True) -> Path:
    """The Chromium executable to launch, found without downloading anything.

    Order: ``$HUD_GYM_CHROMIUM``; a build in Playwright's browser cache; ``/usr/bin/chromium``,
    ``chromium-browser``, ``google-chrome``.

    Raises:
        ChromiumNotFoundError: nothing found (or ``$HUD_GYM_CHROMIUM`` is not an executable).
    """
    configured = os.environ.get(CHROMIUM_ENV)
    if configured:
        path = Path(configured).expanduser()
        if not path.is_absolute():
            found = shutil.which(configured)
            path = Path(found) if found else path
        if not _is_executable(path):
            raise ChromiumNotFoundError(f"{CHROMIUM_ENV}={configured!r} is not an executable file")
        return path
    cached = playwright_chromiums(headless)
    if cached:
        return cached[0]
    for candidate in SYSTEM_CANDIDATES:
        path = Path(candidate)
        if _is_executable(path):
            wrapped = Path(_WRAPPED_BINARIES.get(candidate, candidate))
            return wrapped if _is_executable(wrapped) else path
    raise ChromiumNotFoundError(_INSTALL_HINT)
