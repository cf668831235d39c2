"""What the fault-injection suite kills, and which envs each fault hit.

The killers SIGKILL a real process and wait until it is gone: a Chromium renderer
(:func:`kill_renderer`), the shared Chromium (:func:`kill_browser`), a desktop env's Xvfb or
openbox (:func:`kill_desktop`), a controller server (:func:`kill_server`). Each returns a
:class:`Fault` naming the envs it hit: every env of a killed browser or server, the env of a
killed X server; for a renderer, the envs whose tabs Playwright reports crashed (listeners
attached to every tab of every live browser env just before the kill), so no guess is involved.
Before each kill the running :class:`~fault_processes.ProcessTracker` samples, so what the victim
started is known by pid.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import psutil
from fault_processes import sample_trackers

from hud_gym.controllers.browser.chromium import MANAGER
from hud_gym.controllers.process_utils import alive, wait_gone
from hud_gym.core.env import HudEnv
from hud_gym.core.loop import get_loop_thread

# How long a renderer kill waits for Playwright's crash events (one missed only weakens the checks).
_CRASH_REPORT_S = 2.0


@dataclass
class Fault:
    """One injected fault: what was killed, when, and which envs it hit (by ``id(env)``)."""

    kind: str
    pid: int
    begun: float = 0.0  # monotonic, just before the kill
    done: float = 0.0  # monotonic, once the process is gone
    wall_done: float = 0.0  # time.time() at ``done`` (trajectory steps carry wall-clock times)
    envs: set[int] = field(default_factory=set)
    slots: set[int] = field(default_factory=set)  # vector env indices hit (set by the vector tests)

    def __str__(self) -> str:
        return f"{self.kind} pid {self.pid} at {self.begun:.3f}-{self.done:.3f} hitting {len(self.envs)} env(s)"


def _sigkill(fault: Fault) -> Fault:
    """SIGKILL ``fault.pid`` and wait until it is gone; stamp the fault's times."""
    sample_trackers()  # what the victim started, before it is re-parented
    fault.begun = time.monotonic()
    try:
        os.kill(fault.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    left = wait_gone([fault.pid], 10)
    assert not left, f"{fault.kind} {fault.pid} survived SIGKILL for 10 s"
    fault.done, fault.wall_done = time.monotonic(), time.time()
    return fault


def _hitting(kind: str, pid: int, envs: Iterable[HudEnv]) -> Fault:
    return Fault(kind, pid, envs={id(env) for env in envs})


def _cmdline(pid: int) -> list[str]:
    try:
        return psutil.Process(pid).cmdline()
    except psutil.Error:
        return []


def page_renderers() -> list[int]:
    """The shared Chromium's renderers that can hold a page (not its WebUI ones)."""
    return sorted(
        p for p in MANAGER.pids() if "--type=renderer" in (c := _cmdline(p)) and "--top-chrome-webui" not in c
    )


def browser_envs(envs: Iterable[HudEnv]) -> list[HudEnv]:
    """The envs among ``envs`` whose controller is a live in-process browser controller."""
    from hud_gym.controllers.browser import BrowserController

    return [
        env
        for env in envs
        if isinstance(env.controller, BrowserController) and env.controller.state.browser is not None
    ]


def kill_renderer(rng: random.Random, envs: Iterable[HudEnv]) -> Fault | None:
    """SIGKILL a random page renderer of the shared Chromium; the fault's envs are those whose
    tabs Playwright then reports crashed (``None`` when no renderer runs)."""
    renderers = page_renderers()
    if not renderers:
        return None
    watched = browser_envs(envs)
    fault = Fault("renderer", rng.choice(renderers))
    browser = MANAGER.browser_pid()
    listening = threading.Event()
    listening.set()
    listeners: list[tuple[Any, Callable[[Any], None]]] = []

    async def watch() -> None:
        for env in watched:
            for page in list(env.controller.state.pages):

                def crashed(_page: Any, env_id: int = id(env)) -> None:
                    if listening.is_set():  # a later fault's crash is not this one's
                        fault.envs.add(env_id)

                page.on("crash", crashed)
                listeners.append((page, crashed))

    async def unwatch() -> None:
        for page, crashed in listeners:
            page.remove_listener("crash", crashed)

    runner = get_loop_thread()
    runner.run(watch(), timeout=30)
    _sigkill(fault)
    # Playwright reports the crash to the listeners: wait for the first report, then a little more
    # for other tabs of the same renderer (a renderer holding no tab gets the whole wait).
    deadline = time.monotonic() + _CRASH_REPORT_S
    while not fault.envs and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.3)
    listening.clear()
    runner.run(unwatch(), timeout=30)
    if browser is not None and not alive(browser):
        # Chromium's browser process sometimes crashes (SIGSEGV) when a renderer is killed: then
        # the fault hit every env of that browser too, by now.
        fault.kind = "renderer (and the browser, which crashed)"
        fault.envs |= {id(env) for env in watched}
        fault.done, fault.wall_done = time.monotonic(), time.time()
    return fault


def launching_browsers() -> list[int]:
    """Chromium browser processes of this process's Playwright driver (its children), the one
    still being launched included (``MANAGER`` knows a browser's pid only once it is up)."""
    me, found = os.getpid(), []
    for proc in psutil.Process().children(recursive=True):
        try:
            cmdline = proc.cmdline()
            if (
                "--remote-debugging-pipe" in cmdline
                and not any(a.startswith("--type=") for a in cmdline)
                and psutil.Process(proc.ppid()).ppid() == me
            ):
                found.append(proc.pid)
        except psutil.Error:
            continue
    return found


def kill_browser(envs: Iterable[HudEnv]) -> Fault | None:
    """SIGKILL the shared Chromium's browser process, even while it is being launched (a browser
    that crashes at start): it hits every in-process browser env."""
    pid = MANAGER.browser_pid()
    if pid is None or not alive(pid):
        pid = next(iter(launching_browsers()), None)
    if pid is None:
        return None
    return _sigkill(_hitting("browser", pid, browser_envs(envs)))


def desktop_process(env: HudEnv, which: str) -> int | None:
    """The pid of ``env``'s real Xvfb (``which="xvfb"``) or openbox (``"wm"``): the program
    itself, inside its sandbox's launcher."""
    controller = env.controller
    if controller is None or not hasattr(controller, "desktop"):
        return None
    launcher = controller.desktop.pids().get(which)
    if launcher is None:
        return None
    name = "Xvfb" if which == "xvfb" else "openbox"
    try:
        family = [psutil.Process(launcher), *psutil.Process(launcher).children(recursive=True)]
        return next((p.pid for p in family if p.name() == name), None)
    except psutil.Error:
        return None


def kill_desktop(env: HudEnv, which: str) -> Fault | None:
    """SIGKILL ``env``'s Xvfb or window manager (the program, not its sandbox launcher)."""
    pid = desktop_process(env, which)
    return None if pid is None else _sigkill(_hitting(which, pid, [env]))


def kill_server(gym: str, envs: Iterable[HudEnv]) -> Fault | None:
    """SIGKILL this process's ``controller="subprocess"`` server of ``gym`` (the ``hud-gym serve``
    process only: what it started is the product's to clean up); it hits the envs using it."""
    from hud_gym.controllers.remote.launch import SUBPROCESS

    server = SUBPROCESS.server(gym)
    if server is None or server.pid is None or not alive(server.pid):
        return None
    users = [env for env in envs if env.placement == "subprocess" and env.gym == gym and env.controller is not None]
    return _sigkill(_hitting(f"{gym} server", server.pid, users))
