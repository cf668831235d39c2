"""One shared Chromium per process (per set of launch options), leased by the browser envs.

:data:`MANAGER` (a :class:`ChromiumManager`) owns the Playwright driver and the browsers of this
process. It lives on the hud-gym loop thread (:mod:`hud_gym.core.loop`), where every controller
runs: each :class:`~hud_gym.controllers.browser.controller.BrowserController` takes a
:class:`BrowserLease` on start and gives it back on close; the browser is launched on the first
lease and closed (and its processes reaped) when the last lease is returned. A browser that died
is relaunched by the next :meth:`ChromiumManager.acquire`; one that does not start (it crashes at
launch) is a :class:`~hud_gym.controllers.base.ControllerError` (the env's reset then tries once
more with a new controller), and leaves no process running. Which executable, with which flags, is
:mod:`.binary`'s (its names are importable from here as well). Each launch gets its own folder
(:mod:`.launch_folder`) for what Chromium writes under the home and temp directory (crash dumps
included); closing the browser ends its Crashpad handlers and removes the folder.

A headed browser of the ``capture="headed"`` path (:mod:`.headed`) is shared by up to
:data:`~.tiles.TILES_PER_BROWSER` envs whose pages have the same viewport: its key names the
viewport and a ``group`` (the next browser of that viewport once one is full); it is launched on a
private Xvfb (:class:`~.headed.HeadedDisplay`) whose screen is a grid of tiles (:mod:`.tiles`),
stopped with it. Each lease holds one tile (:attr:`BrowserLease.origin`); a released tile is
reused by the next lease; a relaunched browser keeps its leases' tiles.

Example:
    >>> lease = await MANAGER.acquire()  # doctest: +SKIP
    >>> context = await lease.browser.new_context()  # doctest: +SKIP
    >>> await MANAGER.release(lease)     # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psutil
from playwright.async_api import Browser, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.browser.binary import (
    CHROMIUM_ENV,
    LAUNCH_ARGS,
    SYSTEM_CANDIDATES,
    ChromiumNotFoundError,
    find_chromium,
    playwright_browsers_dirs,
    playwright_chromiums,
)
from hud_gym.controllers.browser.headed import HEADED_ARGS, HeadedDisplay
from hud_gym.controllers.browser.launch_folder import LaunchFolder
from hud_gym.controllers.browser.renderers import POLL_S, RendererGuard
from hud_gym.controllers.browser.tiles import TileLayout, tiles_per_browser
from hud_gym.controllers.process_utils import alive, kill_process_tree, process_tree, wait_gone
from hud_gym.controllers.sandbox.limits import ResourceLimits
from hud_gym.core.loop import add_shutdown_hook

__all__ = [
    "CHROMIUM_ENV",
    "LAUNCH_ARGS",
    "MANAGER",
    "SYSTEM_CANDIDATES",
    "BrowserLease",
    "ChromiumManager",
    "ChromiumNotFoundError",
    "find_chromium",
    "playwright_browsers_dirs",
    "playwright_chromiums",
]


async def _watch(guard: RendererGuard) -> None:
    """Poll ``guard`` until cancelled (when its browser is discarded)."""
    while True:
        await asyncio.sleep(POLL_S)
        try:
            await asyncio.to_thread(guard.poll)
        except (OSError, psutil.Error):  # a renderer or group vanished mid-poll: the next poll sees it
            continue


def profile_pids(user_data_dir: str) -> set[int]:
    """Every live process whose command line names ``--user-data-dir=<user_data_dir>``: all the
    processes of one Chromium (browser, zygotes, GPU, utilities, renderers), even after the
    browser process died and its children were re-parented."""
    flag = f"--user-data-dir={user_data_dir}"
    found = set()
    for proc in psutil.process_iter(["cmdline"]):
        try:
            cmdline = proc.info["cmdline"] or []
        except psutil.Error:
            continue
        if flag in cmdline and alive(proc.pid):
            found.add(proc.pid)
    return found


def _user_data_dir(pid: int) -> str | None:
    try:
        for arg in psutil.Process(pid).cmdline():
            if arg.startswith("--user-data-dir="):
                return arg.split("=", 1)[1]
    except psutil.Error:
        pass
    return None


@dataclass(frozen=True)
class BrowserKey:
    """What makes two browsers interchangeable: the executable, headless or not, extra flags; a
    headed-capture browser's pages' viewport (``display``) and which browser of that viewport
    with its number of ``tiles`` (envs), and which browser of that viewport (``group``); the
    ``limits`` of its renderers (:mod:`.renderers`)."""

    executable: str
    headless: bool
    args: tuple[str, ...] = ()
    display: tuple[int, int] | None = None
    tiles: int = 0
    group: int = 0
    limits: ResourceLimits | None = None


@dataclass
class _Entry:
    key: BrowserKey
    browser: Browser | None = None
    pid: int | None = None
    pids: set[int] = field(default_factory=set)
    user_data_dir: str | None = None
    leases: set[int] = field(default_factory=set)
    generation: int = 0
    display: HeadedDisplay | None = None
    tiles: dict[int, int] = field(default_factory=dict)
    """Lease id -> the tile it holds (a headed browser)."""
    guard: RendererGuard | None = None
    guard_task: asyncio.Task[None] | None = None
    folder: LaunchFolder | None = None
    """Where the launch's Chromium writes its home, temp files and crash dumps (:mod:`.launch_folder`)."""

    def free_tile(self, count: int) -> int | None:
        """The lowest tile no lease holds (``None``: all ``count`` held)."""
        held = set(self.tiles.values())
        return next((t for t in range(count) if t not in held), None)


@dataclass(frozen=True)
class BrowserLease:
    """One controller's hold on a shared browser; give it back with :meth:`ChromiumManager.release`.

    Attributes:
        browser: the Playwright browser (create one isolated ``BrowserContext`` per env on it).
        key: which browser this is.
        generation: the launch this lease was taken on (a relaunch after a crash increments it).
        pid: the browser process id (``None`` if it could not be found).
        display: the X display a headed-capture browser draws on (``None``: headless).
        origin: the top-left corner of this lease's tile on that display (headed).
    """

    id: int
    browser: Browser
    key: BrowserKey
    generation: int
    pid: int | None
    display: str | None = None
    origin: tuple[int, int] | None = None


class ChromiumManager:
    """The Playwright driver and the shared browsers of this process; see the module docstring.

    Every method must run on the hud-gym loop thread (the controllers' loop).
    """

    def __init__(self) -> None:
        self._playwright: Playwright | None = None
        self._entries: dict[BrowserKey, _Entry] = {}
        self._lock: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._owner_pid = os.getpid()
        self._ids = itertools.count(1)
        self._hooked = False

    # ----------------------------------------------------------------- state

    def _ensure_loop_state(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._owner_pid != os.getpid() or self._loop is not loop:
            # A forked child or a new loop thread: the parent's browsers are not ours to touch.
            self._playwright = None
            self._entries = {}
            self._owner_pid = os.getpid()
            self._loop = loop
            self._lock = asyncio.Lock()
            self._hooked = False
        if not self._hooked:
            add_shutdown_hook(self.shutdown)
            self._hooked = True
        assert self._lock is not None
        return self._lock

    def pids(self) -> set[int]:
        """Every Chromium process id this manager launched that may still run (for tests)."""
        out: set[int] = set()
        for entry in self._entries.values():
            out |= _entry_pids(entry)
        return out

    def browser_pid(self, key: BrowserKey | None = None) -> int | None:
        """The browser process id of ``key`` (the only browser when ``None``)."""
        entries = [self._entries[key]] if key is not None and key in self._entries else list(self._entries.values())
        for entry in entries:
            if entry.pid is not None:
                return entry.pid
        return None

    @property
    def lease_count(self) -> int:
        """Leases currently held, over all browsers."""
        return sum(len(e.leases) for e in self._entries.values())

    # ----------------------------------------------------------------- leases

    async def acquire(
        self,
        *,
        headless: bool = True,
        executable_path: str | os.PathLike[str] | None = None,
        args: Sequence[str] = (),
        launch_timeout: float = 60.0,
        display: tuple[int, int] | None = None,
        tiles: int | None = None,
        limits: ResourceLimits | None = None,
    ) -> BrowserLease:
        """A lease on the shared browser for these settings, launching (or relaunching a dead)
        browser as needed. With ``display`` (a viewport size), a tile of a headed browser on a
        private Xvfb, shared by up to ``tiles`` envs (default: :func:`~.tiles.tiles_per_browser`; see
        the module docstring). ``limits``: what each renderer may use (:mod:`.renderers`; ``None``: nothing).

        Raises:
            ChromiumNotFoundError: no Chromium to launch.
            ControllerError: the browser did not start (it crashed, or took over ``launch_timeout``
                seconds), or the headed browser's Xvfb did not start; nothing of the attempt is left running.
        """
        lock = self._ensure_loop_state()
        headless = headless and display is None
        executable = str(executable_path) if executable_path else str(find_chromium(headless))
        key = BrowserKey(executable=executable, headless=headless, args=tuple(args), display=display, limits=limits)
        async with lock:
            if display is not None:
                key = self._group_with_a_free_tile(dataclasses.replace(key, tiles=tiles or tiles_per_browser()))
            entry = self._entries.setdefault(key, _Entry(key=key))
            if entry.browser is None or not entry.browser.is_connected():
                await self._discard_browser(entry)
                try:
                    await asyncio.wait_for(self._launch(entry), timeout=launch_timeout)
                except (PlaywrightError, asyncio.TimeoutError) as exc:
                    await self._forget_unleased(entry)
                    reason = (
                        f"took over {launch_timeout} s"
                        if isinstance(exc, asyncio.TimeoutError)
                        else f"failed: {str(exc).splitlines()[0]}"
                    )
                    raise ControllerError(f"Chromium ({executable}) did not start: the launch {reason}") from exc
                except BaseException:
                    await self._forget_unleased(entry)  # a started Xvfb too
                    raise
            assert entry.browser is not None
            lease_id, origin = next(self._ids), None
            if entry.display is not None:
                tile = entry.free_tile(entry.display.layout.tiles)
                assert tile is not None  # the group was chosen for it
                entry.tiles[lease_id] = tile
                origin = entry.display.layout.origin(tile)
            lease = BrowserLease(
                id=lease_id,
                browser=entry.browser,
                key=key,
                generation=entry.generation,
                pid=entry.pid,
                display=entry.display.name if entry.display is not None else None,
                origin=origin,
            )
            entry.leases.add(lease.id)
            return lease

    def _group_with_a_free_tile(self, key: BrowserKey) -> BrowserKey:
        """``key`` with the first ``group`` whose browser has a free tile (or none yet)."""
        for group in itertools.count():
            candidate = dataclasses.replace(key, group=group)
            entry = self._entries.get(candidate)
            if entry is None or len(entry.tiles) < key.tiles:
                return candidate
        raise AssertionError("unreachable")

    async def release(self, lease: BrowserLease) -> None:
        """Give ``lease`` back (idempotent). The last lease of a browser closes it; the last lease
        of the process also stops the Playwright driver, so no process is left behind."""
        lock = self._ensure_loop_state()
        async with lock:
            entry = self._entries.get(lease.key)
            if entry is None or lease.id not in entry.leases:
                return
            entry.leases.discard(lease.id)
            entry.tiles.pop(lease.id, None)
            if not entry.leases:
                await self._discard_browser(entry)
                del self._entries[lease.key]
            if not self._entries:
                await self._stop_playwright()

    async def kill(self, key: BrowserKey | None = None) -> None:
        """Kill the browser's processes at once (a wedged browser); leases stay, and the next
        :meth:`acquire` relaunches."""
        for entry in list(self._entries.values()):
            if key is None or entry.key == key:
                await asyncio.to_thread(kill_process_tree, _entry_pids(entry))

    async def shutdown(self) -> None:
        """Close every browser and the driver (at interpreter exit)."""
        if self._owner_pid != os.getpid():
            return
        for entry in list(self._entries.values()):
            await self._discard_browser(entry)
        self._entries.clear()
        await self._stop_playwright()

    # ----------------------------------------------------------------- internals

    async def _launch(self, entry: _Entry) -> None:
        if self._playwright is None:
            self._playwright = await async_playwright().start()
        key = entry.key
        args = [*LAUNCH_ARGS, *key.args]
        base: Mapping[str, str] = os.environ
        if key.display is not None:
            entry.display = HeadedDisplay(TileLayout(key.display, key.tiles))
            await entry.display.start()
            args += [*HEADED_ARGS, entry.display.window_size_arg()]
            base = entry.display.browser_env()
        entry.folder = LaunchFolder()
        env: dict[str, str | float | bool] = {**entry.folder.env(base, keep_config=key.display is not None)}
        browser = await self._playwright.chromium.launch(
            executable_path=key.executable,
            headless=key.headless,
            args=args,
            env=env,
            handle_sigint=False,
            handle_sigterm=False,
            handle_sighup=False,
        )
        entry.browser = browser
        entry.generation += 1
        entry.pid = None
        try:
            session = await browser.new_browser_cdp_session()
            info = await session.send("SystemInfo.getProcessInfo")
            await session.detach()
            entry.pid = next((int(p["id"]) for p in info.get("processInfo", []) if p.get("type") == "browser"), None)
        except Exception:  # noqa: BLE001  (old Chromium without SystemInfo: fall back to psutil)
            entry.pid = self._find_pid(key.executable)
        entry.pids = process_tree(entry.pid) if entry.pid else set()
        entry.user_data_dir = _user_data_dir(entry.pid) if entry.pid else None
        if key.limits is not None and entry.pid is not None:
            entry.guard = RendererGuard(entry.pid, key.limits)
            entry.guard_task = asyncio.ensure_future(_watch(entry.guard))

    def _find_pid(self, executable: str) -> int | None:
        known = {e.pid for e in self._entries.values() if e.pid is not None}
        name = Path(executable).name
        for proc in psutil.Process().children(recursive=True):
            try:
                cmdline = proc.cmdline()
            except psutil.Error:
                continue
            is_browser = cmdline and Path(cmdline[0]).name == name and not any(a.startswith("--type=") for a in cmdline)
            if is_browser and proc.pid not in known:
                return proc.pid
        return None

    async def _discard_browser(self, entry: _Entry) -> None:
        task, guard, entry.guard_task, entry.guard = entry.guard_task, entry.guard, None, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        browser, entry.browser = entry.browser, None
        if browser is not None:
            try:
                if browser.is_connected():
                    await asyncio.wait_for(browser.close(), timeout=10)
            except Exception:  # noqa: BLE001  (a wedged or dead browser is killed below)
                pass
        pids = await asyncio.to_thread(_entry_pids, entry)
        if pids:
            await asyncio.to_thread(_reap, pids)
        entry.pid = None
        entry.pids = set()
        entry.user_data_dir = None
        folder, entry.folder = entry.folder, None
        if folder is not None:
            await asyncio.to_thread(_reap, folder.pids())  # Crashpad's handlers, not in the tree
            folder.remove()
        display, entry.display = entry.display, None
        if display is not None:
            await display.stop()
        if guard is not None:
            await asyncio.to_thread(guard.close)

    async def _forget_unleased(self, entry: _Entry) -> None:
        """After a failed launch: the entry's processes go, and so do the entry and the driver
        when nothing else holds them."""
        await self._discard_browser(entry)
        if not entry.leases and self._entries.get(entry.key) is entry:
            del self._entries[entry.key]
        if not self._entries:
            await self._stop_playwright()

    async def _stop_playwright(self) -> None:
        playwright, self._playwright = self._playwright, None
        if playwright is not None:
            try:
                await asyncio.wait_for(playwright.stop(), timeout=10)
            except Exception:  # noqa: BLE001  (the driver may already be gone)
                pass


def _entry_pids(entry: _Entry) -> set[int]:
    pids = {p for p in entry.pids if alive(p)}
    if entry.pid is not None:
        pids |= process_tree(entry.pid)
    if entry.user_data_dir:
        pids |= profile_pids(entry.user_data_dir)
    if entry.folder is not None:
        pids |= entry.folder.pids()
    return pids


def _reap(pids: set[int], grace: float = 3.0) -> None:
    """Wait ``grace`` s for ``pids`` to exit after a browser close, then SIGKILL what is left."""
    left = wait_gone(pids, grace)
    if left:
        kill_process_tree(left)


MANAGER = ChromiumManager()
"""The process-wide manager every browser controller uses."""
